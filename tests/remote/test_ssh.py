"""Agents over ssh, for real: Debian's sshd started here, a key and an unprivileged user made here,
our shim on the far side (see tests/remote/support.py). No fake ssh anywhere."""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from acp_tui import AcpProviderConfig, AcpSubagentProvider, SubagentRequest
from acp_tui.core.model import OutputDelta, StderrLine, SubagentStopReason
from acp_tui.process import shim
from acp_tui.process.link import HEARTBEAT_EVERY, MISSED_BEATS, SILENCE
from tests.hostile.support import eventually
from tests.remote.support import (
    FAR_CREDENTIAL,
    FarHost,
    Netns,
    agents_toml,
    all_cmdlines,
    await_gone,
    far_agents,
    far_processes,
    far_user,
    set_link,
    sigkill_acp_tui_amid,
    silence,
)
from tests.sandbox.procs import alive, main_thread_exited

CONTRACT_BOUND = 10.0  # the "within 10 s": the far side's group gone after a crash or a cut


def far_config(host: FarHost, *options: str, **fields: Any) -> AcpProviderConfig:
    """The scripted agent on the far side, with `options` (see tests/scripted_agent.py)."""
    return AcpProviderConfig(
        command="python3",
        args=[host.agent("scripted_agent.py"), *options],
        remote=host.url,
        remote_options=host.options,
        term_grace=0.3,
        cancel_grace=0.5,
        **fields,
    )


async def started(config: AcpProviderConfig) -> Any:
    return await AcpSubagentProvider(config).start(SubagentRequest(prompt="hi"))


async def first_chunk(run: Any) -> list[Any]:
    """The run's events up to its first chunk of answer."""
    seen = []
    async for event in run.events():
        seen.append(event)
        if isinstance(event, OutputDelta):
            return seen
    raise AssertionError(f"the run ended without a chunk: {seen}")


def far_file(host: FarHost, name: str) -> Path:
    """A path in the far user's home, for the agent to write (read back here, as root)."""
    path = host.home / name
    path.unlink(missing_ok=True)
    return path


async def test_the_answer_streams_and_stderr_comes_back(far_host: FarHost) -> None:
    # Chunks further apart than the transport's TEXT_HOLD: how many arrive joined is up to timing.
    options = ("chunks=5", "delay=0.2", "text=one two three four five", "stderr=hello from afar")
    run = await AcpSubagentProvider(far_config(far_host, *options)).start(SubagentRequest(prompt="hi"))
    events = [event async for event in run.events()]
    result = await run.result()
    assert result.stop_reason is SubagentStopReason.COMPLETED, result.error
    assert result.output == "one two three four five"
    streamed = [e.text for e in events if isinstance(e, OutputDelta)]
    assert len(streamed) > 1 and "".join(streamed) == result.output  # in pieces, as it was sent
    assert StderrLine("hello from afar") in events
    assert result.exit_code == 0 and result.ended_by == "exit"
    assert run.cwd == far_user().pw_dir  # no remote_cwd: the login's home, as the far side said
    assert far_host.last_end() == {"why": "exit", "ended_by": "exit", "code": 0}


async def test_remote_cwd_is_the_agents_cwd(far_host: FarHost) -> None:
    dump = far_file(far_host, "env.json")
    config = far_config(far_host, f"env_dump={dump}", cwd="/tmp")
    run = await AcpSubagentProvider(config).start(SubagentRequest(prompt="hi"))
    result = await run.result()
    assert result.stop_reason is SubagentStopReason.COMPLETED, result.error
    assert json.loads(dump.read_text())["cwd"] == "/tmp" == run.cwd


