"""`acp-tui run`: the headless fan-out against real agents over real stdio.

Most tests drive the real command in-process with click's runner (the scripted agent boots in a
blink); signals need a real process, so those tests spawn `python -m acp_tui`.
"""

from __future__ import annotations

import functools
import json
import shlex
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from click.testing import CliRunner, Result

from acp_tui.acp import client as _sdk_loaded  # noqa: F401 - see below
from acp_tui.cli.main import main
from acp_tui.core.model import SubagentStopReason
from acp_tui.reports.records import RECORD_KEYS
from acp_tui.settings import paths
from tests.helpers import SCRIPTED_AGENT, read_trace

# The in-process runs below import the protocol SDK on first use; it is loaded up front (through the
# core's client module) so that no run pays for it inside a `--timeout`.

PERMISSION_KEYS = {
    "title",
    "kind",
    "options",
    "decision",
    "option_id",
    "rule",
    "at",
    "raw_input",
    "locations",
    "waited_s",
}
DEMO = [sys.executable, "-m", "acp_tui.demo.agent", "--persona"]


def spec(name: str, **options: object) -> str:
    """An `--agent` spec running the scripted agent with `options`."""
    argv = [sys.executable, SCRIPTED_AGENT, *(f"{key}={value}" for key, value in options.items())]
    return f"{name}={shlex.join(argv)}"


def run(*args: str, stdin: str | None = None) -> Result:
    return CliRunner().invoke(main, ["run", *args], input=stdin, catch_exceptions=False)


def records(result: Result) -> dict[str, dict[str, Any]]:
    """The JSON lines of stdout, by run name; every line must be one whole, valid record."""
    found = {}
    for line in result.stdout.splitlines():
        record = json.loads(line)
        check_schema(record)
        found[record["name"]] = record
    assert len(found) == len(result.stdout.splitlines()), "one line per run, and names are unique"
    return found


@functools.cache
def record_validator() -> jsonschema.Draft202012Validator:
    """The schema `acp-tui schema record` prints, itself checked as a JSON Schema 2020-12. jsonschema,
    not pydantic: the published schema is checked by a validator that did not make it."""
    printed = CliRunner().invoke(main, ["schema", "record"], catch_exceptions=False)
    assert printed.exit_code == 0, printed.output
    schema = json.loads(printed.stdout)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def check_schema(record: dict[str, Any]) -> None:
    """A real record: valid by the published schema, every key of today's records there, in order."""
    record_validator().validate(record)
    assert tuple(record) == RECORD_KEYS
    for permission in record["permissions"]:
        assert set(permission) == PERMISSION_KEYS


def test_the_published_schema_refuses_what_no_record_holds() -> None:
    good = {"name": "a", "command": ["a"], "stop_reason": "completed"}
    record_validator().validate(good)
    for bad in ({"stop_reason": "exploded"}, {"turn": 0}, {"exit_code": 1.5}, {"command": "a"}):
        assert not record_validator().is_valid({**good, **bad}), bad


def test_json_lines_carry_every_field_and_any_non_completed_run_exits_1() -> None:
    result = run(
        "--prompt",
        "go",
        "--format",
        "json",
        "--agent",
        spec("chatty", text="hello there", chunks=3, hidden=1),
        "--agent",
        spec("asker", text="asked", permission="normal"),
        "--agent",
        spec("refuser", text="no.", stop="refusal"),
    )
    assert result.exit_code == 1
    found = records(result)
    assert set(found) == {"chatty", "asker", "refuser"}

    chatty = found["chatty"]
    assert chatty["command"] == [sys.executable, SCRIPTED_AGENT, "text=hello there", "chunks=3", "hidden=1"]
    assert chatty["prompt"] == "go" and chatty["policy"] == "reject"
    assert chatty["stop_reason"] == "completed" and chatty["error"] is None
    assert chatty["output"] == "hello there"
    assert chatty["hidden"]["agent_thought_chunk"] == 3 and chatty["hidden"]["tool_call"] == 3
    assert chatty["exit_code"] == 0 and chatty["trace"] is None

    (permission,) = found["asker"]["permissions"]
    assert permission["title"] == "Write proof.txt" and permission["kind"] == "edit"
    assert permission["options"] == [
        {"option_id": "a1", "name": "Allow", "kind": "allow_once"},
        {"option_id": "r1", "name": "Reject", "kind": "reject_once"},
    ]
    assert (permission["decision"], permission["option_id"], permission["rule"]) == (
        "reject_once",
        "r1",
        "reject",
    )

    assert found["refuser"]["stop_reason"] == "refusal" and found["refuser"]["output"] == "no."


