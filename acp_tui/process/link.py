"""The near end of a link: an agent started on the far side of a carrier (ssh, docker, podman,
kubectl) by our shim (`acp_tui.process.shim`), held here as the same `Child` a local spawn gives
(its `far` is the `Link`; `runs.child.RemoteCarrier` is the carrier that starts it).

The carrier's client is our child like any (its own group, our marks, the watchdog ends it if we
die); the agent is the shim's. What we hold:
- `stdin`, a writer that frames what the run writes (`d N` + the bytes), so the agent reads it byte
  for byte, and lets heartbeats (`h`, every HEARTBEAT_EVERY seconds) and the end (`k GRACE`) pass
  beside;
- `stderr`, the far side's stderr less the shim's own lines (ready, failed, exit), which tell us
  the far cwd, the agent's exit code and how its group ended, and whether the link was ever up.
The agent's stdout is the client's, as it is. `serve()`, in the task group of whoever holds the
child, reads those lines and sends the heartbeats while the client lives.

Why the far side ends on its own: when we die or the link drops, nothing of ours can reach it, so
the shim ends the agent's group at its stdin's end, on a hangup, or at a silence of SILENCE seconds
(MISSED_BEATS heartbeats: the link is cut). Ending a run from here: `k` with the term grace (the
shim sends SIGTERM, then SIGKILL), then the client's exit is awaited for the grace and LINK_MARGIN
(the round trip); a link that does not answer is ended here, which the shim hears as its stdin's
end.
"""

from __future__ import annotations

import ast
import asyncio
import contextlib
import dataclasses
import importlib.util
import json
import os
import secrets
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from acp_tui.process.carriers import client_command
from acp_tui.process.confined import SandboxSpec
from acp_tui.process.environment import child_environment
from acp_tui.process.exit_cause import spawn_error_message
from acp_tui.process.group import READ_SIZE, Child, spawn
from acp_tui.process.network import describe_network
from acp_tui.process.shim import DATA, END_OF_INPUT, HEARTBEAT, KILL, STATUS, bootstrap
from acp_tui.settings.remote import Remote, RemoteError, parse_remote

HEARTBEAT_EVERY = 1.0  # seconds between two heartbeats
MISSED_BEATS = 5  # heartbeats missed in a row that end the agent over there (the link is gone)
SILENCE = HEARTBEAT_EVERY * MISSED_BEATS  # seconds without a frame, as the shim counts them
LINK_MARGIN = 1.0  # what a word to the far side and its answer may take, beyond the graces
SHIM_SOURCE = Path(__file__).with_name("shim.py")
# The far side scrubs its own environment by our rule and says a failed start in our words, with
# our code; the sandbox is ours too.
ALWAYS = ("acp_tui.process.environment", "acp_tui.process.exit_cause", "acp_tui.process.watchdog")
CONFINING = ("acp_tui.process.sandbox", "acp_tui.process.network")
FAR_HOST_LIST = (
    "sandbox: a list of hosts (sandbox_network) needs acp-tui's proxy, which does not run on the "
    "far side: set sandbox_network = true or false for a remote agent"
)


class LinkFailed(Exception):
    """The link failed before the agent ran: the message says where and why."""


def describe_far_network(network: bool | Sequence[str]) -> str:
    """What a confined agent on the far side gets of the network (`acp-tui probe --sandbox`)."""
    if network is True:
        return "the far side's, its abstract unix sockets closed by Landlock (ABI 6 there), else refused"
    if network is False:
        return describe_network(False)
    return "refused: " + FAR_HOST_LIST.removeprefix("sandbox: ")


async def spawn_far(
    url: str,
    options: Sequence[str],
    argv: Sequence[str],
    *,
    cwd: str | None,
    env: Mapping[str, str],
    sandbox: SandboxSpec | None,
    connect_timeout: float,
    term_grace: float,
) -> Child:
    """Start `argv` on the far side of `url`, in `cwd` (None: the login's home), its `env` laid
    over the far side's scrubbed environment, confined there by `sandbox`. Raises LinkFailed when
    that cannot be asked for (a bad URL, a host list) or the carrier's client cannot start here."""
    try:
        remote = parse_remote(url)
    except RemoteError as exc:
        raise LinkFailed(str(exc)) from None
    nonce = secrets.token_hex(16)
    header: dict[str, Any] = {
        "argv": list(argv),
        "cwd": cwd,
        "env": dict(env),
        "nonce": nonce,
        "silence": SILENCE,
        "term_grace": term_grace,
        "sandbox": None,
        "modules": shipped(*ALWAYS),
    }
    if sandbox is not None:  # confined over there by the same code, or not started
        if not isinstance(sandbox.network, bool):
            raise LinkFailed(f"{remote.where}: {FAR_HOST_LIST}")
        header["sandbox"] = {**dataclasses.asdict(sandbox), "git_dirs": dict(sandbox.git_dirs)}
        header["modules"] = shipped(*ALWAYS, *CONFINING)
    child = await _client(remote, options, connect_timeout)
    return dataclasses.replace(child, far=Link(remote, child, nonce, header))


