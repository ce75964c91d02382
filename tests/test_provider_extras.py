"""A provider's SDK is an optional extra: without it, that provider's runs end `error` with one line
naming the extra to install, and nothing else breaks (an ACP run beside them completes). A provider
not built yet is said in one line too."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from acp_tui.cli.main import main

# Run in a fresh interpreter in which both SDKs cannot be imported (as if not installed).
PROGRAM = """
import asyncio, json, sys
sys.modules["a2a"] = None
sys.modules["claude_agent_sdk"] = None
from acp_tui import AcpSubagentProvider, SubagentRequest
from acp_tui.a2a.provider import A2aSubagentProvider
from acp_tui.claude.provider import ClaudeSubagentProvider
from acp_tui.settings.provider_config import AcpProviderConfig
from tests.helpers import demo

async def main():
    providers = [
        A2aSubagentProvider(AcpProviderConfig("http://127.0.0.1:9", url="http://127.0.0.1:9")),
        ClaudeSubagentProvider(AcpProviderConfig("claude")),
        AcpSubagentProvider(demo("pong")),
    ]
    runs = [await provider.start(SubagentRequest(prompt="hello")) for provider in providers]
    results = [await run.result() for run in runs]
    print(json.dumps([(r.stop_reason.value, r.error) for r in results]))

asyncio.run(main())
"""


def test_without_its_extra_a_providers_runs_say_what_to_install(tmp_path: Path) -> None:
    root = Path(__file__).resolve().parent.parent
    done = subprocess.run(
        [sys.executable, "-c", PROGRAM], cwd=root, capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    a2a, claude, acp = json.loads(done.stdout.splitlines()[-1])
    assert a2a == ["error", "provider \"a2a\" needs its optional extra: pip install 'acp-tui[a2a]'"]
    assert claude == ["error", "provider \"claude\" needs its optional extra: pip install 'acp-tui[claude]'"]
    assert acp == ["completed", None]


def test_a_provider_not_built_yet_is_said_in_one_line(tmp_path: Path) -> None:
    """A preset may name any provider of the contract; one not built yet ends its run `error`
    saying so, and `probe` refuses it as a usage error."""
    config = tmp_path / "agents.toml"
    config.write_text('[[agent]]\nname = "codex"\nprovider = "codex"\n')
    said = 'provider "codex" is not available yet (available: acp, a2a, claude)'
    run = ["run", "--config", str(config), "--format", "json", "--prompt", "hello", "--cwd", str(tmp_path)]
    done = CliRunner().invoke(main, run, catch_exceptions=False)
    [record] = [json.loads(line) for line in done.stdout.splitlines()]
    assert (record["provider"], record["stop_reason"], record["error"]) == ("codex", "error", said)
    probed = CliRunner().invoke(main, ["probe", "--config", str(config), "--agent", "codex"])
    assert probed.exit_code == 2 and said in probed.output
