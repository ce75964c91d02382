"""Hostile children: how long the event loop stalls and a run lasts, and how soon the watchdog acts,
each against a reference in the same rounds. (The tests check what happens; these are the timings
they no longer bound.)

    python benchmarks/hostile.py [--rounds N] [--only loop|watchdog]

loop: through the library (`AcpSubagentProvider`), a hostile child of tests/scripted_agent.py (a
    50 MB stderr flood, 10,000 permission requests at once, a 100 MB answer cut at 256 K) against a
    healthy child of the same script (a short answer), alternating: the worst time the event loop
    went without running a 5 ms timer (what an embedding UI would feel), and the run's duration.
    Target: the hostile run's p95 stall at most 10x the healthy run's (the machine's own hiccups)
    in the same rounds; the absolute figures say what a UI would feel (the tests once bounded
    them at 0.5 s, which a loaded machine alone can pass).
watchdog: `acp-tui run` with an agent that ignores session/cancel, SIGTERM and stdin's end is
    SIGKILLed once the agent is prompting; the time until the agent's process group is gone (only
    the watchdog can end it), against SIGKILL sent by us to the same kind of group (the floor).
    Target: p95 at most 25x the direct SIGKILL's (the watchdog looks four times a second, then
    walks /proc before it signals).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shlex
import signal
import subprocess
import sys
import time

from _common import (
    PY,
    REPO,
    end_progress,
    group_alive,
    header,
    median,
    pct,
    rotating,
    table,
    verdict,
    wait_no_marked_processes,
)

SCRIPTED = str(REPO / "tests" / "scripted_agent.py")
MB = 1_000_000
ROWS: dict[str, tuple[list[str], dict[str, int]]] = {
    "stderr flood 50 MB": ([f"stderr_bytes={50 * MB}", "text=still here"], {}),
    "10,000 permission requests": (["storm=10000", "text= done"], {}),
    "answer of 100 MB": ([f"bulk={100 * MB}"], {"max_output_chars": 256 * 1024}),
}
HEALTHY = ["text=a short and healthy answer", "chunks=5"]
STALL_RATIO_TARGET = 10.0
WATCHDOG_RATIO_TARGET = 25.0
STUBBORN = [SCRIPTED, "forever=1", "on_cancel=ignore", "ignore_term=1", "linger=1", "stderr_at_prompt=READY"]


async def one_run(options: list[str], overrides: dict[str, int]) -> tuple[float, float]:
    """(worst loop stall, run duration) of one run of the scripted agent with `options`."""
    from acp_tui import AcpProviderConfig, AcpSubagentProvider, SubagentRequest

    loop = asyncio.get_running_loop()
    worst = 0.0

    async def watch() -> None:
        nonlocal worst
        while True:
            before = loop.time()
            await asyncio.sleep(0.005)
            worst = max(worst, loop.time() - before - 0.005)

    config = AcpProviderConfig(command=PY, args=[SCRIPTED, *options], **overrides)  # type: ignore[arg-type]
    watcher = asyncio.ensure_future(watch())
    started = time.perf_counter()
    run = await AcpSubagentProvider(config).start(SubagentRequest("go"))
    await run.result()
    took = time.perf_counter() - started
    watcher.cancel()
    return worst, took


def loop_case(rounds: int) -> list[list[object]]:
    import acp_tui.acp.client  # noqa: F401  (the SDK import, paid before anything is timed)

    return [loop_row(name, options, overrides, rounds) for name, (options, overrides) in ROWS.items()]


def loop_row(name: str, options: list[str], overrides: dict[str, int], rounds: int) -> list[object]:
    stalls: dict[str, list[float]] = {"hostile": [], "healthy": []}
    durations: dict[str, list[float]] = {"hostile": [], "healthy": []}

    def timed(kind: str, argv: list[str], extra: dict[str, int]) -> float:
        stall, took = asyncio.run(one_run(argv, extra))
        stalls[kind].append(stall)
        durations[kind].append(took)
        return stall

    subjects = {
        "hostile": lambda: timed("hostile", options, overrides),
        "healthy": lambda: timed("healthy", HEALTHY, {}),
    }
    rotating(rounds, subjects, label=name)
    end_progress()
    hostile, healthy = pct(stalls["hostile"], 95), pct(stalls["healthy"], 95)
    return [
        name,
        f"{median(stalls['hostile']) * 1000:.0f} / {hostile * 1000:.0f}",
        f"{median(stalls['healthy']) * 1000:.0f} / {healthy * 1000:.0f}",
        hostile / healthy,
        f"{median(durations['hostile']):.2f} s (healthy {median(durations['healthy']):.2f} s)",
        f"<= {STALL_RATIO_TARGET:.0f}x",
        verdict(hostile <= STALL_RATIO_TARGET * healthy),
    ]


def gone_after_sigkill(through_acp_tui: bool) -> float:
    """Seconds from a SIGKILL to the stubborn agent's group being gone."""
    if through_acp_tui:
        argv = [
            PY,
            "-m",
            "acp_tui",
            "run",
            "--prompt",
            "go",
            f"--agent=stubborn={shlex.join([PY, *STUBBORN])}",
        ]
    else:
        argv = [PY, *STUBBORN]
    process = subprocess.Popen(
        argv, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True
    )
    assert process.stderr is not None
    if through_acp_tui:
        for line in process.stderr:  # `run` forwards the agent's stderr: READY once it is prompting
            if b"READY" in line:
                break
        [agent_group] = agents_of(process.pid)
        os.kill(process.pid, signal.SIGKILL)
    else:
        agent_group = process.pid
        os.killpg(agent_group, signal.SIGKILL)
    killed = time.perf_counter()
    while group_alive(agent_group):
        time.sleep(0.002)
    took = time.perf_counter() - killed
    process.wait()
    return took


