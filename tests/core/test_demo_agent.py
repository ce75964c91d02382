"""The keyless demo agent, end to end: the RFC's PONG check, hidden updates, stop reasons, timings."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from acp_tui import AcpSubagentProvider, OutputDelta, SubagentRequest, SubagentStopReason
from acp_tui.core.model import PermissionDecided, PermissionOptionInfo, RunEvent, SubagentResult
from acp_tui.demo.personas.essay import ESSAY_BODY, ESSAY_CODE, ESSAY_INTRO, ESSAY_OUTRO, ESSAY_PERSONAS
from acp_tui.demo.turn import split_chunks, summarize
from acp_tui.process.group import group_alive
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
    assert result.hidden == {"tool_call": 1, "tool_call_update": 1, "usage_update": 1}


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
        "usage_update": 1,
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


# Session setup: modes and models, usage with cost, a login, session/close ----------------------------


async def run_demo_with(
    persona: str,
    *,
    cwd: Path,
    options: dict[str, str] | None = None,
    env: dict[str, str] | None = None,
    policy: str = "allow",
) -> tuple[SubagentResult, list[RunEvent]]:
    import dataclasses

    config = dataclasses.replace(
        demo(persona, policy=policy), options=options or {}, env=env or {}, trace_dir=str(cwd / "trace")
    )
    run = await AcpSubagentProvider(config).start(SubagentRequest("ping", cwd=str(cwd)))
    events = [event async for event in run.events()]
    assert not group_alive(run.pid or 0)
    return await run.result(), events


def sent_methods(cwd: Path) -> list[str]:
    import json

    [trace] = (cwd / "trace").iterdir()
    frames = [json.loads(line) for line in trace.read_text().splitlines()]
    return [f["frame"]["method"] for f in frames if f.get("dir") == "out" and "method" in f.get("frame", {})]


async def test_the_demo_offers_mode_and_model_and_the_mode_decides_whether_it_asks(tmp_path: Path) -> None:
    from acp_tui.core.model import AgentInfo, SessionStarted

    (tmp_path / "ask").mkdir()
    asks, events = await run_demo_with("pong", cwd=tmp_path / "ask")
    assert asks.options == {"mode": "ask", "model": "demo-fast"}
    assert [p.decision for p in asks.permissions] == ["allow_once"]
    assert asks.agent == AgentInfo("acp-tui-demo", "acp-tui demo (pong)", "0.1.0")
    assert next(e for e in events if isinstance(e, SessionStarted)).options == asks.options

    (tmp_path / "auto").mkdir()
    auto, _ = await run_demo_with(
        "pong", cwd=tmp_path / "auto", options={"mode": "auto", "model": "demo-thorough"}
    )
    assert auto.stop_reason is SubagentStopReason.COMPLETED, auto.error
    assert auto.options == {"mode": "auto", "model": "demo-thorough"}
    assert auto.permissions == [] and (tmp_path / "auto" / "proof.txt").read_text() == "PONG\n"
    assert sent_methods(tmp_path / "auto") == [
        "initialize",
        "session/new",
        "session/set_config_option",
        "session/set_config_option",
        "session/prompt",
        "session/close",
    ]

    (tmp_path / "ro").mkdir()
    read_only, _ = await run_demo_with("pong", cwd=tmp_path / "ro", options={"mode": "read-only"})
    assert read_only.permissions == [] and not (tmp_path / "ro" / "proof.txt").exists()


async def test_the_demo_reports_usage_with_a_cost(tmp_path: Path) -> None:
    from acp_tui.core.model import Cost, Usage

    result, _ = await run_demo_with("echo", cwd=tmp_path)
    assert result.usage == Usage(used=201, size=200_000, cost=Cost(0.000402, "USD"))


async def test_the_locked_demo_needs_a_login_and_says_how(tmp_path: Path) -> None:
    locked, _ = await run_demo_with("locked", cwd=tmp_path)
    assert locked.stop_reason is SubagentStopReason.ERROR
    assert locked.error == (
        'authentication required: python3.11 offers "Demo account", "Use ACP_TUI_DEMO_KEY", "Log in in a'
        ' terminal" (set ACP_TUI_DEMO_KEY in this agent\'s env; or log in with "Log in in a terminal"'
        ' from the app); session/new said "Authentication required"'
    ).replace("python3.11", Path(demo("locked").command).name)
    assert [m.type for m in locked.auth_methods] == [None, "env_var", "terminal"]
    assert locked.auth_methods[2].args == ("--login",)

    (tmp_path / "key").mkdir()
    keyed, _ = await run_demo_with("locked", cwd=tmp_path / "key", env={"ACP_TUI_DEMO_KEY": "anything"})
    assert keyed.stop_reason is SubagentStopReason.COMPLETED, keyed.error
    assert keyed.output == "ping"

    # The terminal login: the agent's own command line plus the method's args, as a client runs it.
    import subprocess
    import sys

    from acp_tui.acp.auth import terminal_login

    argv = terminal_login(
        locked.auth_methods[2], sys.executable, ["-m", "acp_tui.demo.agent", "--persona", "locked"]
    )
    assert argv is not None and argv[-1] == "--login"
    done = await asyncio.to_thread(
        subprocess.run, argv, input="\n", capture_output=True, text=True, timeout=30, check=False
    )
    assert done.returncode == 0, done.stderr
    (tmp_path / "after").mkdir()
    after, _ = await run_demo_with("locked", cwd=tmp_path / "after")
    assert after.stop_reason is SubagentStopReason.COMPLETED, after.error
