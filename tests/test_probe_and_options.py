"""`acp-tui run --option` and `acp-tui probe`, end to end through the command line, over real stdio."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

from click.testing import CliRunner, Result

from acp_tui.cli.main import main
from tests.helpers import SCRIPTED_AGENT

HOSTILE = "\x1b]0;pwned\x07[bold red]x[/]\x1b[2J"  # what the features agent's hostile=1 adds
PROBE_KEYS = [
    "agent",
    "protocol_version",
    "agent_capabilities",
    "auth_methods",
    "modes",
    "config_options",
    "commands",
    "session_list",
    "client_capabilities",
    "error",
    "sandbox",
    "remote",
]


def invoke(*args: str) -> Result:
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def spec(name: str, *options: str) -> str:
    return f"{name}={shlex.join([sys.executable, SCRIPTED_AGENT, *options])}"


def test_option_mode_ask_makes_an_agent_that_only_asks_in_that_mode_ask() -> None:
    agent = spec(
        "vibe",
        "session_config=mode:auto-approve|ask|accept-edits;model:m1|m2",
        "ask_in_mode=ask",
        "usage=1200/128000/0.03/USD",
        "agent_info=vibe-acp/Mistral Vibe/2.0.1",
    )
    asked = invoke(
        "run",
        "--format",
        "json",
        "--prompt",
        "go",
        "--policy",
        "allow",
        "--agent",
        agent,
        "--option",
        "mode=ask",
        "--option",
        "model=m2",
    )
    assert asked.exit_code == 0, asked.output
    record = json.loads(asked.stdout)
    assert record["options"] == {"mode": "ask", "model": "m2"}
    assert [p["decision"] for p in record["permissions"]] == ["allow_once"]
    assert record["usage"] == {"used": 1200, "size": 128000, "cost": {"amount": 0.03, "currency": "USD"}}
    assert record["agent"] == {"name": "vibe-acp", "title": "Mistral Vibe", "version": "2.0.1"}
    assert record["auth_methods"] == []
    assert {"agent", "options", "usage", "auth_methods"} <= set(record)

    silent = json.loads(invoke("run", "--format", "json", "--prompt", "go", "--agent", agent).stdout)
    assert silent["options"] == {"mode": "auto-approve", "model": "m1"} and silent["permissions"] == []


def test_an_option_the_agent_lacks_ends_the_run_in_error_exit_1() -> None:
    result = invoke(
        "run",
        "--format",
        "json",
        "--prompt",
        "go",
        "--agent",
        spec("a", "session_modes=x|y"),
        "--option",
        "mode=z",
    )
    assert result.exit_code == 1
    record = json.loads(result.stdout)
    assert record["stop_reason"] == "error" and record["output"] == ""
    assert record["error"] == 'option "mode": the agent offers no value "z" (offered: x, y)'


def test_a_bad_option_spec_is_a_usage_error() -> None:
    result = invoke("run", "--prompt", "go", "--agent", spec("a"), "--option", "mode")
    assert result.exit_code == 2
    assert result.stderr == 'acp-tui run: error: --option "mode": expected ID=VALUE (e.g. mode=ask)\n'


def test_probe_json_describes_what_the_agent_is_and_offers(tmp_path: Path) -> None:
    record_file = tmp_path / "frames.jsonl"
    agent = spec(
        "codex",
        "session_config=mode:read-only|auto|full-access;model:gpt-5|gpt-5-mini",
        "session_modes=read-only|auto|full-access",
        "auth_methods=codex",
        "agent_info=codex-acp/Codex/0.9.1",
        "can_close=1",
        f"record={record_file}",
    )
    result = invoke("probe", "--format", "json", "--agent", agent)
    assert result.exit_code == 0, result.output
    record = json.loads(result.stdout)
    assert list(record) == PROBE_KEYS
    assert record["agent"] == {"name": "codex-acp", "title": "Codex", "version": "0.9.1"}
    assert record["protocol_version"] == 1
    assert record["agent_capabilities"]["sessionCapabilities"] == {"close": {}}
    assert [m["id"] for m in record["auth_methods"]] == ["chatgpt", "api-key", "tui"]
    assert record["auth_methods"][1] == {
        "id": "api-key",
        "name": "Use CODEX_API_KEY",
        "description": None,
        "type": "env_var",
        "vars": ["CODEX_API_KEY"],
    }
    assert record["modes"] == {"current": "read-only", "available": ["read-only", "auto", "full-access"]}
    assert record["config_options"] == [
        {
            "id": "mode",
            "name": "Mode",
            "category": "mode",
            "type": "select",
            "current": "read-only",
            "values": ["read-only", "auto", "full-access"],
        },
        {
            "id": "model",
            "name": "Model",
            "category": "model",
            "type": "select",
            "current": "gpt-5",
            "values": ["gpt-5", "gpt-5-mini"],
        },
    ]
    assert record["error"] is None
    # No prompt, in an empty temporary directory, and closed as advertised.
    frames = [json.loads(line) for line in record_file.read_text().splitlines()]
    methods = [f["method"] for f in frames if "method" in f]
    assert methods == ["initialize", "session/new", "session/close"]
    cwd = Path(frames[1]["params"]["cwd"])
    assert cwd.name.startswith("acp-tui-probe-") and not cwd.exists()


def test_probe_without_credentials_exits_1_with_the_error_and_the_methods() -> None:
    agent = spec("oc", "auth_methods=opencode", "fail=session/new:-32000:Authentication required")
    result = invoke("probe", "--format", "json", "--agent", agent)
    assert result.exit_code == 1
    record = json.loads(result.stdout)
    assert record["error"] == (
        'authentication required: oc offers "Login" (run "opencode auth login" in a terminal);'
        ' session/new said "Authentication required"'
    )
    assert record["auth_methods"] == [
        {"id": "opencode-login", "name": "Login", "description": "Run `opencode auth login` in the terminal"}
    ]

    text = invoke("probe", "--agent", agent)
    assert text.exit_code == 1
    assert (
        "login methods:\n  opencode-login: Login: Run `opencode auth login` in the terminal\n" in text.stdout
    )
    assert text.stdout.endswith(f"error: {record['error']}\n")


def test_probe_of_a_missing_command_and_bad_usage() -> None:
    missing = invoke("probe", "--format", "json", "--agent", "ghost=no-such-acp-agent-command")
    assert missing.exit_code == 1
    assert "no-such-acp-agent-command" in json.loads(missing.stdout)["error"]
    unknown = invoke("probe", "--agent", "nobody")
    assert unknown.exit_code == 2 and "unknown agent" in unknown.stderr


def test_probe_text_shows_agent_strings_literally() -> None:
    agent = spec("odd", "agent_info=evil\x1b[31m/T/1")
    result = invoke("probe", "--agent", agent)
    assert result.exit_code == 0, result.output
    assert "\x1b" not in result.stdout and "evil\\x1b[31m" in result.stdout


def test_the_text_and_markdown_reports_say_the_session() -> None:
    from acp_tui.reports.markdown import markdown
    from acp_tui.reports.records import read_record

    agent = spec("vibe", "session_modes=ask|auto", "usage=10/100/0.5/EUR", "agent_info=v/Vibe/2")
    text = invoke("run", "--prompt", "go", "--agent", agent, "--option", "mode=auto")
    assert text.exit_code == 0, text.output
    assert (
        "    agent: Vibe 2\n    options: mode=auto\n    usage: 10 of 100 tokens, cost 0.5 EUR\n"
        in text.stdout
    )
    said = invoke("run", "--format", "json", "--prompt", "go", "--agent", agent)
    record = read_record(json.loads(said.stdout))
    assert "- options: mode=ask\n- usage: 10 of 100 tokens, cost 0.5 EUR" in markdown([record])


def test_probe_lists_the_commands_the_session_list_and_what_acp_tui_answers(tmp_path: Path) -> None:
    from tests.helpers import FEATURES_AGENT

    agent = f"feat={shlex.join([sys.executable, FEATURES_AGENT, 'hostile=1'])}"
    record = json.loads(invoke("probe", "--format", "json", "--agent", agent).stdout)
    assert [c["name"] for c in record["commands"]] == [f"web{HOSTILE}", f"test{HOSTILE}"]
    assert record["commands"][0]["hint"] == "query"
    assert record["session_list"] is False
    assert record["client_capabilities"]["elicitation"] == {"form": {}, "url": {}}
    text = invoke("probe", "--agent", agent).stdout
    assert "session/list: not advertised" in text
    assert "questions (elicitation): acp-tui answers form, url" in text
    assert "  /web\\x1b]0;pwned\\x07[bold red]x[/]\\x1b[2J <query>: Search the web" in text
    assert "\x1b" not in text

    sessions = Path(__file__).resolve().parent / "sessions_agent.py"
    lister = f"kept={shlex.join([sys.executable, str(sessions), f'store={tmp_path}', 'list=1'])}"
    listed = json.loads(invoke("probe", "--format", "json", "--agent", lister).stdout)
    assert (listed["session_list"], listed["commands"]) == (True, [])
    assert (
        "session/list: advertised (acp-tui sessions --agent NAME)"
        in invoke("probe", "--agent", lister).stdout
    )
