"""The Claude provider: the Claude Agent SDK with the Claude Code CLI it bundles, against a local
stand-in of the Anthropic Messages API."""

from __future__ import annotations

import dataclasses
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import pytest
from click.testing import CliRunner
from textual.widgets import Static

from acp_tui import SubagentRequest, Subagents, SubagentStopReason
from acp_tui.claude.probe import describe_claude
from acp_tui.claude.provider import ClaudeSubagentProvider
from acp_tui.cli.main import main
from acp_tui.core.model import (
    CommandInfo,
    CommandsOffered,
    OutputDelta,
    PermissionDecided,
    RunEvent,
    SessionStarted,
    SubagentResult,
    ToolCallChanged,
    UsageReported,
)
from acp_tui.policy.names import resolve
from acp_tui.session.asks import AskQueue
from acp_tui.settings.provider_config import AcpProviderConfig
from acp_tui.settings.schema import AgentPreset
from acp_tui.ui.app import SupervisorApp
from acp_tui.ui.screens.activity_screen import ActivityScreen
from acp_tui.ui.widgets.fitted_table import FittedTable
from tests.sandbox.support import need_bwrap
from tests.standins.anthropic_messages import API_KEY, MessagesStandIn, answer, tool_use
from tests.ui.helpers import all_finished, settings, wait_until

ROGUE = str(Path(__file__).with_name("rogue_cli.py"))


@pytest.fixture
def api() -> Iterator[MessagesStandIn]:
    with MessagesStandIn() as stand_in:
        yield stand_in


def preset(api: MessagesStandIn, where: Path, policy: str = "reject") -> AcpProviderConfig:
    env = {**api.env(), "HOME": str(where / "home")}  # a home of its own (a value of env: masked)
    return AcpProviderConfig(
        command="claude",
        env=env,
        permission_policy=policy,
        cancel_grace=2.0,
        term_grace=1.0,
    )


async def ask(config: AcpProviderConfig, prompt: str, cwd: Path) -> tuple[SubagentResult, list[RunEvent]]:
    run = await ClaudeSubagentProvider(config).start(SubagentRequest(prompt=prompt, cwd=str(cwd)))
    events = [event async for event in run.events()]
    return await run.result(), events


async def test_the_answer_streams_with_its_cost_and_usage(api: MessagesStandIn, tmp_path: Path) -> None:
    api.script(answer("PO", "NG"))
    result, events = await ask(preset(api, tmp_path), "say PONG", tmp_path)
    assert result.stop_reason is SubagentStopReason.COMPLETED, (result.error, result.stderr_tail)
    assert result.output == "PONG"
    assert [e.text for e in events if isinstance(e, OutputDelta)] == ["PO", "NG"]
    started = next(e for e in events if isinstance(e, SessionStarted))
    assert started.agent is not None and started.agent.name == "Claude Code"
    [offered] = [e.commands for e in events if isinstance(e, CommandsOffered)]  # for the prompt's `/`
    assert any(command.name == "compact" and command.hint for command in offered)
    usage = next(e.usage for e in events if isinstance(e, UsageReported))
    assert usage == result.usage and usage.cost is not None and usage.cost.amount > 0
    assert usage.used == 127  # input 100 + cache read 20 + output 7
    assert API_KEY not in repr(result) and api.keys == [API_KEY]  # passed explicitly, shown masked
    assert result.session_id and result.ended_by in ("exit", "sigterm")


