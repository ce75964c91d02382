"""Sandbox: a spawn confined by bubblewrap against the same spawn unconfined, side by side.

    python benchmarks/sandbox.py [--pairs N]

Each round runs the stdlib echo agent (echo_agent.py) once through our core each way, rotating which
goes first: unconfined (`sandbox = "none"`), confined (`sandbox = "workspace"`: with the network on,
our launcher applies Landlock's abstract socket scope first, or a stack's namespace where the kernel
lacks it), confined with no network (`sandbox_network = false`, one more namespace), and confined
to a host list (`sandbox_network = ["localhost"]`: the launcher makes the agent's namespace and hands
our proxy its listener). Timed: `provider.start()` to the first answer
chunk (spawn, handshake, prompt: all a start pays for the sandbox), and to the result (teardown
included). Every answer is checked. Reported: medians, the median of the per-round differences
(confined - unconfined) and of the per-round ratios. Target (issue 26): a confined start reaches
its first chunk in at most 1.3x the time of the same start unconfined. Skipped, saying why,
without a working bwrap.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import replace

from _common import (
    ECHO_AGENT,
    PY,
    end_progress,
    header,
    median,
    progress,
    ratios,
    table,
    verdict,
    wait_no_marked_processes,
)

TARGET_RATIO = 1.3
PROMPT = "confined or not"


async def once(config: object, cwd: str) -> tuple[float, float]:
    from acp_tui import AcpSubagentProvider, OutputDelta, SubagentRequest

    start = time.perf_counter()
    run = await AcpSubagentProvider(config).start(SubagentRequest(prompt=PROMPT, cwd=cwd))  # type: ignore[arg-type]
    first = float("nan")
    async for event in run.events():
        if isinstance(event, OutputDelta) and first != first:
            first = time.perf_counter() - start
    result = await run.result()
    total = time.perf_counter() - start
    if result.stop_reason != "completed" or result.output != PROMPT:
        raise SystemExit(f"{config}: ended {result.stop_reason} ({result.error}) with {result.output!r}")
    return first, total


async def measure(rounds: int) -> dict[str, list[tuple[float, float]]]:
    from acp_tui import AcpProviderConfig

    base = AcpProviderConfig(command=PY, args=[ECHO_AGENT])
    subjects = {
        "unconfined": base,
        "confined": replace(base, sandbox="workspace"),
        "confined, no network": replace(base, sandbox="workspace", sandbox_network=False),
        "confined, a host list": replace(base, sandbox="workspace", sandbox_network=("localhost",)),
    }
    names = list(subjects)
    series: dict[str, list[tuple[float, float]]] = {name: [] for name in names}
    with tempfile.TemporaryDirectory(prefix="acp-tui-bench-sandbox-") as cwd:
        for config in subjects.values():  # warm-up: the SDK import, page cache
            await once(config, cwd)
        for i in range(rounds):
            shift = i % len(names)
            for name in names[shift:] + names[:shift]:
                series[name].append(await once(subjects[name], cwd))
            summary = "  ".join(f"{name} {series[name][-1][0] * 1000:.1f} ms" for name in names)
            progress(f"round {i + 1}/{rounds}: {summary}")
    end_progress()
    return series


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=20, help="rounds (default 20)")
    options = parser.parse_args()
    header("Sandbox: confined spawn vs unconfined")
    bwrap = shutil.which("bwrap")
    trial = [bwrap or "bwrap", "--ro-bind", "/", "/", "--unshare-pid", "--cap-drop", "ALL", "--", "true"]
    if bwrap is None or subprocess.run(trial, capture_output=True).returncode != 0:
        print("skipped: bubblewrap (bwrap) is missing or cannot run here")
        return 0
    series = asyncio.run(measure(options.pairs))
    plain = series["unconfined"]
    rows = []
    for name, runs in series.items():
        for index, what in ((0, "start to first chunk"), (1, "start to result")):
            ours = [run[index] for run in runs]
            reference = [run[index] for run in plain]
            added = median([a - b for a, b in zip(ours, reference, strict=True)])
            ratio = median(ratios(ours, reference))
            target = ""
            if name == "confined" and index == 0:
                target = f"<= {TARGET_RATIO}x {verdict(ratio <= TARGET_RATIO)}"
            row = [name, what, median(ours) * 1000, median(reference) * 1000, added * 1000, ratio, target]
            rows.append(row)
    headers = ["run", "timed", "ms", "unconfined ms", "added ms (median of rounds)", "ratio", "target"]
    print(table(headers, rows))
    print(f"\n{options.pairs} rounds; echo_agent.py; medians; bwrap {_bwrap_version(bwrap)}")
    left = wait_no_marked_processes()
    print(f"processes left: {len(left)}")
    return 0


def _bwrap_version(bwrap: str) -> str:
    done = subprocess.run([bwrap, "--version"], capture_output=True, text=True)
    return done.stdout.strip().removeprefix("bubblewrap ")


if __name__ == "__main__":
    sys.exit(main())
