"""Time to first chunk per provider, against a reference reached side by side.

    python benchmarks/providers.py [--pairs N] [--only claude|a2a]

claude: Claude Code, whose model is the stand-in of the Anthropic Messages API on 127.0.0.1
(tests/standins/anthropic_messages.py), answering the same streamed message each time, reached
- directly: our Claude provider, the Claude Agent SDK driving the Claude Code CLI it bundles, and
- through ACP: our ACP provider driving `claude-agent-acp` (npm @zed-industries/claude-agent-acp,
  installed into .cache/claude-agent-acp on first use), which runs the Claude Code of its own
  TypeScript SDK.
Target: direct / through ACP <= 1.0 (the adapter translates every message: driving Claude Code
through its own SDK must not be slower).

a2a: the test A2A agent (tests/a2a/agent_server.py, a2a-sdk's own server, in a child process),
streaming the same artifact each time, reached by our A2A provider and by the SDK's bare client
(no run around it: the card, the client, the streamed message). A2A has no ACP adapter: the
reference is what the protocol costs alone. Target: provider / bare client <= 1.2.

Each figure is one run in this process, from the start to the first chunk of the scripted
answer. The SDKs' imports are paid before the first pair. Pairs alternate which goes first; the
table gives medians and the median of the per-pair ratios.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import sys
import tempfile
import time
import uuid
from collections.abc import Callable

from _common import (
    REPO,
    end_progress,
    header,
    median,
    paired,
    ratios,
    table,
    verdict,
    wait_no_marked_processes,
)
from time_to_answer import npm_install

sys.path.insert(0, str(REPO))

from acp_tui import AcpProviderConfig, AcpSubagentProvider, OutputDelta, SubagentRequest
from acp_tui.a2a.provider import A2aSubagentProvider
from acp_tui.claude.provider import ClaudeSubagentProvider
from acp_tui.core.model import SubagentProvider
from tests.a2a.conftest import AgentServer
from tests.standins.anthropic_messages import MessagesStandIn, answer

CLAUDE_ACP_DIR = REPO / ".cache" / "claude-agent-acp"
CLAUDE_ACP = CLAUDE_ACP_DIR / "node_modules" / ".bin" / "claude-agent-acp"
CLAUDE_ACP_VERSION = "0.23.1"
FIRST = "Hello"  # the answer's first chunk
TARGETS = {"claude": 1.0, "a2a": 1.2}


async def first_chunk(provider: SubagentProvider, prompt: str, workdir: str) -> float:
    """Seconds from start() to the first chunk of the scripted answer; the run then ends."""
    started = time.monotonic()
    run = await provider.start(SubagentRequest(prompt, cwd=workdir))
    seen, at = "", float("nan")
    async for event in run.events():
        if isinstance(event, OutputDelta) and at != at:
            seen += event.text
            if FIRST in seen:
                at = time.monotonic() - started
    result = await run.result()
    if FIRST not in result.output:
        raise SystemExit(f"no answer: {result.stop_reason} {result.error}")
    return at


async def bare_a2a(url: str, prompt: str) -> float:
    """The same with the A2A SDK's client alone."""
    import httpx
    from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
    from a2a.types import Message, Part, Role, SendMessageRequest

    started = time.monotonic()
    async with httpx.AsyncClient(timeout=None) as http:
        card = await A2ACardResolver(http, url).get_agent_card()
        client = ClientFactory(ClientConfig(httpx_client=http)).create(card)
        message = Message(role=Role.ROLE_USER, message_id=str(uuid.uuid4()), parts=[Part(text=prompt)])
        at = float("nan")
        async for event in client.send_message(SendMessageRequest(message=message)):
            if at != at and event.HasField("artifact_update"):
                at = time.monotonic() - started
    return at


def claude_rows(pairs: int, workdir: str) -> list[list[object]]:
    missing = (
        None
        if CLAUDE_ACP.exists()
        else npm_install(str(CLAUDE_ACP_DIR), f"@zed-industries/claude-agent-acp@{CLAUDE_ACP_VERSION}")
    )
    if missing:
        raise SystemExit(missing)
    home = tempfile.mkdtemp(prefix="acp-tui-bench-claude-")
    try:
        with MessagesStandIn() as api:
            env = {**api.env(), "HOME": home}

            def once(
                provider: Callable[[AcpProviderConfig], SubagentProvider], config: AcpProviderConfig
            ) -> Callable[[], float]:
                def run() -> float:
                    api.script(answer(FIRST, ", world"))
                    return asyncio.run(first_chunk(provider(config), "say hello", workdir))

                return run

            ours = once(ClaudeSubagentProvider, AcpProviderConfig("claude", env=env))
            adapter = once(AcpSubagentProvider, AcpProviderConfig(str(CLAUDE_ACP), env=env))
            ours(), adapter()  # both SDKs imported, both CLIs read once from disk
            xs, ys = paired(pairs, ours, adapter, label="claude")
    finally:
        shutil.rmtree(home, ignore_errors=True)
    return row("claude vs claude-agent-acp", xs, ys, TARGETS["claude"])


def a2a_rows(pairs: int, workdir: str) -> list[list[object]]:
    server = AgentServer()
    prompt = f"artifact {FIRST}|, world"
    try:
        config = AcpProviderConfig(server.url, url=server.url)
        ours = lambda: asyncio.run(first_chunk(A2aSubagentProvider(config), prompt, workdir))  # noqa: E731
        bare = lambda: asyncio.run(bare_a2a(server.url, prompt))  # noqa: E731
        ours(), bare()
        xs, ys = paired(pairs, ours, bare, label="a2a")
    finally:
        server.close()
    return row("a2a vs the bare SDK client", xs, ys, TARGETS["a2a"])


def row(label: str, xs: list[float], ys: list[float], target: float) -> list[list[object]]:
    """The table's row of one provider: medians, the median ratio, against its target."""
    ratio = median(ratios(xs, ys))
    return [[label, median(xs), median(ys), ratio, f"<= {target}", verdict(ratio <= target)]]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=int, default=10)
    parser.add_argument("--only", choices=["claude", "a2a"])
    args = parser.parse_args()
    # claude-agent-acp's Claude Code quits at start with IS_SANDBOX in its environment (measured with
    # 0.23.1); both sides run without it.
    os.environ.pop("IS_SANDBOX", None)
    header("Time to first chunk: a provider against its reference")
    workdir = tempfile.mkdtemp(prefix="acp-tui-bench-")
    rows: list[list[object]] = []
    try:
        if args.only in (None, "claude"):
            rows += claude_rows(args.pairs, workdir)
        if args.only in (None, "a2a"):
            rows += a2a_rows(args.pairs, workdir)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    end_progress()
    print(table(["provider", "direct (s)", "reference (s)", "ratio", "target", "verdict"], rows))
    left = wait_no_marked_processes()
    if left:
        raise SystemExit(f"processes left running: {left}")


if __name__ == "__main__":
    main()