@pytest.mark.parametrize(("policy", "decision"), [("reject", "reject_once"), ("allow", "allow_once")])
async def test_a_tool_use_is_decided_by_the_policy_and_recorded(
    api: MessagesStandIn, tmp_path: Path, policy: str, decision: str
) -> None:
    api.script(
        tool_use("Bash", {"command": "echo hi > proof.txt", "description": "write proof"}), answer("Done")
    )
    result, events = await ask(preset(api, tmp_path, policy), "write the proof", tmp_path)
    assert result.stop_reason is SubagentStopReason.COMPLETED, (result.error, result.stderr_tail)
    assert result.permissions
    [record] = result.permissions
    assert (record.title, record.kind, record.decision, record.rule) == (
        "Bash: echo hi > proof.txt",
        "execute",
        decision,
        policy,
    )
    assert (tmp_path / "proof.txt").exists() == (policy == "allow")
    assert result.tool_kinds == {"execute": 1}
    # Followed as an ACP agent's tool call is: announced, asked about, ended (a denial fails it).
    changes = [event.call for event in events if isinstance(event, ToolCallChanged)]
    assert {call.id for call in changes} == {"toolu_1"}
    assert changes[0].status == "pending" and changes[-1].status == (
        "completed" if policy == "allow" else "failed"
    )
    [call] = result.tool_calls
    assert (call.title, call.kind, call.raw_input["command"]) == (
        "Bash: echo hi > proof.txt",
        "execute",
        "echo hi > proof.txt",
    )
    assert call == changes[-1] and call.ended_at is not None
    tool_result = api.requests[1]["messages"][-1]["content"][0]
    assert tool_result["type"] == "tool_result" and tool_result.get("is_error", False) == (policy == "reject")


async def test_cancel_interrupts_the_turn_and_ends_the_cli_with_all_it_started(
    api: MessagesStandIn, tmp_path: Path
) -> None:
    """Mid-tool: Claude Code runs an allowed command that would outlive it; the cancel leaves
    nothing of either running (the suite's fixture finds any process of ours left)."""
    api.script(tool_use("Bash", {"command": "tail -f /dev/null"}, saying="partial"), answer("never"))
    subagents = Subagents()
    await subagents.register("claude", ClaudeSubagentProvider(preset(api, tmp_path, "allow")))
    run = await subagents.start("claude", SubagentRequest(prompt="go slowly", cwd=str(tmp_path)))
    async for event in run.events():
        if isinstance(event, PermissionDecided):
            break
    await run.dispose("cancelled by a person")
    result = await run.result()
    assert (result.stop_reason, result.error, result.output) == (
        SubagentStopReason.ABORTED,
        "cancelled by a person",
        "partial",
    )
    assert result.ended_by is not None
    await subagents.aclose()


async def test_probe_says_the_models_and_modes_and_prompts_nothing(
    api: MessagesStandIn, tmp_path: Path
) -> None:
    record, started = await describe_claude(preset(api, tmp_path))
    assert started and record["error"] is None, record["error"]
    assert record["agent"]["name"] == "Claude Code"
    options = {option["id"]: option for option in record["config_options"]}
    assert "default" in options["model"]["values"] and options["model"]["current"] == "default"
    assert "plan" in options["mode"]["values"] and options["mode"]["category"] == "mode"
    assert "compact" in [command["name"] for command in record["commands"]]
    assert api.requests == []


def test_the_commands_of_claude_s_initialize_are_read_whatever_it_sends() -> None:
    from acp_tui.claude.stream import _commands

    listed = [
        {"name": "compact", "description": "Compact", "argumentHint": "<instructions>", "builtin": True},
        {"name": "init", "description": "Start", "argumentHint": ""},
        {"name": 3, "description": "not a name"},
        {"name": "x", "description": None},
        {"name": "y", "description": "", "argumentHint": ["no"]},
        "compact",
    ]
    compact = CommandInfo("compact", "Compact", "<instructions>")
    assert _commands(listed) == (compact, CommandInfo("init", "Start"))
    assert _commands({"compact": {}}) == _commands(None) == ()


async def test_a_cli_that_writes_garbage_and_dies_ends_error_with_the_partial_answer(tmp_path: Path) -> None:
    config = AcpProviderConfig(command=sys.executable, args=[ROGUE], term_grace=0.3)
    result, _ = await ask(config, "hello", tmp_path)
    assert (result.stop_reason, result.output) == (SubagentStopReason.ERROR, "partial")
    assert result.error == "agent exited with code 3: rogue: boom"
    assert any("{this is no JSON" in line for line in result.stderr_tail)  # dropped, and said so


async def test_a_cli_that_dies_at_start_ends_error_at_once(tmp_path: Path) -> None:
    """Not after the SDK's minute of waiting for its `initialize` to be answered."""
    dies = AcpProviderConfig(command=sys.executable, args=["-c", "import sys; sys.exit('no way')"])
    result, _ = await ask(dies, "hello", tmp_path)
    assert result.stop_reason is SubagentStopReason.ERROR
    assert result.error == "agent exited with code 1: no way"


