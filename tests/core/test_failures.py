"""Children that fail, misbehave or break the transport: every one ends as a clean `error`, whole.

`result()` never raises; the partial answer is kept; the message says what happened in one line;
and the child's process group is gone afterwards (the autouse fixture also checks nothing is left).
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import pytest

from acp_tui import AcpProviderConfig, AcpSubagentProvider, OutputDelta, SubagentRequest, SubagentStopReason
from acp_tui.core.model import SubagentResult
from acp_tui.process.group import group_alive
from acp_tui.runs.output import STDERR_TAIL_LINES
from tests.helpers import scripted


async def run_to_end(config: AcpProviderConfig, cwd: Path | None = None) -> tuple[SubagentResult, int | None]:
    run = await AcpSubagentProvider(config).start(SubagentRequest("go", cwd=str(cwd) if cwd else None))
    result = await run.result()
    assert run.pid is None or not group_alive(run.pid)
    return result, run.pid


def big_text(n: int) -> str:
    """The same as tests/scripted_agent.py's big_text (that module cannot be imported: it reads argv)."""
    return "".join(f"{i:07d}|" for i in range(n // 8 + 1))[:n]


# The child exits or dies ----------------------------------------------------------------------------


@pytest.mark.parametrize("step", ["start", "initialize"])
async def test_a_child_that_exits_at_once_is_an_error_with_its_code_and_last_stderr_line(step: str) -> None:
    result, _ = await run_to_end(scripted(exit=3, exit_at=step))
    assert result.stop_reason is SubagentStopReason.ERROR
    assert result.error == f"agent exited with code 3: scripted agent: exiting with 3 at {step}"
    assert result.exit_code == 3
    assert result.output == ""
    assert result.stderr_tail == [f"scripted agent: exiting with 3 at {step}"]


async def test_a_child_that_exits_mid_stream_keeps_the_partial_answer() -> None:
    result, _ = await run_to_end(scripted(exit=5, text="abcdefgh", chunks=4))
    assert result.stop_reason is SubagentStopReason.ERROR
    assert result.output == "ab"  # the first chunk, sent before the exit
    assert result.error == "agent exited with code 5: scripted agent: exiting with 5 at prompt"
    assert result.exit_code == 5


@pytest.mark.parametrize(
    ("signal_name", "step", "output"),
    [("SIGKILL", "start", ""), ("SIGHUP", "initialize", ""), ("SIGTERM", "prompt", "ab")],
)
async def test_a_child_killed_by_a_signal_is_an_error_naming_the_signal(
    signal_name: str, step: str, output: str
) -> None:
    result, _ = await run_to_end(scripted(kill=signal_name, exit_at=step, text="abcdefgh", chunks=4))
    assert result.stop_reason is SubagentStopReason.ERROR
    assert result.error == (
        f"agent was killed by {signal_name}: scripted agent: killing itself with {signal_name} at {step}"
    )
    assert result.exit_code is not None and result.exit_code < 0
    assert result.output == output


async def test_a_command_that_is_not_executable_is_a_clean_error(tmp_path: Path) -> None:
    script = tmp_path / "agent.sh"
    script.write_text("#!/bin/sh\nexit 0\n")
    os.chmod(script, 0o644)
    result, pid = await run_to_end(AcpProviderConfig(command=str(script)))
    assert result.stop_reason is SubagentStopReason.ERROR
    assert result.error == f"command not executable: {script}"
    assert result.exit_code is None and pid is None


# The handshake never completes ---------------------------------------------------------------------


# The timeout runs from the spawn: the agent that hangs at session/new needs the time to start and
# answer initialize first, which a loaded machine can stretch past a fraction of a second.
@pytest.mark.parametrize(("step", "timeout"), [("initialize", 0.3), ("session/new", 3.0)])
async def test_a_handshake_that_never_completes_times_out_naming_the_step(step: str, timeout: float) -> None:
    config = dataclasses.replace(scripted(hang=step), handshake_timeout=timeout)
    result, _ = await run_to_end(config)
    assert result.stop_reason is SubagentStopReason.ERROR
    assert result.error == f"handshake timed out after {timeout:g} s (no answer to {step})"
    assert result.output == ""


# A noisy or broken transport ------------------------------------------------------------------------


async def test_a_child_flooding_stderr_does_not_deadlock_and_the_tail_stays_bounded() -> None:
    flood = 8 << 20  # 8 MiB of stderr before answering initialize: far beyond any pipe buffer
    result, _ = await run_to_end(scripted(stderr_bytes=flood, stderr="the last word", text="still here"))
    assert result.stop_reason is SubagentStopReason.COMPLETED, result.error
    assert result.output == "still here"
    assert 0 < len(result.stderr_tail) <= STDERR_TAIL_LINES
    assert sum(len(line) for line in result.stderr_tail) < 1 << 20
    assert result.stderr_tail[-1] == "the last word"


async def test_events_are_bounded_while_nobody_reads_a_flood() -> None:
    """Nobody consumes events during the run; reading them afterwards still ends with Finished."""
    run = await AcpSubagentProvider(scripted(stderr_bytes=4 << 20, text="ok")).start(SubagentRequest("go"))
    result = await run.result()
    events = [event async for event in run.events()]
    assert result.output == "ok"
    assert len(events) < 10_000  # 40k stderr lines went by
    assert "".join(e.text for e in events if isinstance(e, OutputDelta)) == "ok"


@pytest.mark.parametrize("garbage", ["1", "2"])
async def test_garbage_on_stdout_is_skipped_and_the_run_completes(garbage: str) -> None:
    """1: non-JSON lines, non-object JSON, invalid UTF-8 between frames. 2: also object-shaped lines
    that are no valid message (broken JSON, invalid UTF-8, no jsonrpc, an unknown id, an unknown
    notification)."""
    text = "a clean answer through the noise"
    result, _ = await run_to_end(scripted(garbage=garbage, text=text, chunks=4, hidden=1))
    assert result.stop_reason is SubagentStopReason.COMPLETED, result.error
    assert result.output == text
    assert result.hidden["agent_thought_chunk"] == 4  # real updates between the garbage still count


async def test_a_one_mebibyte_single_line_chunk_arrives_whole() -> None:
    size = 1 << 20
    run = await AcpSubagentProvider(scripted(big=size)).start(SubagentRequest("go"))
    shown = "".join([e.text async for e in run.events() if isinstance(e, OutputDelta)])
    result = await run.result()
    assert result.stop_reason is SubagentStopReason.COMPLETED, result.error
    assert len(result.output) == size
    assert result.output == big_text(size)
    assert shown == result.output


async def test_a_child_that_closes_stdout_but_keeps_running_is_an_error_and_is_ended() -> None:
    result, pid = await run_to_end(scripted(close_stdout=1, text="abcd", chunks=2))
    assert result.stop_reason is SubagentStopReason.ERROR
    assert result.error
    assert result.output == "ab"
    assert pid is not None and not group_alive(pid)


# The client refuses what it never offered -------------------------------------------------------------


async def test_fs_and_terminal_requests_are_refused_and_nothing_is_written(tmp_path: Path) -> None:
    result, _ = await run_to_end(scripted(fs=1, text=" done"), cwd=tmp_path)
    assert result.stop_reason is SubagentStopReason.COMPLETED, result.error
    # fs/read_text_file, fs/write_text_file, terminal/create: each a method-not-found error.
    assert result.output == "-32601 -32601 -32601 done"
    assert list(tmp_path.iterdir()) == []


# The agent answers with a JSON-RPC error ------------------------------------------------------------


@pytest.mark.parametrize("method", ["initialize", "session/new", "session/prompt"])
async def test_an_agent_error_response_ends_the_run_with_the_agents_message(method: str) -> None:
    result, _ = await run_to_end(scripted(fail=f"{method}:-32000:Authentication required"))
    assert result.stop_reason is SubagentStopReason.ERROR
    assert result.error is not None
    assert "Authentication required" in result.error
    assert method in result.error
    assert "\n" not in result.error
