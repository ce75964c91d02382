"""Time to answer: `acp-tui run --format json` against a bare SDK client and `acpx exec`, same agents.

    python benchmarks/time_to_answer.py [--pairs N] [--agents stdlib,demo,ts] [--no-acpx]

Each figure is the wall time of one real process, from spawn to exit, as a user would run it:

- ours: `acp-tui run --format json --prompt P --agent 'x=CMD'` (the console script beside our Python)
- bare: bare_client.py (spawn first, import the SDK while the child boots, initialize, session/new,
  one prompt, print the answer, close stdin, reap, exit)
- acpx: `acpx --agent CMD --format quiet --deny-all exec P` (npm `acpx`, installed into
  benchmarks/.cache on first use; skipped with a reason when it cannot be)

on three agents: `stdlib` (echo_agent.py: the standard library only), `demo` (our Python-SDK demo
agent, persona echo), `ts` (the ACP TypeScript SDK's example agent, which itself sleeps about 3 s
per prompt to play a model, so its ratios sit near 1 by construction). Every round runs each client
once, rotating which goes first; each answer is checked. Targets: ours/bare <= 1.00, ours/acpx <= 0.5.
"""

from __future__ import annotations

import argparse
import json
import shlex
import subprocess
import sys
import time
from collections.abc import Callable

from _common import (
    ACPX_BIN,
    ACPX_DIR,
    BARE_CLIENT,
    ECHO_AGENT,
    PY,
    REPO,
    TS_AGENT,
    TS_SDK_DIR,
    acp_tui_command,
    end_progress,
    header,
    median,
    node,
    ratios,
    rotating,
    table,
    verdict,
    wait_no_marked_processes,
)

PROMPT = "say this back"
ACPX_VERSION = "0.19.1"
TS_SDK_VERSION = "1.9.0"


def npm_install(prefix: str, package: str) -> str | None:
    """Install an npm package under `prefix`; the reason it could not be, or None."""
    if node() is None:
        return "node is not installed"
    try:
        done = subprocess.run(
            ["npm", "install", "--no-audit", "--no-fund", "--prefix", prefix, package],
            capture_output=True,
            text=True,
            timeout=300,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"npm install {package} failed: {exc}"
    if done.returncode != 0:
        return f"npm install {package} failed: {done.stderr.strip().splitlines()[-1:]}"
    return None


def ensure_ts_agent() -> str | None:
    if TS_AGENT.exists():
        return None
    return npm_install(str(TS_SDK_DIR), f"@agentclientprotocol/sdk@{TS_SDK_VERSION}") or (
        None if TS_AGENT.exists() else "the TypeScript SDK has no examples/agent.js"
    )


def ensure_acpx() -> str | None:
    if ACPX_BIN.exists():
        return None
    return npm_install(str(ACPX_DIR), f"acpx@{ACPX_VERSION}") or (
        None if ACPX_BIN.exists() else "acpx installed no executable"
    )


def timed(argv: list[str], check: Callable[[str], bool], failures: list[str], name: str) -> float:
    start = time.perf_counter()
    done = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, cwd=REPO)
    elapsed = time.perf_counter() - start
    if done.returncode != 0 or not check(done.stdout):
        failures.append(f"{name}: rc={done.returncode} stdout={done.stdout[:200]!r}")
    return elapsed


def ours_ok(expected: str | None) -> Callable[[str], bool]:
    def check(stdout: str) -> bool:
        record = json.loads(stdout.strip().splitlines()[-1])
        return record["stop_reason"] == "completed" and (expected is None or record["output"] == expected)

    return check


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--pairs", type=int, default=10, help="rounds per agent (default 10)")
    parser.add_argument("--agents", default="stdlib,demo,ts", help="which agents (default: all three)")
    parser.add_argument("--no-acpx", action="store_true", help="skip acpx")
    parser.add_argument(
        "--acpx-on", default="stdlib,demo", help="agents acpx runs on too (default stdlib,demo)"
    )
    args = parser.parse_args()

    header("Time to answer: acp-tui run vs a bare SDK client vs acpx exec (wall time, one prompt)")
    agents: dict[str, list[str]] = {}
    wanted = args.agents.split(",")
    if "stdlib" in wanted:
        agents["stdlib"] = [PY, ECHO_AGENT]
    if "demo" in wanted:
        agents["demo"] = [PY, "-m", "acp_tui.demo.agent", "--persona", "echo"]
    if "ts" in wanted:
        if reason := ensure_ts_agent():
            print(f"skipped the TypeScript example agent: {reason}\n")
        else:
            agents["ts"] = [node() or "node", str(TS_AGENT)]
    acpx_reason = "--no-acpx" if args.no_acpx else ensure_acpx()
    if acpx_reason:
        print(f"skipped acpx: {acpx_reason}\n")

    failures: list[str] = []
    rows = []
    verdicts = []
    for name, cmd in agents.items():
        spec = shlex.join(cmd)
        expected = None if name == "ts" else PROMPT
        subjects: dict[str, Callable[[], float]] = {
            "ours": lambda spec=spec, expected=expected, name=name: timed(
                [*acp_tui_command(), "run", "--format", "json", "--prompt", PROMPT, "--agent", f"x={spec}"],
                ours_ok(expected),
                failures,
                f"ours/{name}",
            ),
            "bare": lambda spec=spec, expected=expected, name=name: timed(
                [PY, BARE_CLIENT, "--prompt", PROMPT, "--agent", spec],
                lambda out, expected=expected: (
                    out.startswith("end_turn: ")
                    and (expected is None or out.strip() == f"end_turn: {expected}")
                ),
                failures,
                f"bare/{name}",
            ),
        }
        if not acpx_reason and name in args.acpx_on.split(","):
            subjects["acpx"] = lambda spec=spec, expected=expected, name=name: timed(
                [str(ACPX_BIN), "--agent", spec, "--format", "quiet", "--deny-all", "exec", PROMPT],
                lambda out, expected=expected: expected is None or expected in out,
                failures,
                f"acpx/{name}",
            )
        for subject in subjects.values():  # warm-up: disk cache, node's compile cache
            subject()
        series = rotating(args.pairs, subjects, label=name)
        end_progress()
        vs_bare = median(ratios(series["ours"], series["bare"]))
        verdicts.append(f"{name}: ours/bare {vs_bare:.2f} (target <= 1.00: {verdict(vs_bare <= 1.0)})")
        vs_acpx = float("nan")
        if "acpx" in series:
            vs_acpx = median(ratios(series["ours"], series["acpx"]))
            verdicts.append(f"{name}: ours/acpx {vs_acpx:.2f} (target <= 0.50: {verdict(vs_acpx <= 0.5)})")
        rows.append(
            [
                name,
                len(series["ours"]),
                median(series["ours"]),
                median(series["bare"]),
                median(series.get("acpx", [])),
                vs_bare,
                vs_acpx,
            ]
        )

    print(
        table(
            ["agent", "rounds", "ours s", "bare s", "acpx s", "ours/bare", "ours/acpx"],
            rows,
        )
    )
    print("\n(medians of wall seconds; ratios are medians of the per-round ratios)\n")
    for line in verdicts:
        print(line)
    if failures:
        print(f"\n{len(failures)} wrong or failed answers, first: {failures[0]}")
    left = wait_no_marked_processes()
    print(f"processes left: {len(left)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