async def test_env_travels_inside_the_channel_scrubbed_and_in_no_argv(
    far_host: FarHost, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = "preset-secret-9f3b2c"
    monkeypatch.setenv("LOCAL_API_TOKEN", "local-secret-77aa")  # ours: reaches neither side
    dump = far_file(far_host, "env.json")
    config = far_config(far_host, f"env_dump={dump}", "forever=1", env={"PRESET_API_KEY": secret})
    run = await AcpSubagentProvider(config).start(SubagentRequest(prompt="hi"))
    try:
        await first_chunk(run)
        cmdlines = all_cmdlines()
        client_environ = Path(f"/proc/{run.pid}/environ").read_bytes()
    finally:
        await run.dispose()
    assert not [line for line in cmdlines if secret.encode() in line or b"local-secret" in line]
    assert b"local-secret" not in client_environ and secret.encode() not in client_environ
    env = json.loads(dump.read_text())["env"]
    assert env["PRESET_API_KEY"] == secret  # explicit: it travels
    assert FAR_CREDENTIAL[0] not in env  # the far side's own credential is scrubbed, as a local one
    assert "LOCAL_API_TOKEN" not in env


async def test_cancel_asks_first_then_ends_the_far_group(far_host: FarHost) -> None:
    """The agent runs behind a wrapper (its grandchild holds the pipes): cancel sends
    session/cancel over the link, then the whole group on the far side is gone."""
    record = far_file(far_host, "received.jsonl")
    config = far_config(far_host, "forever=1", "wrapper=1", "on_cancel=ignore", f"record={record}")
    run = await AcpSubagentProvider(config).start(SubagentRequest(prompt="hi"))
    await first_chunk(run)
    assert len(far_agents()) == 2  # the wrapper and its grandchild
    await run.dispose("cancelled by the test")
    result = await run.result()
    assert result.stop_reason is SubagentStopReason.ABORTED
    assert result.error == "cancelled by the test"
    assert far_agents() == []  # gone when dispose returns
    methods = [json.loads(line).get("method") for line in record.read_text().splitlines()]
    assert "session/cancel" in methods  # cooperative first
    assert far_host.last_end()["why"] == "kill-line"  # then our word to end the group there


async def test_an_agent_deaf_to_sigterm_is_killed_on_the_far_side(far_host: FarHost) -> None:
    config = far_config(far_host, "forever=1", "ignore_term=1", "on_cancel=ignore")
    run = await AcpSubagentProvider(config).start(SubagentRequest(prompt="hi"))
    await first_chunk(run)
    await run.dispose()
    result = await run.result()
    assert result.ended_by == "sigkill"
    assert far_agents() == []
    assert far_host.last_end() == {"why": "kill-line", "ended_by": "sigkill", "code": -signal.SIGKILL}


async def test_a_daemon_whose_main_thread_exited_is_ended_on_the_far_side(far_host: FarHost) -> None:
    """It left the group and looks like a zombie to /proc while its other thread runs: the shim
    still finds it by its mark, and ends it with the run."""
    pid_file = far_file(far_host, "daemon.pid")
    config = far_config(far_host, "forever=1", "daemon=leaderless", f"daemon_pid={pid_file}")
    run = await AcpSubagentProvider(config).start(SubagentRequest(prompt="hi"))
    await first_chunk(run)
    await eventually(lambda: pid_file.exists() and pid_file.read_text() != "", what="the daemon's pid")
    daemon = int(pid_file.read_text())
    await eventually(lambda: main_thread_exited(daemon) and alive(daemon), what="its main thread's exit")
    await run.dispose()
    assert (await run.result()).stop_reason is SubagentStopReason.ABORTED
    await eventually(lambda: not alive(daemon), what="its end")  # the shim's SIGKILL: SIGTERM is ignored


async def test_a_command_missing_on_the_far_side_says_so(far_host: FarHost) -> None:
    config = replace(far_config(far_host), command="no-such-agent-here")
    result = await (await started(config)).result()
    assert result.stop_reason is SubagentStopReason.ERROR
    assert result.error == f"{far_host.where}: command not found: no-such-agent-here"


async def test_an_unreachable_host_names_it_and_the_clients_message(far_host: FarHost) -> None:
    closed = replace(far_host, port=9)  # nothing listens there
    result = await (
        await AcpSubagentProvider(far_config(closed)).start(SubagentRequest(prompt="hi"))
    ).result()
    assert result.stop_reason is SubagentStopReason.ERROR
    assert result.error == (
        f"could not reach {far_host.where}: ssh: connect to host 127.0.0.1 port 9: Connection refused"
    )


async def test_a_silent_host_ends_error_within_the_handshake_timeout(
    netns_host: tuple[FarHost, Netns],
) -> None:
    host, netns = netns_host
    silence(netns)  # packets go nowhere: no refusal, only silence
    config = far_config(host, handshake_timeout=2.0)
    result = await (await started(config)).result()
    assert result.stop_reason is SubagentStopReason.ERROR
    # Whichever gives up first, ssh's ConnectTimeout (the handshake timeout) or our own deadline.
    said = result.error or ""
    assert said.startswith(f"could not reach {host.where}") and ("within 2 s" in said or "timed out" in said)


def test_the_far_side_ends_the_group_within_10_s_of_the_last_heartbeat() -> None:
    """The bound the two tests below rely on, by the constants (the seconds are measured in
    benchmarks/remote.py): heartbeats missed in a row, the shim's look at them, the grace."""
    assert SILENCE == HEARTBEAT_EVERY * MISSED_BEATS
    assert HEARTBEAT_EVERY * MISSED_BEATS + shim.POLL + shim.LOST_GRACE <= CONTRACT_BOUND


async def test_a_cut_link_ends_the_run_error_and_the_far_group(netns_host: tuple[FarHost, Netns]) -> None:
    host, netns = netns_host
    run = await AcpSubagentProvider(far_config(host, "forever=1", "wrapper=1")).start(
        SubagentRequest(prompt="hi")
    )
    await first_chunk(run)
    assert far_agents()
    set_link(netns, "down")
    await asyncio.to_thread(await_gone, far_processes)
    assert host.last_end()["why"] == "heartbeat"  # the shim heard none, and ended what it held
    result = await run.result()
    assert result.stop_reason is SubagentStopReason.ERROR
    assert result.error == f"lost the link to {host.where}: Timeout, server {netns.address} not responding."
    assert result.output  # the partial answer is kept


def test_sigkill_of_acp_tui_ends_the_far_group(far_host: FarHost, tmp_path: Path) -> None:
    argv = ["python3", far_host.agent("scripted_agent.py"), "forever=1", "wrapper=1"]
    config = agents_toml(tmp_path, "far", argv, far_host.url, remote_options=list(far_host.options))
    sigkill_acp_tui_amid(config, far_agents, 2)  # once the wrapper and its grandchild run over there
    await_gone(far_processes)
    # Our watchdog ended the client here: the shim's input ended (or sshd hung its session up).
    assert far_host.last_end()["why"] in ("end-of-input", "hangup")


def test_probe_works_over_ssh(far_host: FarHost, tmp_path: Path) -> None:
    config = tmp_path / "agents.toml"
    config.write_text(
        "[[agent]]\n"
        'name = "far"\ncommand = "python3"\n'
        f"args = {json.dumps([far_host.agent('scripted_agent.py'), 'agent_info=far/Far Agent/1.2.3'])}\n"
        f"remote_options = {json.dumps(list(far_host.options))}\n"
    )
    done = subprocess.run(
        [sys.executable, "-m", "acp_tui", "probe", "--config", str(config), "--agent", "far",
         "--remote", far_host.url, "--format", "json"],
        capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    record = json.loads(done.stdout)
    assert record["agent"]["version"] == "1.2.3" and record["error"] is None
    assert record["remote"] == far_host.url


def test_a_bad_remote_url_is_one_line(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "acp_tui", "run", "--agent", "x=python3 agent.py", "--prompt", "hi",
         "--remote", "ssh://user:pw@host"],
        capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode == 2
    assert done.stderr == (
        'python -m acp_tui run: error: --remote: remote "ssh://user:pw@host": no password in the URL '
        "(use remote_options, e.g. -i KEY)\n"
    )


async def test_a_warm_spare_serves_a_remote_run(far_host: FarHost) -> None:
    """A spare over ssh: spawned, through `initialize` and `session/new` over there before any run;
    the run that takes it only prompts."""
    config = far_config(far_host, "text=warm over ssh")
    provider = AcpSubagentProvider(config)
    try:
        spare = await provider.prepare(cwd=config.cwd_for(None), presession=True)
        await spare.ready.wait()
        assert spare.failure is None and spare.cwd == far_user().pw_dir  # the far side's home
        run = spare.take(SubagentRequest(prompt="hi"))
        result = await run.result()
    finally:
        await provider.aclose()
    assert result.stop_reason is SubagentStopReason.COMPLETED, result.error
    assert result.output == "warm over ssh" and run.warm
    assert far_agents() == []
