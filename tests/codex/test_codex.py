"""The Codex provider against the real `codex app-server`, whose model is the stand-in on 127.0.0.1:
the answer, approvals decided by each policy, cancel, a server dying mid-turn, a follow-up, probe,
a refused config, a rogue server, confinement."""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import sys
from pathlib import Path
from typing import Any

import pytest

from acp_tui import AcpProviderConfig, SubagentRequest, SubagentStopReason
from acp_tui.codex.provider import CodexSubagentProvider
from acp_tui.core.model import (
    OutputDelta,
    PermissionDecided,
    RunEvent,
    SessionStarted,
    Stopping,
    SubagentResult,
    UsageReported,
)
from acp_tui.policy.ask import PermissionAsk
from acp_tui.policy.rules import AskPolicy, Rule, RulePolicy
from tests.sandbox.support import need_bwrap
from tests.standins.openai_responses import HOLD, ResponsesStandIn, answer, command, patch, reasoning


def config(codex: str, home: Path, policy: Any = "reject", **options: str) -> AcpProviderConfig:
    return AcpProviderConfig(
        command=codex,
        args=("app-server",),
        env={"CODEX_HOME": str(home)},
        permission_policy=policy,
        cancel_grace=5.0,
        term_grace=1.0,
        options=options,
    )


async def run_to_end(
    codex: str,
    home: Path,
    workdir: Path,
    *,
    policy: Any = "reject",
    options: dict[str, str] | None = None,
    **request: Any,
) -> tuple[list[RunEvent], SubagentResult]:
    request.setdefault("prompt", "do the task")
    run = await CodexSubagentProvider(config(codex, home, policy, **(options or {}))).start(
        SubagentRequest(cwd=str(workdir), **request)
    )
    events = [event async for event in run.events()]
    return events, await run.result()


