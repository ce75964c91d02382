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
