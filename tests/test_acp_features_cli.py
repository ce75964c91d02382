"""What ACP 1.21 offers, from the command line: questions in `acp-tui run` (declined, never a
hang), the agent's own sessions (`acp-tui sessions --agent`), budgets (`--budget-usd`)."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

from click.testing import CliRunner, Result

from acp_tui.cli.main import main
from tests.helpers import FEATURES_AGENT

SESSIONS_AGENT = str(Path(__file__).resolve().parent / "sessions_agent.py")


def invoke(*args: str) -> Result:
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def feat(name: str = "feat", *options: str) -> str:
    return f"{name}={shlex.join([sys.executable, FEATURES_AGENT, 'commands=none', *options])}"


def test_run_declines_every_question_and_the_record_lists_each() -> None:
    result = invoke("run", "--agent", feat("feat", "elicit=form,url"), "--prompt", "go", "--format", "json")
    assert result.exit_code == 0, result.stderr
    record = json.loads(result.stdout)
    assert [q["answered"] for q in record["elicitations"]] == [
        {"action": "decline", "content": None, "by": "no one"},
        {"action": "decline", "content": None, "by": "no one"},
    ]
    assert record["elicitations"][0]["asked"]["form"]["title"] == "Deployment"
    text = invoke("run", "--agent", feat("feat", "elicit=url"), "--prompt", "go").stdout
    assert (
        "    question: at " in text
        and '"Sign in to continue." (url, https://auth.example.com/login?state=xyz): decline by no one'
        in text
    )


def kept(store: Path, *options: str) -> str:
    return f"kept={shlex.join([sys.executable, SESSIONS_AGENT, f'store={store}', *options])}"


def test_sessions_lists_what_the_agent_keeps_and_run_load_continues_one(tmp_path: Path) -> None:
    store = tmp_path / "store"
    for prompt in ("first task", "second task \x1b]0;pwned\x07"):
        assert invoke("run", "--agent", kept(store), "--prompt", prompt).exit_code == 0
    listed = invoke("sessions", "--agent", kept(store, "list=1", "page=1"), "--format", "json")
    assert listed.exit_code == 0, listed.stderr
    sessions = [json.loads(line) for line in listed.stdout.splitlines()]
    assert sorted(s["title"] for s in sessions) == ["first task", "second task \x1b]0;pwned\x07"]
    assert all(list(s) == ["id", "title", "cwd", "updated"] for s in sessions)
    text = invoke("sessions", "--agent", kept(store, "list=1")).stdout
    assert "second task \\x1b]0;pwned\\x07" in text and "\x1b" not in text  # shown literally
    [first] = [s for s in sessions if s["title"] == "first task"]
    loaded = invoke("run", "--agent", kept(store), "--load", first["id"], "--prompt", "and then?")
    assert "turn 2: and then? (after: first task)" in loaded.stdout


def test_an_agent_without_session_list_is_one_line_exit_1(tmp_path: Path) -> None:
    result = invoke("sessions", "--agent", kept(tmp_path))
    assert result.exit_code == 1
    assert result.stderr == "acp-tui sessions: kept does not list its sessions (it offers no session/list)\n"
    assert result.stdout == ""
    missing = invoke("sessions", "--agent", "ghost=/no/such/agent")
    assert missing.exit_code == 1 and missing.stderr.startswith("acp-tui sessions: ")
    assert len(missing.stderr.splitlines()) == 1


def test_an_agent_of_another_provider_is_never_started_for_its_sessions(tmp_path: Path) -> None:
    config = tmp_path / "agents.toml"
    config.write_text('[[agent]]\nname = "far"\nprovider = "a2a"\nurl = "http://127.0.0.1:9/"\n')
    result = invoke("sessions", "--config", str(config), "--agent", "far")
    assert result.exit_code == 1
    assert result.stderr == (
        "acp-tui sessions: far does not list its sessions (it speaks a2a; session/list is ACP's)\n"
    )


def test_a_run_past_its_budget_is_cancelled_naming_the_budget() -> None:
    spender = feat("spender", "costs=0.02,0.04,0.06", "hold=1")
    frugal = feat("frugal", "costs=0.01,0.02")
    result = invoke(
        "run",
        "--agent",
        spender,
        "--agent",
        frugal,
        "--budget-usd",
        "0.05",
        "--prompt",
        "go",
        "--format",
        "json",
    )
    assert result.exit_code == 1
    records = {r["name"]: r for r in map(json.loads, result.stdout.splitlines())}
    assert records["spender"]["stop_reason"] == "aborted"
    assert records["spender"]["error"] == "over budget: spent 0.0600 USD, more than budget_usd = 0.05"
    assert records["frugal"]["stop_reason"] == "completed"
    assert records["frugal"]["usage"]["cost"] == {"amount": 0.02, "currency": "USD"}
    assert invoke("run", "--agent", frugal, "--budget-usd", "0", "--prompt", "go").exit_code == 2