async def test_the_answer_streams_and_the_rest_is_hidden_and_counted(
    codex: str, codex_home: Path, stand_in: ResponsesStandIn, tmp_path: Path
) -> None:
    stand_in.script(reasoning("thinking it over") + answer("Hel", "lo, ", "world"))
    schema = {"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]}
    options = {"model": "another-model", "effort": "low"}
    events, result = await run_to_end(codex, codex_home, tmp_path, options=options, output_schema=schema)
    assert result.stop_reason is SubagentStopReason.COMPLETED, result.error
    assert result.output == "Hello, world" == "".join(e.text for e in events if isinstance(e, OutputDelta))
    assert result.hidden == {"reasoning": 1} and result.tool_calls == ()
    [started] = [e for e in events if isinstance(e, SessionStarted)]
    assert started.agent is not None and started.agent.name == "codex" and started.agent.version
    assert started.options["model"] == "another-model" and started.options["sandbox"] == "read-only"
    assert [e.usage.used for e in events if isinstance(e, UsageReported)] == [107]
    assert result.usage is not None and result.usage.size > 0
    assert result.session_id and result.continuation == "resume"
    # The prompt, the preset's options and the output schema (a capability) reached the model.
    [body] = stand_in.requests
    assert "do the task" in str(body["input"]) and body["text"]["format"]["schema"] == schema
    assert (body["model"], body["reasoning"]["effort"]) == ("another-model", "low")


def rule_policy() -> RulePolicy:
    """Allows what the tests' command writes, through a rule that reads the command and its paths."""
    rule = Rule("echo-to-out", "allow", commands=("echo *",), paths=("out.txt",))
    return RulePolicy("lab", (rule,), default="reject")


class Person:
    """An `ask` handler that answers like someone who reads the request, then says yes."""

    def __init__(self) -> None:
        self.asked: list[PermissionAsk] = []

    async def __call__(self, ask: PermissionAsk) -> str | None:
        self.asked.append(ask)
        return next(option.option_id for option in ask.options if option.kind == "allow_once")


@pytest.mark.parametrize("policy", ["reject", "allow", "rule", "ask"])
async def test_a_command_is_decided_by_the_policy_and_recorded(
    codex: str, codex_home: Path, stand_in: ResponsesStandIn, tmp_path: Path, policy: str
) -> None:
    person = Person()
    chosen = {"rule": rule_policy(), "ask": AskPolicy(person)}.get(policy, policy)
    stand_in.script(answer("Let me write it.") + command("echo hi > out.txt"), answer("Done."))
    events, result = await run_to_end(codex, codex_home, tmp_path, policy=chosen)
    assert result.stop_reason is SubagentStopReason.COMPLETED, result.error
    assert result.output == "Let me write it.\nDone."  # the agent went on either way
    [record] = result.permissions
    assert [e.record for e in events if isinstance(e, PermissionDecided)] == [record]
    assert record.kind == "execute" and record.title == "Run echo hi > out.txt"
    assert record.raw_input["command"] == ["/bin/bash", "-c", "echo hi > out.txt"]
    assert record.raw_input["cwd"] == str(tmp_path)
    kinds = [option.kind for option in record.options]
    assert kinds[0] == "allow_once" and kinds[-2:] == ["reject_once", "reject_once"]  # decline, cancel
    written = (tmp_path / "out.txt").exists()
    if policy == "reject":
        assert (record.decision, record.option_id, record.rule) == ("reject_once", "decline", "reject")
        assert not written
    else:
        assert (record.decision, record.option_id) == ("allow_once", "accept")
        assert record.rule == {"allow": "allow", "rule": "echo-to-out", "ask": "ask"}[policy]
        assert written
    if policy == "ask":
        [asked] = person.asked
        assert asked.title == record.title and asked.cwd == str(tmp_path)
    assert result.tool_kinds == {"execute": 1} and result.hidden == {"commandExecution": 1}
    [call] = result.tool_calls
    assert call.status == ("failed" if policy == "reject" else "completed")


async def test_a_file_change_is_asked_with_the_paths_it_writes(
    codex: str, codex_home: Path, stand_in: ResponsesStandIn, tmp_path: Path
) -> None:
    stand_in.script(patch("notes.txt", "hi"), answer("Written."))
    policy = RulePolicy("lab", (Rule("notes", "allow", kinds=("edit",), paths=("notes.*",)),))
    _, result = await run_to_end(codex, codex_home, tmp_path, policy=policy)
    assert result.stop_reason is SubagentStopReason.COMPLETED, result.error
    [record] = result.permissions
    path = str(tmp_path / "notes.txt")
    assert (record.kind, record.title, record.locations) == ("edit", f"Edit {path}", (path,))
    assert (record.decision, record.rule) == ("allow_once", "notes")
    assert "hi" in record.content and list(record.raw_input["changes"]) == [path]
    assert (tmp_path / "notes.txt").read_text() == "hi\n"


@pytest.mark.parametrize("how", ["cancelled", "killed"])
async def test_a_turn_stopped_midway_keeps_its_partial_answer(
    codex: str, codex_home: Path, stand_in: ResponsesStandIn, tmp_path: Path, how: str
) -> None:
    """Cancelled: `turn/interrupt`, honoured (the app-server ends the turn itself), `aborted`. The
    server killed mid-turn: `error`, saying so."""
    stand_in.script(answer("partial ", HOLD, "never sent"))
    run = await CodexSubagentProvider(config(codex, codex_home)).start(
        SubagentRequest("write a long essay", cwd=str(tmp_path))
    )
    events: list[RunEvent] = []
    async for event in run.events():
        events.append(event)
        if isinstance(event, OutputDelta) and how == "cancelled":
            await run.dispose("cancelled by the test")
        elif isinstance(event, OutputDelta):
            assert run.pid is not None
            os.killpg(run.pid, signal.SIGKILL)
    result = await run.result()
    assert result.output == "partial "
    if how == "cancelled":
        assert (result.stop_reason, result.error) == (SubagentStopReason.ABORTED, "cancelled by the test")
        assert next(e.step for e in events if isinstance(e, Stopping)) == "cancel-sent"
        assert run.talk.turn_ended
    else:
        assert result.stop_reason is SubagentStopReason.ERROR
        assert result.error is not None and result.error.startswith("agent was killed by SIGKILL")


async def test_a_follow_up_resumes_the_thread_in_a_fresh_server(
    codex: str, codex_home: Path, stand_in: ResponsesStandIn, tmp_path: Path
) -> None:
    stand_in.script(answer("Blue, noted."), answer("It was blue."))
    _, first = await run_to_end(codex, codex_home, tmp_path, prompt="remember the colour blue")
    assert first.stop_reason is SubagentStopReason.COMPLETED, first.error
    _, second = await run_to_end(
        codex, codex_home, tmp_path, prompt="which colour?", session_id=first.session_id
    )
    assert second.stop_reason is SubagentStopReason.COMPLETED, second.error
    assert second.output == "It was blue." and second.session_id == first.session_id
    history = str(stand_in.requests[1]["input"])  # the model saw the first turn again
    assert "remember the colour blue" in history and "Blue, noted." in history


async def test_a_traced_run_keeps_the_app_servers_json_rpc_both_ways_masked(
    codex: str, codex_home: Path, stand_in: ResponsesStandIn, tmp_path: Path
) -> None:
    secret = "sk-codex-trace-secret-1"
    stand_in.script(answer("Traced"))
    traces = tmp_path / "traces"
    env = {"CODEX_HOME": str(codex_home), "OPENAI_API_KEY": secret}
    traced = dataclasses.replace(config(codex, codex_home), env=env, trace_dir=str(traces))
    run = await CodexSubagentProvider(traced).start(SubagentRequest(f"say {secret}", cwd=str(tmp_path)))
    result = await run.result()
    assert result.stop_reason is SubagentStopReason.COMPLETED, result.error
    assert run.trace_path is not None
    trace = Path(run.trace_path)
    assert trace.parent == traces and secret not in trace.read_text()
    lines = [json.loads(line) for line in trace.read_text().splitlines()]
    sent = [line["frame"].get("method") for line in lines if line["dir"] == "out"]
    heard = [line["frame"].get("method") for line in lines if line["dir"] == "in"]
    assert sent == ["initialize", "initialized", "thread/start", "turn/start"]
    assert "item/agentMessage/delta" in heard and "turn/completed" in heard
    [turn] = [line["frame"] for line in lines if line["frame"].get("method") == "turn/start"]
    assert "say " in json.dumps(turn)  # the prompt, its secret masked


ROGUE = str(Path(__file__).with_name("rogue_app_server.py"))


@pytest.mark.parametrize(
    ("mode", "error", "output"),
    [
        ("no-thread-id", "the app-server sent a malformed response to thread/start: no thread id", ""),
        ("garbage", "agent exited with code 3: rogue: giving up", "partial \x1b[2J"),
    ],
)
async def test_a_server_breaking_the_protocol_ends_error_in_one_line(
    tmp_path: Path, mode: str, error: str, output: str
) -> None:
    rogue = AcpProviderConfig(command=sys.executable, args=(ROGUE, mode), term_grace=0.3)
    run = await CodexSubagentProvider(rogue).start(SubagentRequest("go", cwd=str(tmp_path)))
    result = await run.result()
    assert (result.stop_reason, result.error, result.output) == (SubagentStopReason.ERROR, error, output)
    if mode == "garbage":  # what was dropped is said, with the child's stderr
        assert sum("dropped" in line for line in result.stderr_tail) == 3


def preset_file(tmp_path: Path, codex: str, home: Path, *, provider: str = "codex") -> Path:
    path = tmp_path / "agents.toml"
    path.write_text(
        f'[[agent]]\nname = "cx"\nprovider = "{provider}"\ncommand = "{codex}"\n'
        f'[agent.env]\nCODEX_HOME = "{home}"\n'
    )
    return path


def test_probe_lists_the_models_of_a_codex_preset(codex: str, codex_home: Path, tmp_path: Path) -> None:
    from click.testing import CliRunner

    from acp_tui.cli.main import main

    args = ["probe", "--config", str(preset_file(tmp_path, codex, codex_home)), "--agent", "cx"]
    done = CliRunner().invoke(main, [*args, "--format", "json"], catch_exceptions=False)
    assert done.exit_code == 0, done.output
    record = json.loads(done.stdout)
    assert record["agent"]["name"] == "codex" and record["error"] is None
    [models] = record["config_options"]
    assert (models["id"], models["category"], models["current"]) == ("model", "model", "stand-in-model")
    assert models["values"]  # Codex's own catalogue
    assert not (codex_home / "sessions").exists()  # the probe's thread was kept in memory only


@pytest.mark.parametrize(
    ("changes", "error"),
    [
        (
            {"options": {"mode": "auto"}},
            "codex takes no option mode (it takes model, sandbox, approvalPolicy, effort)",
        ),
        (
            {"mcp_servers": ({"name": "files", "command": "mcp-files", "args": [], "env": []},)},
            "codex takes its MCP servers from its own config.toml, not from mcp_servers",
        ),
    ],
)
async def test_what_a_codex_run_cannot_honour_is_refused_before_anything_starts(
    tmp_path: Path, changes: dict[str, Any], error: str
) -> None:
    refused = AcpProviderConfig(command="codex-that-never-runs", **changes)
    run = await CodexSubagentProvider(refused).start(SubagentRequest("go", cwd=str(tmp_path)))
    result = await run.result()
    assert (result.stop_reason, result.error, result.exit_code) == (SubagentStopReason.ERROR, error, None)


async def test_a_server_that_refuses_its_config_ends_error_with_its_reason(
    codex: str, codex_home: Path, tmp_path: Path
) -> None:
    (codex_home / "config.toml").write_text('approval_policy = "untrusted"\n')  # 0.171 refuses it
    broken = dataclasses.replace(
        config(codex, codex_home), env={"CODEX_HOME": str(codex_home), "RUST_BACKTRACE": "1"}
    )
    run = await CodexSubagentProvider(broken).start(SubagentRequest("go", cwd=str(tmp_path)))
    result = await run.result()
    assert result.stop_reason is SubagentStopReason.ERROR
    # Its reason, not the last line of the backtrace it prints after it.
    assert result.error == (
        "agent exited with code 1: "
        'Error: approval_policy = "untrusted" is no longer supported; remove this setting'
    )


async def test_a_confined_codex_answers_and_runs_what_it_was_allowed(
    codex: str, codex_home: Path, stand_in: ResponsesStandIn, tmp_path: Path
) -> None:
    need_bwrap()
    stand_in.script(command("echo hi > out.txt"), answer("Done."))
    confined = dataclasses.replace(
        config(codex, codex_home, "allow"), sandbox="workspace", sandbox_writable=(str(codex_home),)
    )
    run = await CodexSubagentProvider(confined).start(SubagentRequest("go", cwd=str(tmp_path)))
    result = await run.result()
    assert (result.stop_reason, result.output) == (SubagentStopReason.COMPLETED, "Done."), result.error
    assert [p.decision for p in result.permissions] == ["allow_once"]
    assert (tmp_path / "out.txt").read_text() == "hi\n"
