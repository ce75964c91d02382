"""Time to first chunk per provider, against a reference reached side by side.

    python benchmarks/providers.py [--pairs N] [--only claude|a2a|codex]

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

codex: the real Codex, whose model is the stand-in of the OpenAI Responses API on 127.0.0.1
(tests/standins/openai_responses.py), answering the same streamed message each time, reached
- directly: our Codex provider driving `codex app-server` (npm @openai/codex, the version `.ci/run`
  pins, in .cache/codex), and
- through ACP: our ACP provider driving `codex-acp` (npm @zed-industries/codex-acp, installed into
  .cache/codex-acp on first use), which embeds its own Codex (an older one than the app-server's).
Both as npm installs them (a node script that starts the package's native binary), then both native
binaries started directly, and a third way: a bare app-server client (asyncio and JSON lines alone,
no run around it: spawn, initialize, thread/start, turn/start, the deltas), on the same binary, in
rounds rotating which goes first. codex-acp streams a warning of its own as answer text first: it
does not count. Targets: direct / through ACP <= 1.1, parity within the noise of a shared machine
(the adapter is a process translating every frame, the app-server a server with more to start);
direct / bare client <= 1.2 (what the run adds: the scrubbed environment, the process group, the
watchdog, the events).

Each figure is one run in this process, from the start to the first chunk of the scripted
answer. The SDKs' imports are paid before the first pair. Pairs alternate which goes first; the
table gives medians and the median of the per-pair ratios.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import shutil
import signal
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from _common import (
    REPO,
    end_progress,
    header,
    marked_processes,
    median,
    paired,
    ratios,
    rotating,
    table,
    verdict,
    wait_no_marked_processes,
)
from time_to_answer import npm_install

sys.path.insert(0, str(REPO))

from acp_tui import AcpProviderConfig, AcpSubagentProvider, OutputDelta, SubagentRequest
from acp_tui.a2a.provider import A2aSubagentProvider
from acp_tui.claude.provider import ClaudeSubagentProvider
from acp_tui.codex.provider import CodexSubagentProvider
from acp_tui.core.model import SubagentProvider
from acp_tui.process.environment import child_environment
from tests.a2a.conftest import AgentServer
from tests.standins import openai_responses
from tests.standins.anthropic_messages import MessagesStandIn, answer

CLAUDE_ACP_DIR = REPO / ".cache" / "claude-agent-acp"
CLAUDE_ACP = CLAUDE_ACP_DIR / "node_modules" / ".bin" / "claude-agent-acp"
CLAUDE_ACP_VERSION = "0.23.1"
CODEX_MODULES = REPO / ".cache" / "codex" / "node_modules"
CODEX = CODEX_MODULES / ".bin" / "codex"
CODEX_ACP_DIR = REPO / ".cache" / "codex-acp"
CODEX_ACP = CODEX_ACP_DIR / "node_modules" / ".bin" / "codex-acp"
CODEX_ACP_VERSION = "0.16.0"
FIRST = "Hello"  # the answer's first chunk
TARGETS = {"claude": 1.0, "a2a": 1.2, "codex": 1.1, "codex-bare": 1.2}
Make = Callable[[AcpProviderConfig], SubagentProvider]


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

            def once(provider: Make, config: AcpProviderConfig) -> Callable[[], float]:
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


async def bare_codex(codex: str, env: dict[str, str], workdir: str) -> float:
    """The same with a bare app-server client, given the environment our run gives it (Codex's
    start runs the user's login shell, whose profile may differ in another); the app-server then
    ends with its stdin, and what its shell started (setsid: out of its group) by a mark."""
    run_id = str(uuid.uuid4())
    started = time.monotonic()
    server = await asyncio.create_subprocess_exec(
        codex,
        "app-server",
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        cwd=workdir,
        env=child_environment({**env, "ACP_TUI_BENCH_BARE": run_id}),
        limit=1 << 24,
    )
    assert server.stdin is not None and server.stdout is not None
    stdin, stdout = server.stdin, server.stdout

    def send(message: dict[str, object]) -> None:
        stdin.write(json.dumps(message).encode() + b"\n")

    async def heard() -> dict[str, Any]:
        line = await stdout.readline()
        if not line:
            raise SystemExit("the bare client's app-server ended")
        message: dict[str, Any] = json.loads(line)
        return message

    async def call(rid: int, method: str, params: dict[str, object]) -> dict[str, Any]:
        send({"id": rid, "method": method, "params": params})
        while (message := await heard()).get("id") != rid or "method" in message:
            pass
        result: dict[str, Any] = message["result"]
        return result

    await call(0, "initialize", {"clientInfo": {"name": "bench", "version": "0"}})
    send({"method": "initialized"})
    thread = await call(1, "thread/start", {"cwd": workdir})
    turn = {"threadId": thread["thread"]["id"], "input": [{"type": "text", "text": "say hello"}]}
    await call(2, "turn/start", turn)
    seen, at = "", float("nan")
    while (message := await heard()).get("method") != "turn/completed":
        if message.get("method") == "item/agentMessage/delta" and at != at:
            seen += message["params"]["delta"]
            if FIRST in seen:
                at = time.monotonic() - started
    stdin.close()
    await server.wait()
    for pid, _ in marked_processes(f"ACP_TUI_BENCH_BARE={run_id}"):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    if at != at:
        raise SystemExit("no answer through the bare client")
    return at


def codex_subjects() -> list[tuple[str, Path, Path]]:
    """(what is compared, the app-server's command, codex-acp's command), once both are installed."""
    missing = None if CODEX.exists() else "codex is not installed: bash .ci/run installs it"
    if missing is None and not CODEX_ACP.exists():
        missing = npm_install(str(CODEX_ACP_DIR), f"@zed-industries/codex-acp@{CODEX_ACP_VERSION}")
    if missing:
        raise SystemExit(missing)
    native_codex = next(CODEX_MODULES.glob("@openai/codex-linux-*/vendor/*/bin/codex"))
    native_acp = next(CODEX_ACP_DIR.glob("node_modules/@zed-industries/codex-acp-linux-*/bin/codex-acp"))
    return [("npm commands", CODEX, CODEX_ACP), ("native binaries", native_codex, native_acp)]


def codex_rows(pairs: int, workdir: str) -> list[list[object]]:
    compared = codex_subjects()
    # Not under /tmp: Codex warns of a home there.
    home = Path(tempfile.mkdtemp(prefix="acp-tui-bench-codex-", dir="/var/tmp"))
    rows: list[list[object]] = []
    try:
        with openai_responses.ResponsesStandIn() as api:
            api.write_codex_home(home)
            env = {"CODEX_HOME": str(home)}

            def once(provider: Make, config: AcpProviderConfig) -> Callable[[], float]:
                def run() -> float:
                    api.script(openai_responses.answer(FIRST, ", world"))
                    return asyncio.run(first_chunk(provider(config), "say hello", workdir))

                return run

            def bare(codex: Path) -> Callable[[], float]:
                def run() -> float:
                    api.script(openai_responses.answer(FIRST, ", world"))
                    return asyncio.run(bare_codex(str(codex), env, workdir))

                return run

            for label, codex, adapter in compared:
                app_server = AcpProviderConfig(str(codex), ("app-server",), env=env)
                subjects = {
                    "ours": once(CodexSubagentProvider, app_server),
                    "codex-acp": once(AcpSubagentProvider, AcpProviderConfig(str(adapter), env=env)),
                    "bare": bare(codex),
                }
                for measure in subjects.values():
                    measure()  # the SDKs imported, the binaries read once from disk
                times = rotating(pairs, subjects, label=f"codex {label}")
                ours = times["ours"]
                rows += row(f"codex vs codex-acp ({label})", ours, times["codex-acp"], TARGETS["codex"])
                rows += row(f"codex vs a bare client ({label})", ours, times["bare"], TARGETS["codex-bare"])
    finally:
        shutil.rmtree(home, ignore_errors=True)
    return rows


def row(label: str, xs: list[float], ys: list[float], target: float) -> list[list[object]]:
    """The table's row of one provider: medians, the median ratio, against its target."""
    ratio = median(ratios(xs, ys))
    return [[label, median(xs), median(ys), ratio, f"<= {target}", verdict(ratio <= target)]]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=int, default=10)
    parser.add_argument("--only", choices=["claude", "a2a", "codex"])
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
        if args.only in (None, "codex"):
            rows += codex_rows(args.pairs, workdir)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    end_progress()
    print(table(["provider", "direct (s)", "reference (s)", "ratio", "target", "verdict"], rows))
    left = wait_no_marked_processes()
    if left:
        raise SystemExit(f"processes left running: {left}")


if __name__ == "__main__":
    main()
