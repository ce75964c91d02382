"""The sandbox's network tried for real, in the standard library and acp-tui alone (so that
`python network_ways.py JOB` runs it as another user too): a host's abstract unix socket, an
HTTPS-like server on the host's loopback, and a confined program that tries to reach them.

    python network_ways.py '{"way": "slirp4netns", "landlock": 0}'

prints what `tried(way, kernel)` returns, as one JSON line.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import socket
import sys
import tempfile
from collections.abc import AsyncIterator, Iterator

from acp_tui.process.group import spawn, terminate_group
from acp_tui.process.network import Kernel, SandboxNetwork
from acp_tui.process.sandbox import confine

# Where the host's loopback is seen from a network namespace of its own, through each stack.
HOST_LOOPBACK = {"pasta": "127.0.0.1", "slirp4netns": "10.0.2.2"}
DENIED = "denied.example"

# argv: the abstract socket's name, the host's address and port: what it reached, a line each.
REACH = """
import socket, sys
unix = socket.socket(socket.AF_UNIX)
try:
    unix.connect("\\0" + sys.argv[1]); print("abstract: ok")
except OSError as exc:
    print("abstract: errno", exc.errno)
try:
    socket.create_connection((sys.argv[2], int(sys.argv[3])), timeout=10); print("host: ok")
except OSError as exc:
    print("host: errno", exc.errno)
"""

# argv: hosts and ports to CONNECT to through $HTTPS_PROXY: the status of each (and the far end's
# answer to "ping" when 200).
TUNNEL = """
import os, socket, sys
proxy = os.environ["HTTPS_PROXY"].removeprefix("http://").rsplit(":", 1)
for target in sys.argv[1:]:
    with socket.create_connection((proxy[0], int(proxy[1])), timeout=10) as conn:
        conn.sendall(f"CONNECT {target} HTTP/1.1\\r\\n\\r\\n".encode())
        replies = conn.makefile("rb")
        status = replies.readline().split()[1].decode()
        while replies.readline() not in (b"\\r\\n", b""):
            pass
        if status == "200":
            conn.sendall(b"ping\\n")
            status += " " + replies.readline().decode().strip()
        print(target, status)
"""


@contextlib.contextmanager
def abstract_listener() -> Iterator[str]:
    """A real abstract unix socket of the host, as X11 or a D-Bus bus listens: its name."""
    name = f"acp-tui-test-{os.getpid()}-{id(object())}"
    with socket.socket(socket.AF_UNIX) as server:
        server.bind("\0" + name)
        server.listen()
        yield name


@contextlib.asynccontextmanager
async def far_end() -> AsyncIterator[int]:
    """An HTTPS-like server on 127.0.0.1 (a line in, a line out): its port."""

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(OSError):
            if await reader.readline() == b"ping\n":
                writer.write(b"pong\n")
                await writer.drain()
        writer.close()

    server = await asyncio.start_server(answer, "127.0.0.1", 0)
    async with server:
        yield server.sockets[0].getsockname()[1]


async def run_confined(network: SandboxNetwork, code: str, *args: str) -> list[str]:
    """`python -c code args` confined with `network`, spawned as a run spawns it: what it printed
    (its stderr, when it failed)."""
    env = network.environ(os.environ)
    cwd = tempfile.mkdtemp(prefix="acp-tui-ways-")  # a folder of its own: never one holding a home
    confined = confine(sys.executable, ["-c", code, *args], cwd=cwd, env=env, network=network.way)
    argv = confined.argv
    child = await spawn(
        argv[0], argv[1:], cwd=cwd, env=env, pass_fds=network.pass_fds, preexec=confined.preexec
    )
    network.spawned()
    serving = asyncio.ensure_future(network.serve())  # as the run's task group serves it
    try:
        assert child.process.stdout is not None and child.process.stderr is not None
        out, err = await asyncio.gather(child.process.stdout.read(), child.process.stderr.read())
        said = out if await child.wait_exit() == 0 else err
        return said.decode().splitlines()
    finally:
        await terminate_group(child, term_grace=0.5)
        serving.cancel()
        await asyncio.wait([serving])
        await network.aclose()
        os.rmdir(cwd)


async def tried(way: str, kernel: Kernel) -> dict[str, list[str]]:
    """`way` (`landlock`, a stack's name, or `hosts`): for the network on, whether the host's
    abstract socket and loopback server were reached; for a host list (`localhost`), what the proxy
    let through and what it refused."""
    refused: list[str] = []
    async with far_end() as port:
        if way == "hosts":
            hosts = SandboxNetwork(["localhost"], on_refused=lambda host, to: refused.append(f"{host}:{to}"))
            said = await run_confined(hosts, TUNNEL, f"localhost:{port}", f"{DENIED}:443")
        else:
            with abstract_listener() as name:
                where = HOST_LOOPBACK.get(way, "127.0.0.1")
                said = await run_confined(SandboxNetwork(True, kernel=kernel), REACH, name, where, str(port))
    return {"said": said, "refused": refused, "port": [str(port)]}


if __name__ == "__main__":
    job = json.loads(sys.argv[1])
    stacks = () if job["way"] in ("landlock", "hosts") else (job["way"],)
    print(json.dumps(asyncio.run(tried(job["way"], Kernel(job["landlock"], stacks)))), flush=True)
