"""The keyless demo agent, end to end: the RFC's PONG check, hidden updates, stop reasons, timings."""

from __future__ import annotations

import statistics
import time
from pathlib import Path

import pytest

from acp_tui import AcpSubagentProvider, OutputDelta, SubagentRequest, SubagentStopReason
from acp_tui.demo.agent import (
    ESSAY_BODY,
    ESSAY_CODE,
    ESSAY_INTRO,
    ESSAY_OUTRO,
    ESSAY_PERSONAS,
    split_chunks,
    summarize,
)
from acp_tui.subagents import PermissionDecided, PermissionOptionInfo, RunEvent, SubagentResult
from acp_tui.subagents.acp.process import group_alive
from tests.helpers import demo

PONG_OPTIONS = (
    PermissionOptionInfo("allow", "Allow once", "allow_once"),
    PermissionOptionInfo("reject", "Reject", "reject_once"),
)


async def run_demo(
    persona: str, *extra: str, policy: str = "reject", cwd: Path | None = None, prompt: str = "ping"
) -> tuple[SubagentResult, list[RunEvent]]:
    config = demo(persona, *extra, policy=policy)
    run = await AcpSubagentProvider(config).start(SubagentRequest(prompt, cwd=str(cwd) if cwd else None))
    events = [event async for event in run.events()]
    result = await run.result()
    assert not group_alive(run.pid or 0)
    return result, events


# The RFC's keyless end-to-end check ------------------------------------------------------------------


async def test_pong_under_allow_answers_pong_and_writes_the_proof(tmp_path: Path) -> None:
    result, events = await run_demo("pong", policy="allow", cwd=tmp_path)

    assert result.stop_reason is SubagentStopReason.COMPLETED, result.error
    assert result.output == "PONG"
    assert (tmp_path / "proof.txt").read_text(encoding="utf-8") == "PONG\n"
    assert [p.name for p in tmp_path.iterdir()] == ["proof.txt"]
    [record] = result.permissions
    assert (record.title, record.kind, record.options) == ("Write proof.txt", "edit", PONG_OPTIONS)
    assert (record.decision, record.option_id, record.rule) == ("allow_once", "allow", "allow")
    assert "+PONG" in record.content  # the diff the agent proposed, for a person to read
    assert [e.record for e in events if isinstance(e, PermissionDecided)] == [record]
    assert result.hidden == {"tool_call": 1, "tool_call_update": 1}


async def test_pong_under_reject_answers_pong_and_writes_nothing(tmp_path: Path) -> None:
    result, events = await run_demo("pong", policy="reject", cwd=tmp_path)

    assert result.stop_reason is SubagentStopReason.COMPLETED, result.error
    assert result.output == "PONG"
    assert list(tmp_path.iterdir()) == []
    [record] = result.permissions
    assert (record.title, record.kind, record.options) == ("Write proof.txt", "edit", PONG_OPTIONS)
    assert (record.decision, record.option_id, record.rule) == ("reject_once", "reject", "reject")
    assert [e.record for e in events if isinstance(e, PermissionDecided)] == [record]


# Everything but the answer stays hidden --------------------------------------------------------------

ESSAY_THOUGHTS = (
    "The user wants a thorough answer. Let me plan it first.",
    "The workspace is small. A guided tour with a table should do.",
    "An example would help; let me note it down as I go.",
)