def test_every_run_completed_exits_0_and_text_shows_each_answer_under_its_name() -> None:
    result = run(
        "--prompt",
        "hi",
        "--agent",
        spec("one", text="first answer"),
        "--agent",
        spec("two", text="second answer\n"),
    )
    assert result.exit_code == 0
    blocks = sorted(block for block in result.stdout.split("\n\n") if block)
    assert len(blocks) == 2
    for block, (name, answer) in zip(
        blocks, [("one", "first answer"), ("two", "second answer")], strict=True
    ):
        lines = block.splitlines()
        assert lines[0] == f"=== {name} ==="
        assert lines[1] == answer
        assert lines[2].startswith(f"--- {name}: completed (") and lines[2].endswith(" s)")


@pytest.mark.parametrize(
    ("acp_stop", "stop_reason", "error"),
    [
        ("max_tokens", "max-tokens", None),
        ("max_turn_requests", "error", "agent stopped with 'max_turn_requests'"),
    ],
)
def test_the_exit_status_follows_the_stop_reasons(acp_stop: str, stop_reason: str, error: str | None) -> None:
    result = run(
        "--prompt", "x", "--format", "json", "--agent", spec("a", stop=acp_stop), "--agent", spec("b")
    )
    assert result.exit_code == 1
    found = records(result)
    assert (found["a"]["stop_reason"], found["a"]["error"]) == (stop_reason, error)
    assert found["b"]["stop_reason"] == "completed"


def test_text_format_says_the_stop_reason_and_error() -> None:
    result = run("--prompt", "x", "--agent", spec("a", stop="max_turn_requests", text="partial"))
    assert result.exit_code == 1
    lines = result.stdout.rstrip("\n").splitlines()
    assert len(lines) == 3
    assert lines[:2] == ["=== a ===", "partial"]
    assert lines[2].startswith("--- a: error: agent stopped with 'max_turn_requests' (")


def test_the_demo_set_runs_by_default_and_pong_writes_its_proof_in_a_scratch_dir(tmp_path: Path) -> None:
    result = run("--prompt", "ping", "--format", "json", "--agent", "pong")
    assert result.exit_code == 0, result.stderr
    pong = records(result)["pong"]
    assert pong["command"] == [*DEMO, "pong"]
    assert pong["output"] == "PONG" and pong["policy"] == "allow"
    (permission,) = pong["permissions"]
    assert (permission["decision"], permission["rule"]) == ("allow_once", "allow")
    assert (paths.demo_scratch_dir() / "proof.txt").read_text() == "PONG\n"
    assert "[pong] demo agent: persona=pong" in result.stderr.splitlines()


def test_child_stderr_is_forwarded_line_by_line_with_the_run_name() -> None:
    result = run(
        "--prompt",
        "x",
        "--format",
        "json",
        "--agent",
        spec("warm", stderr="warming up", text="ok"),
        "--agent",
        spec("cold", text="ok"),
    )
    assert result.exit_code == 0
    assert result.stderr.splitlines() == ["[warm] warming up"]
    assert set(records(result)) == {"warm", "cold"}  # and stdout holds nothing else


def test_a_timeout_disposes_the_run_that_outlives_it() -> None:
    result = run(
        "--prompt",
        "x",
        "--format",
        "json",
        "--timeout",
        "1.5",
        "--agent",
        spec("endless", text="start", forever=1, delay=0.02),
        "--agent",
        spec("quick", text="done"),
    )
    assert result.exit_code == 1
    found = records(result)
    assert found["endless"]["stop_reason"] == "aborted"
    assert found["endless"]["error"] == "timed out after 1.5 s"
    assert found["endless"]["output"].startswith("start.")  # the partial answer is kept
    assert found["endless"]["duration_s"] >= 1.5
    assert found["quick"]["stop_reason"] == "completed"
    assert list(found) == ["quick", "endless"]  # in the order they finished


def test_the_prompt_can_come_from_stdin() -> None:
    result = run(
        "--prompt",
        "-",
        "--format",
        "json",
        "--agent",
        spec("echo", text="you said: {prompt}"),
        stdin="two\nlines\n",
    )
    assert result.exit_code == 0
    echo = records(result)["echo"]
    assert echo["output"] == "you said: two\nlines" and echo["prompt"] == "two\nlines"


