"""Agents that try to hang, outlive, or read what the supervisor protects (issue: trust).

Each case is driven over real stdio by the scripted child; each failed before the transport,
process-mark and masking changes, and must pass now.
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from acp_tui import AcpProviderConfig, AcpSubagentProvider, SubagentRequest, Subagents, SubagentStopReason
from acp_tui.core.model import Stopping
from acp_tui.process.group import group_alive
from acp_tui.process.watchdog import SUPERVISOR_MARK, watchdog
from acp_tui.runs import trace as trace_module
from tests.helpers import SCRIPTED_AGENT, scripted
from tests.hostile.support import MB, eventually, fd_count, peak_rss
from tests.sandbox.procs import alive, main_thread_exited

S = SubagentStopReason


async def run_to_end(config: AcpProviderConfig, prompt: str = "go") -> object:
    run = await AcpSubagentProvider(config).start(SubagentRequest(prompt))
    result = await run.result()
    assert run.pid is None or not group_alive(run.pid)
    return result


# A string where JSON-RPC wants an error object ----------------------------------------------------


@pytest.mark.parametrize("method", ["initialize", "session/new", "session/prompt"])
async def test_a_string_error_fails_the_request_at_once_saying_so(method: str) -> None:
    result = await run_to_end(scripted(bad_error=method, text="never"))
    assert result.stop_reason is S.ERROR  # type: ignore[attr-defined]
    assert result.error == (  # type: ignore[attr-defined]
        f'the agent sent a malformed response to {method}: error is not an object ("boom")'
    )


# A frame nested 10,000 deep ---------------------------------------------------------------------------


async def test_a_deeply_nested_frame_is_dropped_and_the_answer_goes_on() -> None:
    result = await run_to_end(scripted(deep=10_000, text="abcdefgh", chunks=4))
    assert result.stop_reason is S.COMPLETED  # type: ignore[attr-defined]
    assert result.output == "abcdefgh"  # type: ignore[attr-defined]
    assert any("nested deeper" in line for line in result.stderr_tail)  # type: ignore[attr-defined]


# Grandchildren that leave the process group --------------------------------------------------------


@pytest.mark.parametrize("how", ["setsid", "setpgid", "leaderless"])
@pytest.mark.parametrize("ending", ["completed", "disposed"])
async def test_a_grandchild_that_leaves_the_group_is_ended_and_keeps_no_descriptor(
    tmp_path: Path, how: str, ending: str
) -> None:
    pid_file = tmp_path / "daemon.pid"
    watchdog.ensure_started()  # its pipe is ours for good: opened before counting
    before = fd_count()
    options = {"daemon": how, "daemon_pid": pid_file, "text": "done"}
    if ending == "disposed":
        options |= {"forever": 1, "delay": 0.05}
    run = await AcpSubagentProvider(scripted(**options)).start(SubagentRequest("go"))
    await eventually(lambda: pid_file.exists() and pid_file.read_text() != "", what="the daemon's pid")
    daemon = int(pid_file.read_text())
    assert alive(daemon)
    if ending == "disposed":
        await run.dispose("stop")
    result = await run.result()
    assert result.stop_reason is (S.COMPLETED if ending == "completed" else S.ABORTED)
    assert not alive(daemon), f"the {how} grandchild outlived its run"
    assert fd_count() <= before


# Memory before the session exists -------------------------------------------------------------------


async def test_an_early_flood_counts_against_the_output_cap() -> None:
    cap = 256_000
    config = AcpProviderConfig(
        command=sys.executable,
        args=[SCRIPTED_AGENT, f"early_bulk={100 << 20}", "early=1", "text="],
        max_output_chars=cap,
    )
    with peak_rss() as memory:
        result = await run_to_end(config)
    assert result.stop_reason is S.COMPLETED, result.error  # type: ignore[attr-defined]
    assert len(result.output) == cap and result.truncated  # type: ignore[attr-defined]
    assert memory.growth < 60 * MB, f"our RSS grew by {memory.growth / MB:.0f} MB"


# The log -----------------------------------------------------------------------------------------------


async def test_a_flood_of_invalid_frames_writes_a_bounded_log(routed_logs: Path) -> None:
    result = await run_to_end(scripted(invalid_flood=20_000, text="fine"))
    assert result.stop_reason is S.COMPLETED  # type: ignore[attr-defined]
    assert result.output == "fine"  # type: ignore[attr-defined]
    size = sum(path.stat().st_size for path in routed_logs.parent.glob("*"))
    assert size < 200_000, f"{size} bytes of log for 20,000 frames"
    assert "times]" in routed_logs.read_text()  # counted, not written each time


# The trace fails -------------------------------------------------------------------------------------


async def test_a_trace_that_cannot_be_written_never_keeps_the_result_from_coming(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = trace_module.TraceWriter.for_run

    def on_a_full_disk(*args: object, **kwargs: object) -> trace_module.TraceWriter:
        writer = real(*args, **kwargs)  # type: ignore[arg-type]
        writer.path = Path("/dev/full")
        writer._file = open("/dev/full", "w", encoding="utf-8")  # noqa: SIM115 - closed by the run
        return writer

    monkeypatch.setattr(trace_module.TraceWriter, "for_run", staticmethod(on_a_full_disk))
    config = scripted(text="x" * 20_000, chunks=50)
    config = AcpProviderConfig(**{**config.__dict__, "trace_dir": str(tmp_path)})
    result = await asyncio.wait_for(run_to_end(config), 20)
    assert result.stop_reason is S.COMPLETED  # type: ignore[attr-defined]
    assert result.output == "x" * 20_000  # type: ignore[attr-defined]
    assert any("trace stopped" in line for line in result.stderr_tail)  # type: ignore[attr-defined]


# Our own environment ---------------------------------------------------------------------------------


def test_a_child_cannot_read_our_credentials_from_proc(tmp_path: Path) -> None:
    """The variables must be in our *initial* environment block: a fresh supervisor process. What is
    blanked there follows the rule that keeps them from our children (`is_credential_name`)."""
    secret = "sk-live-" + "q" * 40
    hidden = ["ACP_TUI_TEST_API_KEY", "ACP_TUI_PGPASSWORD", "ACP_TUI_MYSQL_PWD", "ACP_TUI_REDIS_AUTH"]
    shown = ["ACP_TUI_OLDPWD", "ACP_TUI_AUTHOR"]
    out = tmp_path / "parent.environ"
    program = (
        "import asyncio, sys\n"
        "from acp_tui import AcpProviderConfig, AcpSubagentProvider, SubagentRequest\n"
        "async def main():\n"
        f"    args = [{SCRIPTED_AGENT!r}, 'read_parent_env={out}']\n"
        "    config = AcpProviderConfig(command=sys.executable, args=args)\n"
        "    run = await AcpSubagentProvider(config).start(SubagentRequest('go'))\n"
        "    print((await run.result()).stop_reason)\n"
        "asyncio.run(main())\n"
    )
    env = {**os.environ, **{name: f"{secret}-{name}" for name in hidden + shown}}
    done = subprocess.run([sys.executable, "-c", program], env=env, capture_output=True, timeout=30)
    assert done.returncode == 0, done.stderr
    environ = dict(entry.split(b"=", 1) for entry in out.read_bytes().split(b"\0") if b"=" in entry)
    for name in hidden:
        assert environ[name.encode()].strip(b"\0") == b"", f"{name} readable in /proc/<ppid>/environ"
    for name in shown:
        assert environ[name.encode()] == f"{secret}-{name}".encode()


# Quitting with stubborn runs -----------------------------------------------------------------------------


async def test_closing_eight_providers_of_stubborn_runs_takes_one_grace_not_eight() -> None:
    """The runs are ended side by side: each is sent its cancel before any grace runs out (one after
    another, the first would be SIGTERMed, then killed, before the second is cancelled)."""
    subagents = Subagents()
    stubborn = dict(forever=1, on_cancel="ignore", ignore_term=1, delay=0.05, stderr_at_prompt="READY")
    runs = []
    for i in range(8):
        config = dataclasses.replace(scripted(**stubborn), cancel_grace=2.0)  # longer than a loop stall
        await subagents.register(f"a{i}", AcpSubagentProvider(config))
        runs.append(await subagents.start(f"a{i}", SubagentRequest("go")))
    steps: list[str] = []

    async def follow(run: object, prompting: asyncio.Event) -> None:
        async for event in run.events():  # type: ignore[attr-defined]
            if getattr(event, "text", None) == "READY":
                prompting.set()
            elif isinstance(event, Stopping):
                steps.append(event.step)

    prompting = [asyncio.Event() for _ in runs]
    watchers = [asyncio.ensure_future(follow(run, event)) for run, event in zip(runs, prompting, strict=True)]
    for event in prompting:  # every one is prompting (and so ignoring the cancel for real)
        await event.wait()
    await subagents.aclose()
    await asyncio.gather(*watchers)
    assert steps[:8] == ["cancel-sent"] * 8 and steps.count("sigkill") == 8, steps
    results = [await run.result() for run in runs]
    assert all((result.stop_reason, result.ended_by) == (S.ABORTED, "sigkill") for result in results)


# SIGKILL of `acp-tui run` while its agents are still starting ------------------------------------


def marked_by(supervisor: int) -> list[int]:
    """Live processes carrying the mark of the supervisor whose pid is `supervisor`."""
    prefix = f"{SUPERVISOR_MARK}={supervisor}-".encode()
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/environ", "rb") as f:
                marked = any(entry.startswith(prefix) for entry in f.read().split(b"\0"))
        except OSError:
            continue
        if marked and alive(int(name)):
            found.append(int(name))
    return found


def test_sigkill_of_acp_tui_run_while_agents_start_leaves_none_running(tmp_path: Path) -> None:
    for attempt in range(3):
        started = tmp_path / f"started-{attempt}"
        agents = [
            f"--agent=a{i}={sys.executable} {SCRIPTED_AGENT} hang=initialize env_dump={started}{i}"
            for i in range(3)
        ]
        supervisor = subprocess.Popen(
            [sys.executable, "-m", "acp_tui", "run", "--prompt", "go", *agents],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            deadline = time.monotonic() + 20
            while not any(Path(f"{started}{i}").exists() for i in range(3)):
                assert time.monotonic() < deadline, "no agent started"
                time.sleep(0.005)
            os.kill(supervisor.pid, signal.SIGKILL)  # the other agents may still be spawning
            supervisor.wait()
            while marked_by(supervisor.pid):  # the test's timeout is the bound
                time.sleep(0.01)
        finally:
            if supervisor.poll() is None:
                supervisor.kill()


def test_sigkill_of_acp_tui_run_ends_a_daemon_whose_main_thread_exited(tmp_path: Path) -> None:
    """/proc calls such a process a zombie while its other threads run on: the watchdog, the only
    one left to end it, must not take it for dead."""
    pid_file = tmp_path / "daemon.pid"
    agent = f"--agent=a={sys.executable} {SCRIPTED_AGENT} daemon=leaderless daemon_pid={pid_file} forever=1"
    supervisor = subprocess.Popen(
        [sys.executable, "-m", "acp_tui", "run", "--prompt", "go", agent],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        while not (pid_file.exists() and pid_file.read_text()):  # the test's timeout is the bound
            time.sleep(0.005)
        daemon = int(pid_file.read_text())
        while not (main_thread_exited(daemon) and alive(daemon)):
            time.sleep(0.005)  # its other thread runs on
        os.kill(supervisor.pid, signal.SIGKILL)
        supervisor.wait()
        while alive(daemon):
            time.sleep(0.01)
    finally:
        if supervisor.poll() is None:
            supervisor.kill()


# A secret anywhere an agent controls text ------------------------------------------------------------

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

SECRET = "sk-ant-" + "".join(chr(ord("a") + (i * 7) % 26) for i in range(88))  # 95 characters


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(offset=st.integers(min_value=0, max_value=5000), chunks=st.integers(min_value=1, max_value=40))
async def test_a_secret_at_any_offset_of_any_agent_text_never_leaves_unmasked(
    tmp_path_factory: pytest.TempPathFactory, offset: int, chunks: int
) -> None:
    """The preset's credential, placed by the agent at `offset` of long texts in every field it
    controls (answer, stderr, an error message, a permission title, a dropped line), reaches no
    output unmasked: not the result, the events, the JSON record, the trace or the log."""
    from acp_tui.reports.records import json_line, run_record
    from acp_tui.settings.logs import route_logging
    from acp_tui.settings.schema import AgentPreset

    tmp = tmp_path_factory.mktemp("secret")
    padding = "p" * offset
    laden = padding + "${LEAKY_KEY}" + "q" * 3000
    answering = {
        "text": laden,
        "chunks": chunks,
        "stderr": laden,
        "noise": laden,
        "invalid_update": laden,
        "permission": "normal",
        "permission_title": laden,
    }
    failing = {"stderr": laden, "fail": f"session/prompt:-32000:{laden}"}
    log = route_logging([SECRET], path=tmp / "acp-tui.log")
    outputs: list[str] = []
    for options in (answering, failing):
        args = [SCRIPTED_AGENT, *(f"{k}={v}" for k, v in options.items())]
        config = AcpProviderConfig(
            command=sys.executable, args=args, env={"LEAKY_KEY": SECRET}, trace_dir=str(tmp / "traces")
        )
        run = await AcpSubagentProvider(config).start(SubagentRequest("go"))
        outputs += [repr(event) async for event in run.events()]
        result = await run.result()
        if options is answering:
            assert "***" in result.output  # the secret did come, and was masked
        preset = AgentPreset("a", sys.executable, tuple(args))
        outputs += [repr(result), json_line(run_record(preset, result, prompt="go"))]
    outputs += [path.read_text() for path in (tmp / "traces").glob("*")]
    outputs += [log.read_text()] if log.exists() else []
    fragment = SECRET[10:40]  # any long piece of it counts as a leak, not only the whole
    for text in outputs:
        assert SECRET not in text and fragment not in text
