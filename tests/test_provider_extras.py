"""A provider's SDK is an optional extra: without it, that provider's runs end `error` with one line
naming the extra to install, and nothing else breaks (an ACP run beside them completes)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

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