async def test_the_ask_policy_hands_the_request_to_a_person_who_says_whose_it_is(
    api: MessagesStandIn, tmp_path: Path
) -> None:
    api.script(tool_use("Write", {"file_path": str(tmp_path / "a.txt"), "content": "hi"}), answer("Done"))
    runs: list[object] = []
    attempt = SimpleNamespace(agent="claude")
    queue = AskQueue(attempt_of=lambda run: attempt if run in runs else None)  # type: ignore[arg-type,return-value]
    queue.listen(lambda pending: queue.answer(pending, "allow") if pending in queue.pending else None)
    asking = resolve("ask", ask_handler=queue.ask)
    config = dataclasses.replace(preset(api, tmp_path), permission_policy=asking)
    run = await ClaudeSubagentProvider(config).start(SubagentRequest(prompt="write", cwd=str(tmp_path)))
    runs.append(run)
    seen = []
    queue.listen(lambda pending: seen.append((pending.agent, pending.ask.title, pending.ask.kind)))
    result = await run.result()
    assert result.stop_reason is SubagentStopReason.COMPLETED, result.error
    assert seen[0] == ("claude", f"Write: {tmp_path / 'a.txt'}", "edit")
    assert (tmp_path / "a.txt").read_text() == "hi"
    assert [(r.decision, r.rule) for r in result.permissions] == [("allow_once", "ask")]
    [call] = result.tool_calls  # an edit's content is its diff, its path a location
    assert (call.kind, call.status, call.paths) == ("edit", "completed", (str(tmp_path / "a.txt"),))
    assert "+hi" in call.content


def test_a_traced_run_keeps_its_stream_json_and_policy_check_reads_its_record(
    api: MessagesStandIn, tmp_path: Path
) -> None:
    """`acp-tui run --trace`: the trace holds both directions of Claude Code's stream-json (the
    key masked); `acp-tui policy check` decides the run's request again from its record (a
    Claude trace holds no ACP conversation to read it from)."""
    api.script(tool_use("Bash", {"command": "git push origin main"}), answer("Pushed"))
    env = {**api.env(), "HOME": str(tmp_path / "home")}
    config = tmp_path / "agents.toml"
    config.write_text(
        '[[agent]]\nname = "claude"\nprovider = "claude"\n'
        f"env = {{ {', '.join(f'{k} = {json.dumps(v)}' for k, v in env.items())} }}\n"
        '[policy.no-push]\ndefault = "allow"\n'
        '[[policy.no-push.rule]]\nname = "no pushes"\naction = "reject"\ncommand = "git push*"\n'
    )
    traces, records = tmp_path / "traces", tmp_path / "runs.jsonl"
    common = ["--config", str(config)]
    run = [
        "run",
        *common,
        "--policy",
        "allow",
        "--format",
        "json",
        "--trace",
        str(traces),
        "--prompt",
        "push",
    ]
    done = CliRunner().invoke(main, [*run, "--cwd", str(tmp_path)], catch_exceptions=False)
    records.write_text(done.stdout)
    [record] = [json.loads(line) for line in done.stdout.splitlines()]
    assert record["stop_reason"] == "completed", record["error"]
    trace = Path(record["trace"])
    assert trace.parent == traces and API_KEY not in trace.read_text()
    lines = [json.loads(line) for line in trace.read_text().splitlines()]
    sent = [line["frame"] for line in lines if line["dir"] == "out"]
    heard = [line["frame"]["type"] for line in lines if line["dir"] == "in"]
    assert sent[0]["request"]["subtype"] == "initialize"
    assert any(frame["type"] == "user" and frame["message"]["content"] == "push" for frame in sent)
    assert any(frame["type"] == "control_response" for frame in sent)  # the permission's answer
    assert "control_request" in heard and heard[-1] == "result"
    checked = CliRunner().invoke(
        main,
        ["policy", "check", *common, "--policy", "no-push", "--format", "json", str(records), str(traces)],
    )
    assert checked.exit_code == 1, checked.output
    [row] = [json.loads(line) for line in checked.stdout.splitlines()]
    assert (row["title"], row["was"], row["now"]) == (
        "Bash: git push origin main",
        {"decision": "allow_once", "rule": "allow"},
        {"decision": "reject_once", "rule": "no pushes"},
    )


