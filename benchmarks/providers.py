"""Time to first chunk per provider, against the same agent reached through its ACP adapter.

    python benchmarks/providers.py [--pairs N]

codex: the real Codex, whose model is the stand-in of the OpenAI Responses API on 127.0.0.1
(tests/standins/openai_responses.py), answering the same streamed message each time, reached
- directly: our Codex provider driving `codex app-server` (npm @openai/codex, the version `.ci/run`
  pins, in .cache/codex), and
- through ACP: our ACP provider driving `codex-acp` (npm @zed-industries/codex-acp, installed into
  .cache/codex-acp on first use), which embeds its own Codex.

Both as npm installs them (`codex`, `codex-acp`: a node script that starts the package's native
binary), then both native binaries started directly (what the node scripts cost shows in the
difference). Each figure is one run in this process, from `provider.start()` to the first chunk of
the scripted answer (codex-acp streams a warning of its own as answer text first: it does not
count). Both SDKs' imports are paid before the first pair. Pairs alternate which goes first; the
table gives medians and the median of the per-pair ratios. Target: direct / through ACP <= 1.1,
parity within the noise of a shared machine (the adapter is a process translating every frame, the
app-server a server with more to start: speaking Codex's own protocol must cost no more than going
through the adapter). Note the two embed different Codex versions (the app-server's is newer).
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

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
from acp_tui.codex.provider import CodexSubagentProvider
from tests.standins.openai_responses import ResponsesStandIn, answer

CODEX_MODULES = REPO / ".cache" / "codex" / "node_modules"
CODEX_ACP_DIR = REPO / ".cache" / "codex-acp"
CODEX = CODEX_MODULES / ".bin" / "codex"
CODEX_ACP = CODEX_ACP_DIR / "node_modules" / ".bin" / "codex-acp"
CODEX_ACP_VERSION = "0.16.0"
FIRST = "Hello"  # the answer's first chunk
TARGET = 1.1

Provider = Callable[[AcpProviderConfig], AcpSubagentProvider | CodexSubagentProvider]


async def first_chunk(provider: Provider, config: AcpProviderConfig, workdir: str) -> float:
    """Seconds from start() to the first chunk of the scripted answer; the run then ends."""
    started = time.monotonic()
    run = await provider(config).start(SubagentRequest("say hello", cwd=workdir))
    seen, at = "", float("nan")
    async for event in run.events():
        if isinstance(event, OutputDelta) and at != at:
            seen += event.text
            if FIRST in seen:
                at = time.monotonic() - started
    result = await run.result()
    if FIRST not in result.output:
        raise SystemExit(f"no answer from {config.command}: {result.stop_reason} {result.error}")
    return at


def subjects() -> list[tuple[str, Path, Path]]:
    """(what is compared, the app-server's command, codex-acp's command), once both are installed."""
    missing = None if CODEX.exists() else "codex is not installed: bash .ci/run installs it"
    if missing is None and not CODEX_ACP.exists():
        missing = npm_install(str(CODEX_ACP_DIR), f"@zed-industries/codex-acp@{CODEX_ACP_VERSION}")
    if missing:
        raise SystemExit(missing)
    native_codex = next(CODEX_MODULES.glob("@openai/codex-linux-*/vendor/*/bin/codex"))
    native_acp = next(CODEX_ACP_DIR.glob("node_modules/@zed-industries/codex-acp-linux-*/bin/codex-acp"))
    return [("npm commands", CODEX, CODEX_ACP), ("native binaries", native_codex, native_acp)]


def measure(pairs: int) -> None:
    compared = subjects()
    home = Path(tempfile.mkdtemp(prefix="acp-tui-bench-codex-", dir="/var/tmp"))
    workdir = tempfile.mkdtemp(prefix="acp-tui-bench-")
    rows = []
    try:
        with ResponsesStandIn() as stand_in:
            stand_in.write_codex_home(home)
            env = {"CODEX_HOME": str(home)}

            def once(provider: Provider, config: AcpProviderConfig) -> Callable[[], float]:
                def run() -> float:
                    stand_in.script(answer(FIRST, ", world"))
                    return asyncio.run(first_chunk(provider, config, workdir))

                return run

            for label, codex, adapter in compared:
                a = once(CodexSubagentProvider, AcpProviderConfig(str(codex), ("app-server",), env=env))
                b = once(AcpSubagentProvider, AcpProviderConfig(str(adapter), env=env))
                a(), b()  # both SDKs imported, both binaries read once from disk
                xs, ys = paired(pairs, a, b, label=label)
                ratio = median(ratios(xs, ys))
                rows.append([label, median(xs), median(ys), ratio, f"<= {TARGET}", verdict(ratio <= TARGET)])
    finally:
        shutil.rmtree(home, ignore_errors=True)
        shutil.rmtree(workdir, ignore_errors=True)
    end_progress()
    print(table(["codex", "app-server (s)", "codex-acp (s)", "ratio", "target", "verdict"], rows))
    left = wait_no_marked_processes()
    if left:
        raise SystemExit(f"processes left running: {left}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=int, default=10)
    args = parser.parse_args()
    header("Time to first chunk: a provider's own protocol vs its ACP adapter")
    measure(args.pairs)


if __name__ == "__main__":
    main()