async def test_essay_shows_only_the_answer_and_counts_the_rest(tmp_path: Path) -> None:
    prompt = "Tell me about ACP"
    result, events = await run_demo("essay", "--delay", "0", cwd=tmp_path, prompt=prompt)

    assert result.stop_reason is SubagentStopReason.COMPLETED, result.error
    expected = (
        ESSAY_INTRO.format(question=summarize(prompt))
        + ESSAY_BODY
        + ESSAY_PERSONAS
        + ESSAY_CODE
        + ESSAY_OUTRO
    )
    assert result.output == expected
    assert "".join(e.text for e in events if isinstance(e, OutputDelta)) == expected
    for thought in ESSAY_THOUGHTS:
        assert thought not in result.output
    # What the tool calls carried (a file read, a proposed edit) is not part of the answer.
    assert "A Textual supervisor of ACP agents." not in result.output
    assert "press Cancel" not in result.output
    assert result.hidden == {
        "agent_thought_chunk": sum(len(split_chunks(t)) for t in ESSAY_THOUGHTS),
        "plan": 4,
        "tool_call": 2,
        "tool_call_update": 2,
    }
    assert list(tmp_path.iterdir()) == []  # the edit tool call only shows a diff


@pytest.mark.parametrize(
    ("persona", "stop_reason", "error", "says"),
    [
        ("refusal", SubagentStopReason.REFUSAL, None, "I'm sorry, but I can't help with that request."),
        ("max-tokens", SubagentStopReason.MAX_TOKENS, None, "a long and careful answer"),
        (
            "max-turn-requests",
            SubagentStopReason.ERROR,
            "agent stopped with 'max_turn_requests'",
            "ran out of model requests for this turn",
        ),
    ],
)
async def test_demo_stop_reasons_map_as_the_rfc_says(
    persona: str, stop_reason: SubagentStopReason, error: str | None, says: str
) -> None:
    result, _ = await run_demo(persona, "--delay", "0", prompt="Why?")
    assert result.stop_reason is stop_reason
    assert result.error == error
    assert result.output.startswith("You asked: Why?\n\n")
    assert says in result.output  # the partial answer is kept whatever the stop reason


# Measured, not asserted tightly: spawn -> first chunk, dispose -> the group is gone ----------------


async def test_measure_spawn_to_first_chunk_and_dispose_to_exit() -> None:
    """Run with `-s` to see the numbers. The bounds only catch something badly wrong."""
    first_chunk: list[float] = []
    dispose: list[float] = []
    for _ in range(2):
        config = demo("slow", "--delay", "30")  # the first chunk at once, then a long pause
        started = time.monotonic()
        run = await AcpSubagentProvider(config).start(SubagentRequest("hi"))
        async for event in run.events():
            if isinstance(event, OutputDelta):
                break
        first_chunk.append(time.monotonic() - started)
        started = time.monotonic()
        await run.dispose()
        dispose.append(time.monotonic() - started)
        assert (await run.result()).stop_reason is SubagentStopReason.ABORTED
        assert not group_alive(run.pid or 0)

    # The stubborn persona ignores session/cancel and SIGTERM: dispose takes both graces, then SIGKILL.
    config = demo("stubborn", "--delay", "0.05")
    run = await AcpSubagentProvider(config).start(SubagentRequest("hi"))
    async for event in run.events():
        if isinstance(event, OutputDelta):
            break
    started = time.monotonic()
    await run.dispose()
    stubborn = time.monotonic() - started
    assert (await run.result()).exit_code == -9
    assert not group_alive(run.pid or 0)

    print(
        "\ndemo agent timings (s): "
        f"spawn->first chunk {', '.join(f'{t:.3f}' for t in first_chunk)} "
        f"(median {statistics.median(first_chunk):.3f}); "
        f"dispose->exit (slow, honours cancel) {', '.join(f'{t:.3f}' for t in dispose)} "
        f"(median {statistics.median(dispose):.3f}); "
        f"dispose->exit (stubborn, cancel_grace {config.cancel_grace} + term_grace {config.term_grace}) "
        f"{stubborn:.3f}"
    )
    assert max(first_chunk) < 15  # a Python SDK child pays ~0.5-2 s of imports on a 2-core box
    assert max(dispose) < config.cancel_grace  # honoured cancel: no grace used up
    assert config.cancel_grace + config.term_grace <= stubborn < config.cancel_grace + config.term_grace + 1
