"""Session setup over real stdio, against the scripted agent: options and modes before the prompt,
what the agent lacks, usage, authentication failures, MCP servers, session/close."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

from acp_tui import AcpProviderConfig, AcpSubagentProvider, SubagentRequest, SubagentStopReason
from acp_tui.core.model import (
    AgentInfo,
    AuthMethodInfo,
    ConfigOptionInfo,
    Cost,
    HiddenUpdate,
    RunEvent,
    SessionStarted,
    SubagentResult,
    Usage,
    UsageReported,
)
from acp_tui.process.group import group_alive
from tests.helpers import scripted, unhurried

CONFIG = "mode:read-only|auto|full-access;model:gpt-5|gpt-5-mini;thinking:bool"


async def run_to_end(config: AcpProviderConfig) -> tuple[SubagentResult, list[RunEvent]]:
    run = await AcpSubagentProvider(config).start(SubagentRequest("go"))
    events = [event async for event in run.events()]
    assert run.pid is None or not group_alive(run.pid)
    return await run.result(), events


def frames(record: Path) -> list[dict[str, Any]]:
    """What the agent received, in order (requests and notifications; our answers left out)."""
    return [m for m in map(json.loads, record.read_text().splitlines()) if "method" in m]


def methods(record: Path) -> list[str]:
    return [m["method"] for m in frames(record)]


def with_options(config: AcpProviderConfig, **kw: Any) -> AcpProviderConfig:
    return dataclasses.replace(config, **kw)


async def test_config_options_are_set_in_order_before_the_prompt(tmp_path: Path) -> None:
    record = tmp_path / "frames.jsonl"
    config = with_options(
        scripted(session_config=CONFIG, record=record, config_update=1),
        options={"model": "gpt-5-mini", "mode": "auto", "thinking": "true"},
    )
    result, events = await run_to_end(config)

    assert result.stop_reason is SubagentStopReason.COMPLETED, result.error
    sent = frames(record)
    assert [m["method"] for m in sent] == [
        "initialize",
        "session/new",
        "session/set_config_option",
        "session/set_config_option",
        "session/set_config_option",
        "session/prompt",
    ]
    assert [(m["params"]["configId"], m["params"]["value"]) for m in sent[2:5]] == [
        ("model", "gpt-5-mini"),
        ("mode", "auto"),
        ("thinking", True),  # a boolean option takes a boolean
    ]
    assert result.options == {"mode": "auto", "model": "gpt-5-mini", "thinking": "true"}
    [started] = [e for e in events if isinstance(e, SessionStarted)]
    assert (started.agent, started.options, started.auth_methods) == (None, result.options, ())
    # What a chooser may offer next time: every option, its category, its values.
    assert started.offered == (
        ConfigOptionInfo("mode", "Mode", "mode", "auto", ("read-only", "auto", "full-access")),
        ConfigOptionInfo("model", "Model", "model", "gpt-5-mini", ("gpt-5", "gpt-5-mini")),
        ConfigOptionInfo("thinking", "Thinking", None, "true", ("true", "false"), "boolean"),
    )
    # The agent's config_option_update notifications are counted as hidden updates.
    assert result.hidden.get("config_option_update") == 3


async def test_mode_falls_back_to_set_mode_when_the_agent_offers_modes_only(tmp_path: Path) -> None:
    record = tmp_path / "frames.jsonl"
    config = with_options(
        scripted(session_modes="ask|accept-edits|auto-approve", record=record), options={"mode": "ask"}
    )
    result, events = await run_to_end(config)

    assert result.stop_reason is SubagentStopReason.COMPLETED, result.error
    sent = frames(record)
    assert [m["method"] for m in sent] == ["initialize", "session/new", "session/set_mode", "session/prompt"]
    assert sent[2]["params"] == {"sessionId": "sess-1", "modeId": "ask"}
    assert result.options == {"mode": "ask"}
    [started] = [e for e in events if isinstance(e, SessionStarted)]
    assert started.offered == (
        ConfigOptionInfo("mode", "Mode", "mode", "ask", ("ask", "accept-edits", "auto-approve")),
    )


async def test_the_mode_decides_whether_the_agent_asks(tmp_path: Path) -> None:
    agent = scripted(session_modes="auto-approve|ask", ask_in_mode="ask", policy="allow")
    asked, _ = await run_to_end(with_options(agent, options={"mode": "ask"}))
    silent, _ = await run_to_end(agent)
    assert [p.decision for p in asked.permissions] == ["allow_once"]
    assert silent.permissions == [] and silent.options == {"mode": "auto-approve"}


async def test_a_value_not_offered_ends_the_run_before_any_prompt(tmp_path: Path) -> None:
    record = tmp_path / "frames.jsonl"
    config = with_options(
        scripted(session_config=CONFIG, record=record), options={"model": "gpt-5", "mode": "yolo"}
    )
    result, _ = await run_to_end(config)

    assert result.stop_reason is SubagentStopReason.ERROR
    assert (
        result.error
        == 'option "mode": the agent offers no value "yolo" (offered: read-only, auto, full-access)'
    )
    assert methods(record) == ["initialize", "session/new", "session/set_config_option"]  # model, then stop


async def test_a_mode_not_offered_names_the_modes(tmp_path: Path) -> None:
    record = tmp_path / "frames.jsonl"
    config = with_options(scripted(session_modes="default|plan", record=record), options={"mode": "yolo"})
    result, _ = await run_to_end(config)
    assert result.error == 'option "mode": the agent offers no value "yolo" (offered: default, plan)'
    assert methods(record) == ["initialize", "session/new"]


async def test_an_unknown_option_id_names_the_ids_the_agent_has(tmp_path: Path) -> None:
    record = tmp_path / "frames.jsonl"
    result, _ = await run_to_end(
        with_options(scripted(session_config=CONFIG, record=record), options={"colour": "red"})
    )
    assert result.stop_reason is SubagentStopReason.ERROR
    assert result.error == 'option "colour": the agent has no such option (it has: mode, model, thinking)'
    assert "session/prompt" not in methods(record)

    bare, _ = await run_to_end(with_options(scripted(), options={"mode": "ask"}))
    assert bare.error == 'option "mode": the agent has no such option (it offers no options)'


async def test_usage_is_recorded_and_reported_and_counted_as_hidden() -> None:
    result, events = await run_to_end(scripted(usage="5300/200000/0.42/USD", usage_twice=1))
    assert result.stop_reason is SubagentStopReason.COMPLETED, result.error
    assert result.usage == Usage(used=5300, size=200000, cost=Cost(0.42, "USD"))
    reported = [e.usage for e in events if isinstance(e, UsageReported)]
    # Read after the run ended: the two reports waited unread, and only the latest is kept.
    assert reported[-1] == result.usage and set(reported) <= {Usage(used=2650, size=200000), result.usage}
    assert result.hidden["usage_update"] == 2
    assert [e for e in events if isinstance(e, HiddenUpdate) and e.kind == "usage_update"]

    plain, _ = await run_to_end(scripted())
    assert plain.usage is None


async def test_agent_info_and_auth_methods_are_recorded() -> None:
    result, _ = await run_to_end(scripted(agent_info="codex-acp/Codex/0.9.1", auth_methods="codex"))
    assert result.agent == AgentInfo("codex-acp", "Codex", "0.9.1")
    assert result.auth_methods == (
        AuthMethodInfo("chatgpt", "Login with ChatGPT", "Sign in with your account", None),
        AuthMethodInfo("api-key", "Use CODEX_API_KEY", None, "env_var", vars=("CODEX_API_KEY",)),
        AuthMethodInfo("tui", "Log in in a terminal", None, "terminal", args=("--login",)),
    )


async def test_authentication_required_names_the_methods_and_what_to_do() -> None:
    for step in ("session/new", "session/prompt"):
        config = with_options(
            scripted(auth_methods="codex", fail=f"{step}:-32000:Authentication required"), name="codex"
        )
        result, _ = await run_to_end(config)
        assert result.stop_reason is SubagentStopReason.ERROR
        assert result.error == (
            'authentication required: codex offers "Login with ChatGPT", "Use CODEX_API_KEY", "Log in in a'
            ' terminal" (set CODEX_API_KEY in this agent\'s env; or log in with "Log in in a terminal" from'
            f' the app); {step} said "Authentication required"'
        )
        assert [m.id for m in result.auth_methods] == ["chatgpt", "api-key", "tui"]

    opencode = with_options(
        scripted(auth_methods="opencode", fail="session/new:-32000:Auth needed"), name="oc"
    )
    result, _ = await run_to_end(opencode)
    assert result.error == (
        'authentication required: oc offers "Login" (run "opencode auth login" in a terminal);'
        ' session/new said "Auth needed"'
    )


async def test_mcp_servers_reach_the_agent_exactly_as_configured(tmp_path: Path) -> None:
    record = tmp_path / "frames.jsonl"
    servers = (
        {
            "name": "fs",
            "command": "mcp-fs",
            "args": ["--root", "."],
            "env": [{"name": "ROOT", "value": "/x"}],
        },
        {
            "type": "http",
            "name": "docs",
            "url": "https://mcp.example.com/mcp",
            "headers": [{"name": "Authorization", "value": "Bearer t"}],
        },
        {"type": "sse", "name": "events", "url": "https://mcp.example.com/sse", "headers": []},
    )
    result, _ = await run_to_end(with_options(scripted(record=record), mcp_servers=servers))
    assert result.stop_reason is SubagentStopReason.COMPLETED, result.error
    new = next(m for m in frames(record) if m["method"] == "session/new")
    assert new["params"]["mcpServers"] == list(servers)


async def test_session_close_is_sent_when_advertised_and_not_otherwise(tmp_path: Path) -> None:
    advertised, plain = tmp_path / "advertised.jsonl", tmp_path / "plain.jsonl"
    result, _ = await run_to_end(scripted(can_close=1, record=advertised))
    assert result.stop_reason is SubagentStopReason.COMPLETED, result.error
    assert methods(advertised) == ["initialize", "session/new", "session/prompt", "session/close"]

    await run_to_end(scripted(record=plain))
    assert methods(plain) == ["initialize", "session/new", "session/prompt"]


async def test_session_close_on_dispose_stays_within_the_cancel_grace(tmp_path: Path) -> None:
    from acp_tui import OutputDelta

    record = tmp_path / "frames.jsonl"
    run = await AcpSubagentProvider(unhurried(scripted(can_close=1, forever=1, record=record))).start(
        SubagentRequest("go")
    )
    async for event in run.events():
        if isinstance(event, OutputDelta):
            break
    await run.dispose()
    result = await run.result()
    assert result.stop_reason is SubagentStopReason.ABORTED
    assert "session/close" in methods(record)
    assert methods(record).index("session/cancel") < methods(record).index("session/close")
    assert result.ended_by == "exit"  # closed, then gone by itself: no grace ran out, nothing signalled


async def test_an_option_named_by_its_category_reaches_an_option_with_another_id(tmp_path: Path) -> None:
    record = tmp_path / "frames.jsonl"
    spec = "approval@mode:suggest|auto-edit|full-auto;llm@model:o3|o4"
    config = with_options(
        scripted(session_config=spec, record=record), options={"mode": "auto-edit", "model": "o4"}
    )
    result, _ = await run_to_end(config)
    assert result.stop_reason is SubagentStopReason.COMPLETED, result.error
    sent = [m["params"] for m in frames(record) if m["method"] == "session/set_config_option"]
    assert [(p["configId"], p["value"]) for p in sent] == [("approval", "auto-edit"), ("llm", "o4")]
    assert result.options == {"approval": "auto-edit", "llm": "o4"}

    wrong, _ = await run_to_end(with_options(scripted(session_config=spec), options={"mode": "yolo"}))
    assert (
        wrong.error
        == 'option "approval": the agent offers no value "yolo" (offered: suggest, auto-edit, full-auto)'
    )
