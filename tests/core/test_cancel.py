"""dispose() and the abort event at every moment of a run; the process group is gone afterwards."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import anyio
import pytest

from acp_tui import AcpSubagentProvider, OutputDelta, StatusChanged, SubagentRequest, SubagentStopReason
from acp_tui.process.group import group_alive
from tests.helpers import demo, scripted, unhurried


async def wait_for_output(run: object) -> str:
    """Consume events until the first answer text arrives."""
    async for event in run.events():  # type: ignore[attr-defined]
        if isinstance(event, OutputDelta):
            return event.text
    raise AssertionError("the run finished without output")


async def wait_for_status(run: object, status: str) -> None:
    async for event in run.events():  # type: ignore[attr-defined]
        if isinstance(event, StatusChanged) and event.status == status:
            return
    raise AssertionError(f"never reached {status}")


def received_methods(record: Path) -> list[str]:
    if not record.exists():
        return []
    return [json.loads(line).get("method", "<response>") for line in record.read_text().splitlines()]


async def test_pre_abort_spawns_nothing_and_resolves_aborted(tmp_path: Path) -> None:
    abort = asyncio.Event()
    abort.set()
    record = tmp_path / "frames.jsonl"
    run = await AcpSubagentProvider(scripted(record=record)).start(SubagentRequest("hi"), abort=abort)
    result = await run.result()
    assert result.stop_reason is SubagentStopReason.ABORTED
    assert result.exit_code is None
    assert run.pid is None
    assert received_methods(record) == []


async def test_pre_abort_with_an_anyio_event() -> None:
    abort = anyio.Event()
    abort.set()
    run = await AcpSubagentProvider(scripted()).start(SubagentRequest("hi"), abort=abort)
    assert (await run.result()).stop_reason is SubagentStopReason.ABORTED


async def test_dispose_during_the_handshake_never_sends_a_prompt(tmp_path: Path) -> None:
    record = tmp_path / "frames.jsonl"
    run = await AcpSubagentProvider(scripted(hang="session/new", record=record)).start(SubagentRequest("hi"))
    await wait_for_status(run, "initializing")
    await run.dispose()
    result = await run.result()
    assert result.stop_reason is SubagentStopReason.ABORTED
    assert "session/prompt" not in received_methods(record)
    assert run.pid is not None and not group_alive(run.pid)


async def test_abort_during_the_handshake_never_sends_a_prompt(tmp_path: Path) -> None:
    record = tmp_path / "frames.jsonl"
    abort = asyncio.Event()
    run = await AcpSubagentProvider(scripted(hang="initialize", record=record)).start(
        SubagentRequest("hi"), abort=abort
    )
    abort.set()
    result = await run.result()
    assert result.stop_reason is SubagentStopReason.ABORTED
    assert "session/prompt" not in received_methods(record)


async def test_dispose_mid_prompt_cancels_the_turn_and_keeps_the_partial_answer(
    tmp_path: Path,
) -> None:
    record = tmp_path / "frames.jsonl"
    run = await AcpSubagentProvider(unhurried(scripted(text="partial", forever=1, record=record))).start(
        SubagentRequest("hi")
    )
    assert (await wait_for_output(run)).startswith("partial")
    await run.dispose("stopped by test")
    result = await run.result()
    assert result.stop_reason is SubagentStopReason.ABORTED
    assert result.error == "stopped by test"
    assert result.output.startswith("partial")
    assert "session/cancel" in received_methods(record)
    assert not group_alive(run.pid or 0)
    assert result.ended_by == "exit"  # the agent honours session/cancel: no grace runs out, no signal


async def test_the_abort_event_mid_prompt_is_the_same_as_dispose() -> None:
    abort = asyncio.Event()
    run = await AcpSubagentProvider(scripted(text="partial", forever=1)).start(
        SubagentRequest("hi"), abort=abort
    )
    await wait_for_output(run)
    abort.set()
    result = await run.result()
    assert result.stop_reason is SubagentStopReason.ABORTED
    assert result.output.startswith("partial")
    assert not group_alive(run.pid or 0)


async def test_an_agent_answering_end_turn_to_a_cancel_is_still_aborted() -> None:
    run = await AcpSubagentProvider(scripted(forever=1, on_cancel="end_turn")).start(SubagentRequest("hi"))
    await wait_for_output(run)
    await run.dispose()
    assert (await run.result()).stop_reason is SubagentStopReason.ABORTED


async def test_dispose_escalates_to_sigkill_for_a_child_ignoring_cancel_and_sigterm() -> None:
    config = scripted(forever=1, on_cancel="ignore", ignore_term=1)
    run = await AcpSubagentProvider(config).start(SubagentRequest("hi"))
    await wait_for_output(run)
    started = time.monotonic()
    await run.dispose()
    elapsed = time.monotonic() - started
    result = await run.result()
    assert result.stop_reason is SubagentStopReason.ABORTED
    assert (result.exit_code, result.ended_by) == (-9, "sigkill")
    assert not group_alive(run.pid or 0)
    assert elapsed >= config.cancel_grace + config.term_grace  # each grace given in full first


async def test_dispose_after_the_end_is_a_no_op_and_twice_is_safe() -> None:
    run = await AcpSubagentProvider(scripted(text="done")).start(SubagentRequest("hi"))
    result = await run.result()
    await run.dispose()
    await run.dispose("again")
    assert await run.result() == result
    assert result.stop_reason is SubagentStopReason.COMPLETED


async def test_concurrent_disposes_from_many_tasks() -> None:
    run = await AcpSubagentProvider(scripted(forever=1)).start(SubagentRequest("hi"))
    await wait_for_output(run)
    await asyncio.gather(*(run.dispose(f"reason {i}") for i in range(5)))
    result = await run.result()
    assert result.stop_reason is SubagentStopReason.ABORTED
    assert result.error == "reason 0"


@pytest.mark.parametrize("delay", [0.0, 0.001, 0.005, 0.02])
async def test_dispose_racing_a_finishing_run_resolves_once(delay: float) -> None:
    run = await AcpSubagentProvider(scripted(text="quick")).start(SubagentRequest("hi"))
    await asyncio.sleep(delay)  # a spread of moments, not synchronisation: any outcome must be sane
    await run.dispose()
    result = await run.result()
    assert result.stop_reason in (SubagentStopReason.COMPLETED, SubagentStopReason.ABORTED)
    assert not group_alive(run.pid or 0)


async def test_dispose_right_after_start_before_anything_happens() -> None:
    run = await AcpSubagentProvider(scripted(forever=1)).start(SubagentRequest("hi"))
    await run.dispose()
    assert (await run.result()).stop_reason is SubagentStopReason.ABORTED
    assert not group_alive(run.pid or 0)


async def test_a_broken_pipe_ends_in_error_and_dispose_does_not_hang() -> None:
    run = await AcpSubagentProvider(scripted(close_stdin=1)).start(SubagentRequest("hi"))
    result = await run.result()
    assert result.stop_reason is SubagentStopReason.ERROR
    assert result.error
    assert not group_alive(run.pid or 0)


async def test_dispose_after_a_broken_pipe_is_aborted_and_bounded() -> None:
    run = await AcpSubagentProvider(scripted(close_stdin=1, ignore_term=1)).start(SubagentRequest("hi"))
    await wait_for_status(run, "prompting")
    await run.dispose()
    result = await run.result()
    assert result.stop_reason in (SubagentStopReason.ABORTED, SubagentStopReason.ERROR)
    assert not group_alive(run.pid or 0)


async def test_a_wrapper_launcher_and_its_grandchild_die_together() -> None:
    run = await AcpSubagentProvider(scripted(wrapper=1, forever=1, ignore_term=1)).start(
        SubagentRequest("hi")
    )
    await wait_for_output(run)
    await run.dispose()
    assert (await run.result()).stop_reason is SubagentStopReason.ABORTED
    assert not group_alive(run.pid or 0)


async def test_a_leader_that_exits_leaving_a_grandchild_on_the_pipes_ends_the_run() -> None:
    run = await AcpSubagentProvider(scripted(orphan=1, hang="initialize")).start(SubagentRequest("hi"))
    result = await run.result()
    assert result.stop_reason is SubagentStopReason.ERROR
    assert result.error == "agent exited with code 0"
    assert not group_alive(run.pid or 0)


async def test_the_demo_agent_that_ignores_everything_is_killed() -> None:
    config = demo("stubborn", "--delay", "0.05")
    run = await AcpSubagentProvider(config).start(SubagentRequest("hi"))
    await wait_for_output(run)
    await run.dispose()
    result = await run.result()
    assert result.stop_reason is SubagentStopReason.ABORTED
    assert result.exit_code == -9
    assert not group_alive(run.pid or 0)


async def test_the_slow_demo_agent_honours_cancel() -> None:
    run = await AcpSubagentProvider(unhurried(demo("slow"))).start(SubagentRequest("hi"))
    await wait_for_output(run)
    await run.dispose()
    result = await run.result()
    assert result.stop_reason is SubagentStopReason.ABORTED
    assert result.output
    assert result.ended_by == "exit"  # it ended its turn and exited by itself