def agents_of(pid: int) -> list[int]:
    """The scripted agents `pid` started (each leads its own process group)."""
    found = []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                with open(f"/proc/{entry.name}/stat", "rb") as f:
                    stat = f.read()
                with open(f"/proc/{entry.name}/cmdline", "rb") as f:
                    cmdline = f.read()
            except OSError:
                continue
            if int(stat[stat.rfind(b")") + 2 :].split()[1]) == pid and SCRIPTED.encode() in cmdline:
                found.append(int(entry.name))
    return found


def watchdog_case(rounds: int) -> list[list[object]]:
    series = rotating(
        rounds,
        {"watchdog": lambda: gone_after_sigkill(True), "direct": lambda: gone_after_sigkill(False)},
        label="watchdog",
    )
    end_progress()
    watchdog, direct = pct(series["watchdog"], 95), pct(series["direct"], 95)
    return [
        [
            "SIGKILL of acp-tui run: the agent's group gone",
            f"{median(series['watchdog']) * 1000:.0f} / {watchdog * 1000:.0f}",
            f"{median(series['direct']) * 1000:.0f} / {direct * 1000:.0f}",
            watchdog / direct,
            f"p95 <= {WATCHDOG_RATIO_TARGET:.0f}x",
            verdict(watchdog <= WATCHDOG_RATIO_TARGET * direct),
        ]
    ]


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=10, help="rounds per case (default 10)")
    parser.add_argument("--only", choices=("loop", "watchdog"))
    args = parser.parse_args()
    header("Hostile children: the loop's stalls and the watchdog, against references in the same rounds")
    if args.only in (None, "loop"):
        headers = [
            "child",
            "stall p50 / p95 ms",
            "healthy p50 / p95 ms",
            "p95 ratio",
            "run",
            "target",
            "verdict",
        ]
        print(table(headers, loop_case(args.rounds)), "\n", flush=True)
    if args.only in (None, "watchdog"):
        headers = ["case", "p50 / p95 ms", "direct SIGKILL p50 / p95 ms", "p95 ratio", "target", "verdict"]
        print(table(headers, watchdog_case(args.rounds)), flush=True)
    left = wait_no_marked_processes()
    print(f"\nprocesses left: {len(left)}")
    return 1 if left else 0


if __name__ == "__main__":
    sys.exit(main())