def test_env_reaches_every_agent_after_the_credential_scrub(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ACP_TUI_TEST_API_KEY", "from-the-parent")
    scrubbed = run("--prompt", "x", "--format", "json", "--agent", spec("a", echo_env="ACP_TUI_TEST_API_KEY"))
    assert records(scrubbed)["a"]["output"] == "<unset>"

    result = run(
        "--prompt",
        "x",
        "--format",
        "json",
        "--env",
        "ACP_TUI_TEST_API_KEY=explicit=value",
        "--agent",
        spec("a", echo_env="ACP_TUI_TEST_API_KEY"),
        "--agent",
        spec("b", echo_env="ACP_TUI_TEST_API_KEY"),
    )
    # Each child echoed the value it got; an explicit value never shows in clear, so the echo is
    # masked: that it matched the value exactly is what proves it arrived.
    assert {name: r["output"] for name, r in records(result).items()} == {"a": "***", "b": "***"}


def test_cwd_sets_every_agent_working_directory(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    record = tmp_path / "received.jsonl"
    result = run("--prompt", "x", "--cwd", str(work), "--agent", spec("a", record=record))
    assert result.exit_code == 0
    received = [json.loads(line) for line in record.read_text().splitlines()]
    (new_session,) = [m for m in received if m.get("method") == "session/new"]
    assert new_session["params"]["cwd"] == str(work)


def test_a_named_policy_from_the_config_decides_and_says_which_rule(tmp_path: Path) -> None:
    config = tmp_path / "agents.toml"
    config.write_text(
        f"""
[[agent]]
name = "editor"
command = {json.dumps(sys.executable)}
args = [{json.dumps(SCRIPTED_AGENT)}, "permission=normal", "text=ok"]
policy = "lab"

[policy.lab]
[[policy.lab.rule]]
name = "edits are fine"
kind = ["edit"]
action = "allow"
""",
        encoding="utf-8",
    )
    result = run("--prompt", "x", "--format", "json", "--config", str(config))
    editor = records(result)["editor"]
    assert editor["policy"] == "lab"
    (permission,) = editor["permissions"]
    assert (permission["decision"], permission["option_id"], permission["rule"]) == (
        "allow_once",
        "a1",
        "edits are fine",
    )

    overridden = run("--prompt", "x", "--format", "json", "--config", str(config), "--policy", "reject")
    editor = records(overridden)["editor"]
    assert editor["policy"] == "reject"
    assert [(p["decision"], p["rule"]) for p in editor["permissions"]] == [("reject_once", "reject")]


def test_a_missing_command_fails_alone() -> None:
    result = run(
        "--prompt",
        "x",
        "--format",
        "json",
        "--agent",
        "ghost=/nonexistent/acp-agent --acp",
        "--agent",
        spec("ok"),
    )
    assert result.exit_code == 1
    found = records(result)
    assert found["ghost"]["stop_reason"] == "error"
    assert found["ghost"]["error"] == "command not found: /nonexistent/acp-agent"
    assert found["ghost"]["exit_code"] is None
    assert found["ok"]["stop_reason"] == "completed"


def test_trace_writes_every_frame_of_each_run_as_json_lines(tmp_path: Path) -> None:
    traces = tmp_path / "traces"
    result = run(
        "--prompt", "x", "--format", "json", "--trace", str(traces), "--agent", spec("traced", text="t")
    )
    assert result.exit_code == 0
    (path,) = traces.iterdir()
    assert path.name.startswith("traced-") and path.suffix == ".jsonl"
    assert records(result)["traced"]["trace"] == str(path)
    frames = read_trace(path)
    assert all(set(f) == {"t", "dir", "frame"} and f["dir"] in ("in", "out") for f in frames)
    sent = [f["frame"]["method"] for f in frames if f["dir"] == "out" and "method" in f["frame"]]
    assert sent[:3] == ["initialize", "session/new", "session/prompt"]
    received = [f["frame"] for f in frames if f["dir"] == "in"]
    assert any(frame.get("method") == "session/update" for frame in received)
    assert received[-1]["result"] == {"stopReason": "end_turn"}


# Signals: a real process ---------------------------------------------------------------------------


def start_cli(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "acp_tui", "run", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def wait_for_stderr(proc: subprocess.Popen[str], needle: str) -> list[str]:
    """Read the process's stderr until a line contains `needle` (the test timeout bounds this)."""
    assert proc.stderr is not None
    seen = []
    for line in proc.stderr:
        seen.append(line)
        if needle in line:
            return seen
    raise AssertionError(f"stderr ended without {needle!r}: {seen}")


def test_sigint_during_a_slow_run_disposes_it_prints_it_and_exits_130() -> None:
    proc = start_cli("--prompt", "take your time", "--format", "json", "--agent", "tortoise")
    try:
        wait_for_stderr(proc, "[tortoise] demo agent: prompt")  # the prompt is running
        proc.send_signal(signal.SIGINT)
        stdout, _ = proc.communicate(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130
    (line,) = stdout.splitlines()
    tortoise = json.loads(line)
    check_schema(tortoise)
    assert tortoise["stop_reason"] == "aborted"
    assert tortoise["error"] == "interrupted by SIGINT"
    assert tortoise["output"].startswith("You asked: take your time")
    # And nothing of ours is left running: the autouse fixture checks every process we started.


def test_sigterm_while_agents_are_still_starting_aborts_them_all() -> None:
    proc = start_cli(
        "--prompt",
        "x",
        "--format",
        "json",
        "--agent",
        spec("stuck", hang="initialize", stderr="stuck-ready"),
        "--agent",
        spec("also-stuck", hang="session/new"),
    )
    try:
        wait_for_stderr(proc, "[stuck] stuck-ready")
        proc.send_signal(signal.SIGTERM)
        stdout, _ = proc.communicate(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130
    found = {r["name"]: r for r in map(json.loads, stdout.splitlines())}
    assert set(found) == {"stuck", "also-stuck"}
    for record in found.values():
        check_schema(record)
        assert (record["stop_reason"], record["error"]) == ("aborted", "interrupted by SIGTERM")


def test_the_real_process_prints_only_json_on_stdout_and_exits_promptly() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "acp_tui", "run", "--prompt", "x", "--format", "json", "--agent", spec("a")],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    (line,) = done.stdout.splitlines()
    assert json.loads(line)["output"] == "Hello from the scripted agent."


# The record, shared with the app's export ---------------------------------------------------------


def test_the_record_round_trips_through_json_and_reads_as_markdown() -> None:
    from acp_tui.core.model import PermissionOptionInfo, PermissionRecord, SubagentResult
    from acp_tui.reports.markdown import markdown
    from acp_tui.reports.records import json_line, read_record, run_record
    from acp_tui.settings.schema import AgentPreset

    permission = PermissionRecord(
        title="Write proof.txt",
        kind="edit",
        options=(
            PermissionOptionInfo("a1", "Allow", "allow_once"),
            PermissionOptionInfo("r1", "Reject", "reject_once"),
        ),
        decision="allow_once",
        option_id="a1",
        rule="edits are fine",
        at=0.1234,
    )
    result = SubagentResult(
        stop_reason=SubagentStopReason.ABORTED,
        output="# Partial\n\nanswer",
        error="timed out after 5 s",
        exit_code=-15,
        hidden={"tool_call": 2},
        permissions=[permission],
        duration_s=5.01234,
    )
    preset = AgentPreset("pong", "python3", ("-m", "demo"))
    record = run_record(preset, result, prompt="ping\npong", policy="lab")

    line = json_line(record)
    assert "\n" not in line and read_record(json.loads(line)) == record
    check_schema(json.loads(line))
    assert record.duration_s == 5.012 and record.permissions[0].at == 0.123

    document = markdown([record])
    assert "## pong: aborted" in document
    assert "- command: `python3 -m demo`" in document
    assert "- error: timed out after 5 s" in document
    assert '"Write proof.txt" [edit]: allow_once by edits are fine' in document
    assert "~~~~markdown\nping\npong\n~~~~" in document  # fenced: its lines can be no heading of ours
    assert document.rstrip().endswith("~~~~markdown\n# Partial\n\nanswer\n~~~~")  # its heading stays inside


def test_sdk_diagnostics_go_to_the_log_file_never_the_terminal(tmp_path: Path) -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "acp_tui",
            "run",
            "--prompt",
            "x",
            "--format",
            "json",
            "--agent",
            spec("noisy", unknown_updates=1),
        ],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    log = paths.log_file()
    assert "acp_tui_unknown_kind" in log.read_text()  # the SDK's complaint about the update
    assert "acp_tui_unknown_kind" not in done.stderr
