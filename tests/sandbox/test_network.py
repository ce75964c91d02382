"""Issue 26, items 3 and 10: a confined agent's network.

3. With the network on, the host's abstract unix sockets (X11's `@/tmp/.X11-unix/X0`, a
   `unix:abstract=` D-Bus bus) are out of its reach: Landlock's scope where the kernel has it, else a
   network namespace of its own through pasta or slirp4netns, else nothing runs. The kernel is a
   parameter (`Kernel`), so each way is tried for real on this machine.
10. `sandbox_network = [hosts]`: those hosts, by name, through our proxy, and nothing else; what it
   refuses shows in the run's activity and its record.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import json
import os
import shutil
import socket
import subprocess
import sys
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from acp_tui import AcpSubagentProvider, SubagentRequest, SubagentStopReason
from acp_tui.core.model import NetworkRefusal, NetworkRefused
from acp_tui.policy.hosts import HostPatterns, host_pattern
from acp_tui.process import landlock
from acp_tui.process.group import spawn, survivors, terminate_group
from acp_tui.process.netproxy import HostProxy
from acp_tui.process.network import NO_WAY, Kernel, SandboxNetwork, describe_network
from acp_tui.process.sandbox import SandboxError, confine, failure_message
from acp_tui.process.watchdog import watchdog
from acp_tui.reports.records import result_from, run_record
from acp_tui.settings.schema import AgentPreset
from tests.hostile.support import eventually
from tests.sandbox.network_ways import DENIED, abstract_listener, far_end, tried
from tests.sandbox.support import (
    NETWORK_WAYS,
    TRYING_AGENT,
    User,
    need_bwrap,
    outcomes,
    outside_tmp,
    read_json_line,
    supervise_as,
    tries,
    trying,
)

S = SubagentStopReason


@pytest.fixture
def confined() -> None:
    need_bwrap()


def kernel_for(way: str) -> Kernel:
    """This machine as a kernel that offers the sandbox `way` only; skipped, saying why, when it
    cannot (a skip that ACP_TUI_REQUIRE_SANDBOX=1 makes a failure)."""
    need_bwrap()
    if way == "landlock":
        abi = landlock.abi()
        if abi < landlock.SCOPE_ABI:
            pytest.skip(f"sandbox: this kernel's Landlock ABI is {abi}; the abstract socket scope needs 6")
        return Kernel(abi, ())
    if shutil.which(way) is None:
        pytest.skip(f"sandbox: {way} is not installed (apt install {'passt' if way == 'pasta' else way})")
    return Kernel(0, (way,))


# Host patterns -----------------------------------------------------------------------------------


def test_a_name_matches_that_host_only_and_a_wildcard_every_name_below_it_but_not_itself() -> None:
    hosts = HostPatterns(["api.anthropic.com", "*.OpenAI.com."])
    assert hosts.allows("api.anthropic.com") and hosts.allows("API.Anthropic.COM.")
    assert not hosts.allows("anthropic.com") and not hosts.allows("x.api.anthropic.com")
    assert hosts.allows("api.openai.com") and hosts.allows("a.b.openai.com")
    assert not hosts.allows("openai.com")  # list it too to allow it
    assert not hosts.allows("evilopenai.com") and not hosts.allows("openai.com.evil.net")


def test_an_address_matches_only_when_listed_and_numbers_never_match_a_name() -> None:
    hosts = HostPatterns(["127.0.0.1", "[::1]", "*.example.com"])
    assert hosts.allows("127.0.0.1") and hosts.allows("::1") and hosts.allows("[::1]")
    assert not hosts.allows("127.0.0.2") and not hosts.allows("::ffff:127.0.0.1")
    for spelled in ("127.1", "2130706433", "0x7f.1", "1.2.3.4.5"):  # a resolver's addresses
        assert not hosts.allows(spelled)
    assert not HostPatterns(["*.example.com"]).allows("10.0.0.1")


@pytest.mark.parametrize(
    "bad", ["", "*", "*.", "https://x.com", "x.com:443", "a..b", "a b", "*x.com", "a.*.com"]
)
def test_a_bad_pattern_is_refused(bad: str) -> None:
    with pytest.raises(ValueError, match="not a host name"):
        host_pattern(bad)


LABELS = st.sampled_from(["a", "b", "x", "com", "api", "xn--p1ai"])


@given(
    patterns=st.lists(st.tuples(st.booleans(), st.lists(LABELS, min_size=1, max_size=3)), max_size=4),
    host=st.lists(LABELS, min_size=1, max_size=5),
)
def test_matching_walks_the_labels_as_a_suffix_compare_would(
    patterns: list[tuple[bool, list[str]]], host: list[str]
) -> None:
    texts = [("*." if wild else "") + ".".join(labels) for wild, labels in patterns]
    name = ".".join(host)
    expected = any(name.endswith("." + text[2:]) if text.startswith("*.") else name == text for text in texts)
    assert HostPatterns(texts).allows(name) is expected


# The proxy on its own ------------------------------------------------------------------------------


class Names:
    """A resolver of our own: every name at `address` (127.0.0.1), and what was asked, kept."""

    def __init__(self, address: str = "127.0.0.1") -> None:
        self.asked: list[str] = []
        self.address = address

    async def __call__(self, host: str, port: int) -> list[str]:
        self.asked.append(host)
        return [self.address]


@contextlib.asynccontextmanager
async def proxy_for(
    patterns: list[str], resolved: str = "127.0.0.1", **options: object
) -> AsyncIterator[tuple[int, list, Names]]:
    refused: list[tuple[str, int]] = []
    names = Names(resolved)
    proxy = HostProxy(
        HostPatterns(patterns),
        lambda host, port: refused.append((host, port)),
        resolve=names,
        **options,  # type: ignore[arg-type]
    )
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    await proxy.serve(listener)
    try:
        yield port, refused, names
    finally:
        await proxy.aclose()


async def connect_through(proxy: int, target: str) -> tuple[str, asyncio.StreamReader, asyncio.StreamWriter]:
    reader, writer = await asyncio.open_connection("127.0.0.1", proxy)
    writer.write(f"CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n\r\n".encode())
    status = (await reader.readline()).split()[1].decode()
    while await reader.readline() not in (b"\r\n", b""):
        pass
    return status, reader, writer


async def test_the_proxy_tunnels_an_allowed_name_and_refuses_another_without_resolving_it() -> None:
    listed = ["api.localhost", "*.allowed.localhost"]
    async with far_end() as port, proxy_for(listed) as (proxy, refused, names):
        for target in (f"api.localhost:{port}", f"x.y.allowed.localhost:{port}"):
            status, reader, writer = await connect_through(proxy, target)
            assert status == "200"
            writer.write(b"ping\n")
            assert await reader.readline() == b"pong\n"
            writer.close()
        for target in ("evil.test:443", "allowed.localhost:443", "[::1]:22", "127.0.0.1:22"):
            status, reader, writer = await connect_through(proxy, target)
            assert status == "403"
            assert b"is not a host this agent may reach" in await reader.read()
            writer.close()
        assert refused == [("evil.test", 443), ("allowed.localhost", 443), ("::1", 22), ("127.0.0.1", 22)]
        assert names.asked == ["api.localhost", "x.y.allowed.localhost"]  # never a refused name


async def test_plain_http_goes_on_in_origin_form_without_the_proxys_headers() -> None:
    heads: list[bytes] = []

    async def server(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        heads.append(await reader.readuntil(b"\r\n\r\n"))
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi")
        await writer.drain()
        writer.close()

    far = await asyncio.start_server(server, "127.0.0.1", 0)
    port = far.sockets[0].getsockname()[1]
    async with far, proxy_for(["api.localhost"]) as (proxy, refused, _):
        reader, writer = await asyncio.open_connection("127.0.0.1", proxy)
        writer.write(
            f"GET http://api.localhost:{port}/v1/x?q=1 HTTP/1.1\r\nHost: api.localhost:{port}\r\n"
            "Proxy-Authorization: Basic c2VjcmV0\r\nProxy-Connection: keep-alive\r\n\r\n".encode()
        )
        assert (await reader.read()).endswith(b"\r\n\r\nhi")
        writer.write(b"GET http://other.localhost/ HTTP/1.1\r\n\r\n")  # its connection is closed
        reader, writer = await asyncio.open_connection("127.0.0.1", proxy)
        writer.write(b"GET http://other.localhost/ HTTP/1.1\r\nHost: other.localhost\r\n\r\n")
        assert (await reader.readline()).startswith(b"HTTP/1.1 403")
        writer.close()
    [head] = heads
    lines = head.decode().split("\r\n")
    assert lines[0] == "GET /v1/x?q=1 HTTP/1.1"
    assert f"Host: api.localhost:{port}" in lines and "Connection: close" in lines
    assert not any(line.lower().startswith("proxy-") for line in lines)
    assert refused == [("other.localhost", 80)]


@contextlib.asynccontextmanager
async def recording_server(host: str = "127.0.0.1") -> AsyncIterator[tuple[int, list[bytes]]]:
    """A far end that answers a request's head with 200 `hi`, then keeps what else comes on that
    connection until the proxy closes it: its port, and what each connection brought."""
    seen: list[bytes] = []

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        seen.append(await reader.readuntil(b"\r\n\r\n"))
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi")
        writer.write_eof()  # our answer is whole: the proxy ends the connection on seeing that
        with contextlib.suppress(OSError):  # reset, or closed: all it sent is in
            while chunk := await reader.read(1024):
                seen[-1] += chunk
        writer.close()

    server = await asyncio.start_server(serve, host, 0)
    async with server:
        yield server.sockets[0].getsockname()[1], seen


async def test_plain_http_reaches_the_urls_host_only_whatever_else_the_request_says() -> None:
    """A Host header of another name, a second request pipelined after the first, one smuggled in
    a body: the far end (a server that answers many names) only ever sees one request, for the
    name the proxy allowed, with its body and nothing more."""
    async with recording_server() as (port, seen), proxy_for(["api.localhost"]) as (proxy, refused, _):
        url = f"http://api.localhost:{port}/"
        for request in (
            f"GET {url} HTTP/1.1\r\nHost: evil.test\r\n\r\nGET / HTTP/1.1\r\nHost: evil.test\r\n\r\n",
            f"POST {url} HTTP/1.1\r\nContent-Length: 5\r\n\r\nhelloGET / HTTP/1.1\r\nHost: evil.test\r\n\r\n",
        ):
            reader, writer = await asyncio.open_connection("127.0.0.1", proxy)
            writer.write(request.encode())
            assert (await reader.read()).endswith(b"\r\n\r\nhi")
            writer.close()
    get, post = seen
    assert get.split(b"\r\n")[0] == b"GET / HTTP/1.1" and get.endswith(b"\r\n\r\n")
    assert post.split(b"\r\n")[0] == b"POST / HTTP/1.1" and post.endswith(b"\r\n\r\nhello")
    for head in (get, post):
        hosts = [line for line in head.split(b"\r\n") if line.lower().startswith(b"host:")]
        assert hosts == [f"Host: api.localhost:{port}".encode()]
    assert refused == []


@pytest.mark.parametrize(
    ("head", "status"),
    [
        ("GET {url} HTTP/1.1\nHost: evil.test\n\r\n\r\n", "400"),  # lines a server may split at LF
        ("GET {url} HTTP/1.1\r\nX: a\r\n Host: evil.test\r\n\r\n", "400"),  # a folded line
        ("GET {url} HTTP/1.1\r\nX: a\rHost: evil.test\r\n\r\n", "400"),
        ("GET {url} HTTP/1.1\r\nHost : evil.test\r\n\r\n", "400"),  # no such header name
        ("POST {url} HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: 50\r\n\r\nhello", "400"),
        ("POST {url} HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n", "411"),
        ("GET {url} HTTP/1.1\r\nContent-Length: 1x\r\n\r\n", "400"),
        ("GET {url} HTTP/2.0\r\n\r\n", "400"),
        ("GET {url}\x0bHost:evil.test HTTP/1.1\r\n\r\n", "400"),
    ],
)
async def test_a_request_a_server_could_read_otherwise_is_refused(head: str, status: str) -> None:
    async with recording_server() as (port, seen), proxy_for(["api.localhost"]) as (proxy, _, _):
        reader, writer = await asyncio.open_connection("127.0.0.1", proxy)
        writer.write(head.format(url=f"http://api.localhost:{port}/").encode())
        assert (await reader.readline()).split()[1].decode() == status
        writer.close()
    assert seen == []


@pytest.mark.parametrize(
    ("listed", "resolved", "status"),
    [
        (["api.test"], "127.0.0.1", "403"),  # a listed name whose records point at our loopback
        (["api.test"], "::ffff:127.0.0.1", "403"),
        (["*.test"], "169.254.169.254", "403"),  # a cloud's instance metadata
        (["api.test"], "0.0.0.0", "403"),
        (["api.test", "127.0.0.1"], "127.0.0.1", "200"),  # an address listed may be reached by name
        (["localhost"], "127.0.0.1", "200"),  # what listing it asks for
        (["localhost"], "192.0.2.1", "403"),  # a loopback name leads to a loopback address only
    ],
)
async def test_a_listed_name_never_leads_to_this_machine_unless_it_says_so(
    listed: list[str], resolved: str, status: str
) -> None:
    """As Anthropic's sandbox runtime decides: a name may not resolve to a loopback, link-local,
    unspecified or multicast address (nor this machine's own), unless it names the loopback
    (`localhost`) or that address is listed itself."""
    name = "localhost" if listed == ["localhost"] else "api.test"
    async with far_end() as port, proxy_for(listed, resolved) as (proxy, refused, _):
        said, reader, writer = await connect_through(proxy, f"{name}:{port}")
        if said == "200":
            writer.write(b"ping\n")
            assert await reader.readline() == b"pong\n"
        writer.close()
    assert said == status
    assert refused == ([] if status == "200" else [(name, port)])


async def test_a_listed_name_never_leads_to_an_address_of_this_machine() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        probe.connect(("192.0.2.1", 9))  # no packet is sent: the route says which address is ours
        ours = probe.getsockname()[0]
    if ipaddress.ip_address(ours).is_loopback:
        pytest.skip("this machine has no address but its loopback")
    async with recording_server("0.0.0.0") as (port, seen), proxy_for(["api.test"], ours) as (proxy, _, _):
        said, _, writer = await connect_through(proxy, f"api.test:{port}")
        writer.close()
    assert said == "403" and seen == []


async def test_a_slow_client_is_dropped_and_the_limit_holds_while_others_are_served() -> None:
    async with far_end() as port, proxy_for(["api.localhost"], max_connections=2, head_seconds=0.5) as ends:
        proxy, refused, _ = ends
        slow = await asyncio.open_connection("127.0.0.1", proxy)
        slow[1].write(b"CONNECT api.localhost")  # and never the rest
        status, reader, writer = await connect_through(proxy, f"api.localhost:{port}")
        assert status == "200"  # served while the slow one waits
        over = await asyncio.open_connection("127.0.0.1", proxy)  # a third, at the limit of two
        assert await over[0].read() == b""  # closed at once, nothing said
        assert (await slow[0].readline()).startswith(b"HTTP/1.1 408")  # dropped, not waited for
        writer.write(b"ping\n")
        assert await reader.readline() == b"pong\n"
        huge = await asyncio.open_connection("127.0.0.1", proxy)
        huge[1].write(b"CONNECT api.localhost:1 HTTP/1.1\r\nX: " + b"a" * 40_000 + b"\r\n\r\n")
        assert (await huge[0].readline()).startswith(b"HTTP/1.1 431")
        for end in (slow, over, huge, (reader, writer)):
            end[1].close()
        assert refused == []


# Item 3: the host's abstract sockets ----------------------------------------------------------------


@pytest.mark.usefixtures("confined")
async def test_a_confined_agent_cannot_reach_the_hosts_abstract_sockets_with_the_network_on(
    tmp_path: Path,
) -> None:
    """The attack, as a run: what this kernel gives (Landlock here) keeps the listener out of reach."""
    with abstract_listener() as name:
        plain = await run_steps(trying(sandbox="none"), [("abstract", name)], tmp_path)
        inside = await run_steps(trying(), [("abstract", name)], tmp_path)
    assert plain == ["ok"]
    assert inside in (["error:EPERM"], ["error:ECONNREFUSED"])  # Landlock; or a namespace of its own


EXPECTED = {
    "landlock": ["abstract: errno 1", "host: ok"],  # EPERM: out of its scope
    "pasta": ["abstract: errno 111", "host: ok"],  # ECONNREFUSED: no such socket in its namespace
    "slirp4netns": ["abstract: errno 111", "host: ok"],
}


@pytest.mark.parametrize("way", ["landlock", "pasta", "slirp4netns"])
async def test_each_way_keeps_the_abstract_sockets_out_of_reach_and_the_network_on(way: str) -> None:
    """The attack at the level of a spawn, each way forced by the kernel we say this is."""
    assert (await tried(way, kernel_for(way)))["said"] == EXPECTED[way]


@pytest.mark.parametrize("way", ["landlock", "pasta", "slirp4netns", "hosts"])
def test_as_an_unprivileged_user_each_way_holds_too(unprivileged: User, way: str) -> None:
    kernel = kernel_for(way) if way != "hosts" else Kernel(0, ())
    job = {"way": way, "landlock": kernel.landlock}
    with outside_tmp("acp-tui-user-", owner=unprivileged) as home:
        runner = supervise_as(unprivileged, job, home=home, script=NETWORK_WAYS)
        try:
            said = read_json_line(runner)
        finally:
            runner.kill()
            runner.wait(10)
    if way == "hosts":
        port = said["port"][0]
        assert said["said"] == [f"localhost:{port} 200 pong", f"{DENIED}:443 403"]
        assert said["refused"] == [f"{DENIED}:443"]
    else:
        assert said["said"] == EXPECTED[way]


def test_a_kernel_that_offers_neither_refuses_in_one_line() -> None:
    neither = Kernel(landlock=5, stacks=())
    with pytest.raises(SandboxError) as raised:
        SandboxNetwork(True, kernel=neither)
    assert str(raised.value) == NO_WAY and "\n" not in NO_WAY
    assert describe_network(True, neither).startswith("refused: this kernel can keep the agent")
    SandboxNetwork(False, kernel=neither)  # none at all, or a host list, need neither
    SandboxNetwork(["api.anthropic.com"], kernel=neither)


async def run_steps(config: object, steps: list, cwd: Path) -> list[str]:
    run = await AcpSubagentProvider(config).start(SubagentRequest(tries(*steps), cwd=str(cwd)))  # type: ignore[arg-type]
    result = await run.result()
    assert result.stop_reason is S.COMPLETED, result.error
    return outcomes(result.output)


# Item 10: hosts by name ------------------------------------------------------------------------------


@pytest.mark.usefixtures("confined")
async def test_a_host_list_lets_its_host_through_and_refuses_and_records_the_rest(tmp_path: Path) -> None:
    async with far_end() as port:
        config = trying(sandbox_network=("localhost",))
        watchdog.ensure_started()  # its pipe is ours for good, from the first spawn on
        ours = len(os.listdir("/proc/self/fd"))
        steps = [
            ("tunnel", "localhost", port),
            ("tunnel", "denied.example", 443),
            ("connect", "127.0.0.1", port),  # around the proxy: its loopback is its own
            ("connect", "1.1.1.1", 443),
        ]
        run = await AcpSubagentProvider(config).start(SubagentRequest(tries(*steps), cwd=str(tmp_path)))
        told = [event.refusal async for event in run.events() if isinstance(event, NetworkRefused)]
        result = await run.result()
        assert len(os.listdir("/proc/self/fd")) == ours  # its proxy stopped with it
    assert result.stop_reason is S.COMPLETED, result.error
    assert outcomes(result.output) == ["ok:pong", "refused:403", "error:ECONNREFUSED", "error:ENETUNREACH"]
    assert [(r.host, r.port) for r in result.network_refused] == [("denied.example", 443)]
    assert told == list(result.network_refused) and 0 < told[0].at < result.duration_s
    record = run_record(AgentPreset("t", sys.executable), result, prompt="")
    said = record.model_dump(mode="json")["network_refused"]
    assert said == [{"host": "denied.example", "port": 443, "at": round(told[0].at, 3)}]
    assert result_from(record.model_dump(mode="json")).network_refused == (
        NetworkRefusal("denied.example", 443, round(told[0].at, 3)),
    )


@pytest.mark.usefixtures("confined")
async def test_the_activity_screen_shows_what_the_sandbox_refused(tmp_path: Path) -> None:
    from textual.widgets import Static

    from acp_tui.ui.app import SupervisorApp
    from acp_tui.ui.screens.activity_screen import ActivityScreen
    from tests.ui.helpers import all_finished, settings, wait_until

    steps = [("tunnel", "denied.example", 443), ("tunnel", "denied.example", 443), ("tunnel", "x.test", 80)]
    preset = AgentPreset(
        "t", sys.executable, (TRYING_AGENT,), cwd=str(tmp_path), sandbox="workspace", sandbox_network=()
    )
    app = SupervisorApp(settings(preset, prompt=tries(*steps)))
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.press("enter")
        await wait_until(pilot, all_finished(app))
        await pilot.press("o")
        await wait_until(pilot, lambda: isinstance(app.screen, ActivityScreen))
        counts = str(app.screen.query_one("#counts", Static).render())
        refused = str(app.screen.query_one("#refused", Static).render()).splitlines()
    assert "3 connections refused" in counts
    assert [line.split(" (")[0] for line in refused] == ["refused: denied.example:443", "refused: x.test:80"]
    assert refused[0].endswith(" s)") and "(2 times, first at " in refused[0]
    [record] = app.session.records()
    assert [refusal.host for refusal in record.network_refused] == ["denied.example"] * 2 + ["x.test"]


# Processes and descriptors ----------------------------------------------------------------------------


HOLDS = """
import os, sys
def held(fd):
    try:
        os.fstat(fd)
    except OSError:
        return False
    return True
print([fd for fd in range(3, 1024) if held(fd)], flush=True)
sys.stdin.read()
"""  # says which descriptors it holds beyond stdio, then waits to be ended


@pytest.mark.parametrize("way", ["landlock", "pasta", "slirp4netns", "hosts"])
async def test_nothing_of_the_network_outlives_its_run_and_no_descriptor_of_ours_reaches_the_agent(
    way: str,
) -> None:
    kernel = None if way == "hosts" else kernel_for(way)
    watchdog.ensure_started()  # its pipe is ours for good, from the first spawn on
    ours = len(os.listdir("/proc/self/fd"))
    network = SandboxNetwork(["localhost"] if way == "hosts" else True, kernel=kernel)
    env = network.environ(os.environ)
    confined = confine(sys.executable, ["-c", HOLDS], cwd="/var/tmp", env=env, network=network.way)
    argv = confined.argv
    child = await spawn(
        argv[0], argv[1:], cwd="/var/tmp", env=env, pass_fds=network.pass_fds, preexec=confined.preexec
    )
    network.spawned()
    serving = asyncio.ensure_future(network.serve())  # as the run's task group serves it
    try:
        assert child.process.stdout is not None
        assert await child.process.stdout.readline() == b"[]\n"
        if way in ("pasta", "slirp4netns"):  # its stack runs, one of the run's processes, confined
            stacks = [
                pid
                for pid in survivors(child)
                if Path(f"/proc/{pid}/cmdline").read_text().split("\0")[0] == way
            ]
            assert len(stacks) == 1
            assert "Seccomp:\t2\n" in Path(f"/proc/{stacks[0]}/status").read_text()
    finally:
        await terminate_group(child, term_grace=0.5)
        serving.cancel()
        await asyncio.wait([serving])
        await network.aclose()
    assert survivors(child) == []
    await eventually(lambda: len(os.listdir("/proc/self/fd")) == ours, what="our descriptors closed")


async def test_a_run_that_cannot_start_closes_its_network(tmp_path: Path) -> None:
    config = replace(trying(sandbox_network=("localhost",)), command="/nonexistent/agent")
    ours = len(os.listdir("/proc/self/fd"))
    run = await AcpSubagentProvider(config).start(SubagentRequest("[]", cwd=str(tmp_path)))
    result = await run.result()
    assert result.stop_reason is S.ERROR
    assert len(os.listdir("/proc/self/fd")) == ours


async def test_a_scope_that_cannot_be_applied_ends_the_child_saying_so_before_anything_runs(
    tmp_path: Path,
) -> None:
    kernel = kernel_for("landlock")
    network = SandboxNetwork(True, kernel=kernel)
    network.spawned()  # its ruleset closed already: landlock_restrict_self fails in the child
    marker = tmp_path / "ran"
    confined = confine("touch", [str(marker)], cwd=str(tmp_path), env=os.environ, network=network.way)
    argv = confined.argv
    child = await spawn(argv[0], argv[1:], cwd=str(tmp_path), env=os.environ, preexec=confined.preexec)
    assert child.process.stderr is not None
    said = (await child.process.stderr.read()).decode().splitlines()
    assert await child.wait_exit() == 1 and not marker.exists()
    await terminate_group(child, term_grace=0.5)
    assert failure_message(said) == landlock.FAILED.decode().strip()


@pytest.mark.usefixtures("confined")
def test_the_probe_says_what_the_sandbox_gives_the_network_on_this_kernel() -> None:
    agent = f"trying={sys.executable} {TRYING_AGENT}"
    probe = [sys.executable, "-m", "acp_tui", "probe", "--sandbox", "--agent", agent]
    said = subprocess.run([*probe, "--format", "json"], capture_output=True, text=True, timeout=60)
    assert said.returncode == 0, said.stderr
    assert json.loads(said.stdout)["sandbox_network"] == describe_network(True)
    text = subprocess.run(probe, capture_output=True, text=True, timeout=60).stdout
    assert f"sandbox network: {describe_network(True)}\n" in text
    if landlock.abi() >= landlock.SCOPE_ABI:  # this machine's: Linux 6.18
        assert describe_network(True).startswith("the host's, its abstract unix sockets closed by Landlock")