async def open_far(
    url: str, options: Sequence[str], header: dict[str, Any], *, connect_timeout: float
) -> Child:
    """The shim started over there with `header` for a server of ours (`serve`): its stdin and
    stdout are ours as they are. Raises LinkFailed when the client cannot start here."""
    child = await _client(parse_remote(url), options, connect_timeout)
    assert child.process.stdin is not None
    child.process.stdin.write(_shim_and(header))
    return child


async def _client(remote: Remote, options: Sequence[str], connect_timeout: float) -> Child:
    """The carrier's client, running our bootstrap over there. It gets our environment scrubbed,
    like any child: nothing of an agent's own travels in it."""
    argv = client_command(remote, options, bootstrap(), connect_timeout=connect_timeout)
    try:
        return await spawn(argv[0], argv[1:], cwd=os.getcwd(), env=child_environment({}))
    except OSError as exc:
        raise LinkFailed(spawn_error_message(exc, argv[0], os.getcwd())) from None


def _shim_and(header: dict[str, Any]) -> bytes:
    """What the bootstrap reads first: the shim's source, then the header (each a length line and
    the bytes)."""
    source = SHIM_SOURCE.read_bytes()
    body = json.dumps(header).encode()
    return b"%d\n" % len(source) + source + b"%d\n" % len(body) + body


def shipped(*roots: str) -> dict[str, str]:
    """The sources of `roots` and of every module of ours they import when imported (their
    top-level imports, TYPE_CHECKING's left out), for the shim to import on the far side."""
    found: dict[str, str] = {}
    todo = list(roots)
    while todo:
        name = todo.pop()
        spec = _spec(name)
        if name in found or spec is None or spec.origin is None:
            continue
        found[name] = source = Path(spec.origin).read_text(encoding="utf-8")
        todo.extend(_imported(ast.parse(source).body))
    return found


def _imported(body: list[ast.stmt]) -> list[str]:
    """Our modules a module's top level imports (`from acp_tui.x import y`: x.y when a module)."""
    names: list[str] = []
    for node in body:
        if isinstance(node, ast.If) and "TYPE_CHECKING" not in ast.unparse(node.test):
            names += _imported([*node.body, *node.orelse])
        elif isinstance(node, ast.Try):
            names += _imported(node.body)
        elif isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.append(node.module)
            names += [f"{node.module}.{alias.name}" for alias in node.names]
    return [name for name in names if name.split(".")[0] == "acp_tui" and _spec(name) is not None]


def _spec(name: str) -> Any:
    """The module's spec, or None when `name` is no module (a class imported from one)."""
    try:
        return importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None


def _framed(data: bytes) -> bytes:
    return DATA + b" %d\n" % len(data) + data


class _FramedWriter:
    """The agent's stdin as the run sees it (a StreamWriter's write, drain, close)."""

    def __init__(self, pipe: asyncio.StreamWriter) -> None:
        self._pipe = pipe
        self._closed = False

    def write(self, data: bytes) -> None:
        if data and not self._closed:
            self._pipe.write(_framed(data))

    async def drain(self) -> None:
        await self._pipe.drain()

    def close(self) -> None:
        """The agent's stdin ends; the link stays up, for heartbeats and the end."""
        if not self._closed:
            self._closed = True
            self.send(END_OF_INPUT + b"\n")

    def send(self, frame: bytes) -> None:
        with contextlib.suppress(Exception):  # a link that is gone is told nothing
            if not self._pipe.is_closing():
                self._pipe.write(frame)