async def test_under_the_sandbox_claude_code_and_its_commands_see_only_the_workspace(
    api: MessagesStandIn, tmp_path: Path
) -> None:
    """`sandbox = "workspace"`: the CLI starts through bubblewrap like any confined agent, its
    home (in the preset's env) inside the workspace; an allowed command writes in the workspace,
    and what lies outside it is not there to read or write."""
    need_bwrap()
    work, outside = tmp_path / "work", tmp_path / "outside"
    work.mkdir()
    outside.mkdir()
    (outside / "secret.txt").write_text("not yours")
    command = f"cat {outside}/secret.txt > seen.txt; touch {outside}/escaped; echo done > proof.txt"
    api.script(tool_use("Bash", {"command": command}), answer("Done"))
    config = dataclasses.replace(preset(api, work, "allow"), sandbox="workspace")
    result, _ = await ask(config, "try", work)
    assert result.stop_reason is SubagentStopReason.COMPLETED, (result.error, result.stderr_tail)
    assert (work / "proof.txt").read_text() == "done\n"
    assert (work / "seen.txt").read_text() == "" and not (outside / "escaped").exists()


async def test_the_apps_activity_shows_claudes_tool_calls(api: MessagesStandIn, tmp_path: Path) -> None:
    """`o` on a Claude pane: the tool call as a row (denied: failed), the counts as for ACP."""
    api.script(tool_use("Bash", {"command": "rm -rf build"}), answer("I could not."))
    env = {**api.env(), "HOME": str(tmp_path / "home")}
    claude = AgentPreset("claude", "claude", provider="claude", env=env, cwd=str(tmp_path))
    app = SupervisorApp(settings(claude, prompt="clean up"))
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.press("enter")
        await wait_until(pilot, all_finished(app))
        await pilot.press("o")
        await wait_until(pilot, lambda: isinstance(app.screen, ActivityScreen))
        table = app.screen.query_one(FittedTable)
        [row] = [[str(cell) for cell in table.get_row_at(i)] for i in range(table.row_count)]
        assert [row[0], *row[2:4]] == ["failed", "execute", "Bash: rm -rf build"]
        counts = str(app.screen.query_one("#counts", Static).render())
        assert counts.startswith("1 tool call (1 failed)") and "tool" not in counts.partition(")")[2]


async def test_the_apps_probe_describes_claude_code_and_keeps_its_commands(
    api: MessagesStandIn, tmp_path: Path
) -> None:
    """`p` in F2 on a Claude preset: Claude Code's own probe (never ACP spoken to it), its options
    for F2 and its slash commands for the prompt's `/`."""
    env = {**api.env(), "HOME": str(tmp_path / "home")}
    claude = AgentPreset("claude", "claude", provider="claude", env=env, cwd=str(tmp_path))
    app = SupervisorApp(settings(claude))
    async with app.run_test(size=(120, 36)):
        offered, error = await app.next_runs.probe("claude")
        assert error is None
        assert [option.id for option in offered] == ["model", "mode"]
        assert "compact" in [command.name for command in app.next_runs.commands["claude"]]
    assert api.requests == []


def test_a_result_of_the_wrong_shapes_is_read_as_its_types_say() -> None:
    """The SDK builds the result from the CLI's JSON unchecked: a string cost, a list stop reason,
    a non-dict usage would raise where they are added up or mapped."""
    from typing import Any

    from claude_agent_sdk import ResultMessage

    from acp_tui.claude.stream import _checked

    wrong: Any = {"subtype": "success", "duration_ms": 1, "duration_api_ms": 1, "is_error": "no"}
    result = _checked(
        ResultMessage(
            **wrong,
            num_turns=1,
            session_id=["x"],  # type: ignore[arg-type]
            stop_reason=["end_turn"],  # type: ignore[arg-type]
            total_cost_usd="0.5",  # type: ignore[arg-type]
            usage=[1],  # type: ignore[arg-type]
            model_usage={"m": 3},  # type: ignore[dict-item]
            errors=[1, "said"],  # type: ignore[list-item]
        )
    )
    assert (result.is_error, result.session_id, result.stop_reason, result.total_cost_usd) == (
        True,
        "",
        None,
        None,
    )
    assert (result.usage, result.model_usage, result.errors) == (None, {}, ["said"])
