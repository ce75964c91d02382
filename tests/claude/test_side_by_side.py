"""One prompt to an ACP agent, an A2A agent and a Claude Code session side by side: `acp-tui run`
with a preset of each provider, the records saying which."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from click.testing import CliRunner

from acp_tui.cli.main import main
from tests.a2a.conftest import AgentServer, skip_without_a2a
from tests.standins.anthropic_messages import API_KEY, MessagesStandIn, answer


def test_one_prompt_runs_on_each_provider_in_its_own_record(tmp_path: Path) -> None:
    skip_without_a2a()
    server = AgentServer()
    try:
        with MessagesStandIn() as api:
            api.script(answer("Hi from Claude"))
            env = {**api.env(), "HOME": str(tmp_path)}
            config = tmp_path / "agents.toml"
            config.write_text(
                "[[agent]]\n"
                'name = "local"\n'
                f"command = {json.dumps(sys.executable)}\n"
                'args = ["-m", "acp_tui.demo.agent", "--persona", "pong"]\n'
                "[[agent]]\n"
                'name = "remote"\n'
                'provider = "a2a"\n'
                f'url = "{server.url}"\n'
                'headers = { Authorization = "Bearer side-by-side" }\n'
                "[[agent]]\n"
                'name = "claude"\n'
                'provider = "claude"\n'
                f"env = {{ {', '.join(f'{k} = {json.dumps(v)}' for k, v in env.items())} }}\n"
            )
            done = CliRunner().invoke(
                main,
                [
                    "run",
                    "--config",
                    str(config),
                    "--format",
                    "json",
                    "--cwd",
                    str(tmp_path),
                    "--prompt",
                    "artifact Hi|!",
                ],
                catch_exceptions=False,
            )
    finally:
        server.close()
    assert done.stdout, done.output
    records = {record["name"]: record for record in map(json.loads, done.stdout.splitlines())}
    assert {name: record["provider"] for name, record in records.items()} == {
        "local": "acp",
        "remote": "a2a",
        "claude": "claude",
    }
    assert {name: record["stop_reason"] for name, record in records.items()} == dict.fromkeys(
        records, "completed"
    )
    assert records["remote"]["output"] == "Hi!" and records["remote"]["command"] == [server.url]
    assert records["claude"]["output"] == "Hi from Claude"
    assert records["claude"]["usage"]["cost"]["currency"] == "USD"
    assert API_KEY not in done.stdout and "side-by-side" not in done.stdout
    assert done.exit_code == 0