class Link:
    """One agent on the far side: its stdin and stderr, its state as the shim tells it, its end."""

    def __init__(self, remote: Remote, client: Child, nonce: str, header: dict[str, Any]) -> None:
        process = client.process
        assert process.stdin and process.stderr
        self.remote = remote
        self._client = client
        self.stdin = _FramedWriter(process.stdin)
        self.stderr = asyncio.StreamReader(limit=1 << 20)
        self._marker = STATUS + nonce.encode() + b" "
        self.cwd: str | None = None  # the agent's, once it runs
        self.returncode: int | None = None  # the agent's, once its group is gone
        self.ended_by: str | None = None
        self.failed: str | None = None  # the shim could not start the agent: why
        self.last_line = ""  # the last line of the far side's stderr (the client's own, at a failure)
        self._ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._said_all = asyncio.Event()  # the far side's stderr reached its end
        process.stdin.write(_shim_and(header))

    async def serve(self) -> None:
        """The far side's words read and the heartbeats sent, while the client lives."""
        assert self._client.process.stderr is not None
        await asyncio.gather(self._read_stderr(self._client.process.stderr), self._beat())

    async def ready(self) -> str:
        """The agent's cwd once it runs on the far side; `LinkFailed` when it never will (the shim
        said why, or the client ended: its stderr ends with it)."""
        await asyncio.shield(self._ready)
        if self.cwd is None:
            with contextlib.suppress(TimeoutError):  # its last words and its end first
                await asyncio.wait_for(self._said_all.wait(), LINK_MARGIN)
            await self._client.wait_exit(LINK_MARGIN)
            raise LinkFailed(self.failure() or f"could not reach {self.remote.where}")
        return self.cwd

    def failure(self) -> str | None:
        """Why the run broke, when it is the link's doing: the agent could not start there, the
        far side could not be reached, or the link was lost; None when the agent ended there."""
        if self.failed is not None:
            return f"{self.remote.where}: {self.failed}"
        if self.returncode is not None or self._client.returncode is None:
            return None
        said = f": {self.last_line}" if self.last_line else f" ({self._client_ended()})"
        if self.cwd is None:
            return f"could not reach {self.remote.where}{said}"
        return f"lost the link to {self.remote.where}{said}"

    def unreached(self, timeout: float) -> str | None:
        """Why a handshake timed out, when the link never came up."""
        if self.cwd is not None:
            return None
        said = f": {self.last_line}" if self.last_line else ""
        return f"could not reach {self.remote.where} within {timeout:g} s{said}"

    def _client_ended(self) -> str:
        code = self._client.returncode
        return (
            f"{self.remote.client} was killed by signal {-code}"
            if code and code < 0
            else (f"{self.remote.client} exited with code {code}")
        )

    async def end(self, *, term_grace: float, exit_grace: float, on_step: Callable[[str], None]) -> str:
        """End the agent's group on the far side (see the module's doc); how it ended there:
        `exit`, `sigterm` or `sigkill`. The client here is ended by the caller afterwards."""
        client = self._client
        if exit_grace > 0 and await client.wait_exit(exit_grace + LINK_MARGIN) is not None:
            return self._how()
        if client.returncode is None:
            on_step("sigterm")
            self.stdin.send(KILL + b" %r\n" % term_grace)
            await client.wait_exit(term_grace + LINK_MARGIN)
        how = self._how()
        if how == "sigkill":
            on_step("sigkill")
        return how

    def _how(self) -> str:
        """How the far side said its group ended; a link that said nothing was lost (the shim ends
        what it holds then, by itself)."""
        return self.ended_by or "sigkill"

    async def _beat(self) -> None:
        while self._client.returncode is None:
            self.stdin.send(HEARTBEAT + b"\n")
            await self._client.wait_exit(HEARTBEAT_EVERY)

    async def _read_stderr(self, source: asyncio.StreamReader) -> None:
        """The far side's stderr, passed on less the shim's lines."""
        pending = b""
        marker = self._marker
        try:
            while chunk := await source.read(READ_SIZE):
                pending += chunk
                while (start := pending.find(marker)) >= 0:
                    end = pending.find(b"\n", start)
                    if end < 0:
                        break
                    self._pass(pending[:start])
                    self._hear(pending[start + len(marker) : end])
                    pending = pending[end + 1 :]
                else:
                    keep = _partial_marker(pending, marker)
                    self._pass(pending[: len(pending) - keep])
                    pending = pending[len(pending) - keep :]
            self._pass(pending)
        finally:
            self.stderr.feed_eof()
            self._said_all.set()
            if not self._ready.done():
                self._ready.set_result(None)

    def _pass(self, data: bytes) -> None:
        if not data:
            return
        self.stderr.feed_data(data)
        lines = [line for line in data.decode("utf-8", "replace").splitlines() if line.strip()]
        if lines:
            self.last_line = lines[-1].strip()[:300]

    def _hear(self, line: bytes) -> None:
        word, _, rest = line.partition(b" ")
        try:
            said = json.loads(rest)
        except ValueError:
            return
        if word == b"ready":
            self.cwd = str(said.get("cwd"))
        elif word == b"failed":
            self.failed = str(said.get("message"))
        elif word == b"exit":
            code = said.get("code")
            self.returncode = code if isinstance(code, int) else None
            self.ended_by = str(said.get("ended_by"))
        if word in (b"ready", b"failed") and not self._ready.done():
            self._ready.set_result(None)


def _partial_marker(data: bytes, marker: bytes) -> int:
    """How many bytes at the end of `data` could begin the marker (held back for the next read)."""
    for size in range(min(len(marker) - 1, len(data)), 0, -1):
        if marker.startswith(data[-size:]):
            return size
    return 0
