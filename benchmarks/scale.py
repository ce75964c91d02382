"""Scale: 1, 8 and 32 concurrent runs of a standard-library agent in the app.

    python benchmarks/scale.py [--pairs N] [--sizes 1,8,32]

Every measurement is a fresh worker process (this script with --worker), so the RSS is the app's
own. The worker imports everything first, then:
- app: `SupervisorApp` headless (`run_test`, 200x60) with N presets of echo_agent.py and no spares
  (`warm = false`: every run starts its child, the same work as the bare fan-out); press Enter and
  time until every pane has its result (each must be `completed` with the exact answer); then quit
  the way the user does (`action_quit`, which disposes every run) and report its peak RSS (VmHWM).
- warm: the same with spares (the default), Enter pressed once every spare is ready, as after a
  person has typed the prompt: each run takes a child already booted.
- bare: the reference, in one asyncio process like the app's: N children spawned at once, each
  driven with the SDK (initialize, session/new, prompt), timed until every answer is in.
After each worker exits the script checks that no process it started is left (children, watchdog).
Rounds rotate over every (kind, N). Targets: all complete, app RSS < 200 MB at the largest N, zero
left, and app/bare at the largest N no more than at the one before it (the app's cost linear).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
import time

from _common import (
    ECHO_AGENT,
    PY,
    end_progress,
    header,
    kill_marked,
    median,
    press_key,
    progress,
    table,
    verdict,
    wait_no_marked_processes,
)

PROMPT = "scale check"


def peak_rss_mb() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return float("nan")


async def app_worker(n: int, warm: bool = False) -> dict[str, object]:
    from pathlib import Path

    import acp_tui.acp.client  # noqa: F401  (the app preloads the SDK after its first frame)
    from acp_tui.settings.schema import AgentPreset, Settings
    from acp_tui.ui.app import SupervisorApp

    presets = tuple(AgentPreset(f"a{i:02d}", PY, (ECHO_AGENT,)) for i in range(n))
    app = SupervisorApp(Settings(presets=presets, prompt=PROMPT, warm=warm))
    app.CSS_PATH = str(Path(sys.modules[SupervisorApp.__module__].__file__ or "").with_name("app.tcss"))
    async with app.run_test(size=(200, 60)) as pilot:
        await pilot.pause(0.2)
        while warm and not spares_ready(app, n):  # as long as a person takes to type the prompt
            await pilot.pause(0.05)
        start = time.perf_counter()
        press_key(app, "enter")
        while True:
            panes = app.main_screen.panes()  # kept by the grid: a query would walk the screen every 5 ms
            if len(panes) == n and all(p.attempt.result is not None for p in panes):
                break
            if time.perf_counter() - start > 120:
                raise TimeoutError("runs did not finish in 120 s")
            await asyncio.sleep(0.005)
        elapsed = time.perf_counter() - start
        completed = sum(
            p.attempt.result is not None and p.attempt.result.stop_reason == "completed" for p in panes
        )
        exact = sum(p.attempt.result is not None and p.attempt.result.output == PROMPT for p in panes)
        await pilot.pause(0.1)
        shown = sum(p.answer.text == PROMPT for p in panes)
        await app.action_quit()
    return {"elapsed": elapsed, "completed": completed, "exact": min(exact, shown), "rss": peak_rss_mb()}


def spares_ready(app: object, n: int) -> bool:
    spares = app.driver.spares  # type: ignore[attr-defined]
    ready = [s for s in spares._spares if s.handshake and s.handshake.ready.is_set()] if spares else []
    return len(ready) == n


async def bare_worker(n: int) -> dict[str, object]:
    import acp
    from acp.schema import ClientCapabilities, Implementation

    class Client:
        def __init__(self) -> None:
            self.parts: list[str] = []

        async def session_update(self, session_id: str, update: object, **kwargs: object) -> None:
            if getattr(update, "session_update", None) == "agent_message_chunk":
                self.parts.append(update.content.text)  # type: ignore[attr-defined]

        async def request_permission(self, *args: object, **kwargs: object) -> None:
            raise NotImplementedError

    async def one(proc: asyncio.subprocess.Process) -> bool:
        client = Client()
        conn = acp.connect_to_agent(client, proc.stdin, proc.stdout)  # type: ignore[arg-type]
        await conn.initialize(
            protocol_version=acp.PROTOCOL_VERSION,
            client_capabilities=ClientCapabilities(),
            client_info=Implementation(name="bare", version="0"),
        )
        session = await conn.new_session(cwd=".", mcp_servers=[])
        response = await conn.prompt(session_id=session.session_id, prompt=[acp.text_block(PROMPT)])
        assert proc.stdin is not None
        proc.stdin.close()
        await proc.wait()
        return response.stop_reason == "end_turn" and "".join(client.parts) == PROMPT

    start = time.perf_counter()
    procs = [
        await asyncio.create_subprocess_exec(
            PY, ECHO_AGENT, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE
        )
        for _ in range(n)
    ]
    oks = await asyncio.gather(*(one(p) for p in procs))
    elapsed = time.perf_counter() - start
    return {"elapsed": elapsed, "completed": sum(oks), "exact": sum(oks), "rss": peak_rss_mb()}


def measure(kind: str, n: int, failures: list[str]) -> dict[str, float]:
    done = subprocess.run(
        [PY, __file__, "--worker", kind, str(n)], capture_output=True, text=True, timeout=300
    )
    left = wait_no_marked_processes()
    if left:
        failures.append(f"{kind} x{n}: {len(left)} processes left: {left[0][1][:80]}")
        kill_marked()
    try:
        record = json.loads(done.stdout.strip().splitlines()[-1])
    except (IndexError, ValueError):
        failures.append(f"{kind} x{n}: worker failed: {done.stderr.strip()[-300:]}")
        return {"elapsed": float("nan"), "completed": 0, "exact": 0, "rss": float("nan"), "left": len(left)}
    if record["completed"] != n or record["exact"] != n:
        failures.append(f"{kind} x{n}: {record['completed']} completed, {record['exact']} exact of {n}")
    record["left"] = len(left)
    return record


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--pairs", type=int, default=10, help="rounds (default 10)")
    parser.add_argument("--sizes", default="1,8,32", help="run counts (default 1,8,32)")
    parser.add_argument("--worker", nargs=2, metavar=("KIND", "N"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        kind, n = args.worker[0], int(args.worker[1])
        record = asyncio.run(bare_worker(n) if kind == "bare" else app_worker(n, warm=kind == "warm"))
        print(json.dumps(record), flush=True)
        return 0

    header("Scale: concurrent runs of a standard-library agent in the app, vs a bare SDK fan-out")
    sizes = [int(s) for s in args.sizes.split(",")]
    kinds = ("app", "warm", "bare")
    cells = [(kind, n) for n in sizes for kind in kinds]
    records: dict[tuple[str, int], list[dict[str, float]]] = {cell: [] for cell in cells}
    failures: list[str] = []
    for cell in cells[: len(kinds)]:
        measure(*cell, failures)  # warm-up
    for i in range(args.pairs):
        shift = (i * len(kinds)) % len(cells)
        for cell in cells[shift:] + cells[:shift]:
            records[cell].append(measure(*cell, failures))
        progress(f"scale round {i + 1}/{args.pairs}")
    end_progress()

    base = {kind: median([r["elapsed"] for r in records[(kind, sizes[0])]]) for kind in kinds}
    rows, ratios = [], []
    for n in sizes:
        app, warm, bare = records[("app", n)], records[("warm", n)], records[("bare", n)]
        app_t = median([r["elapsed"] for r in app])
        bare_t = median([r["elapsed"] for r in bare])
        ratio = median([a["elapsed"] / b["elapsed"] for a, b in zip(app, bare, strict=True)])
        ratios.append(ratio)
        rows.append(
            [
                n,
                f"{sum(r['completed'] == n and r['exact'] == n for r in app)}/{len(app)}",
                app_t,
                f"{app_t / base['app']:.2f}x",
                bare_t,
                f"{bare_t / base['bare']:.2f}x",
                ratio,
                median([r["elapsed"] for r in warm]),
                f"{max(r['rss'] for r in app + warm):.0f}",
                f"{max(r['rss'] for r in bare):.0f}",
                sum(int(r["left"]) for r in app + warm),
            ]
        )
    print(
        table(
            [
                "runs",
                "app rounds all exact",
                "app s",
                f"app vs {sizes[0]}",
                "bare s",
                f"bare vs {sizes[0]}",
                "app/bare",
                "warm s",
                "app peak RSS MB",
                "bare peak RSS MB",
                "left",
            ],
            rows,
        )
    )
    top = records[("app", sizes[-1])] + records[("warm", sizes[-1])]
    rss_ok = max(r["rss"] for r in top) < 200
    all_ok = not failures
    print(
        f"\nwall: Enter to every result (app: no spares; warm: every spare ready at Enter), spawn to"
        f" every answer (bare); medians of {args.pairs} rounds"
    )
    if len(sizes) > 1:
        linear = ratios[-1] <= ratios[-2] * 1.05  # within the rounds' spread
        print(
            f"app/bare at {sizes[-1]} runs no more than at {sizes[-2]} (within 5 %): {verdict(linear)}"
            f" ({ratios[-1]:.2f} vs {ratios[-2]:.2f})"
        )
    print(f"all complete and exact, zero processes left: {verdict(all_ok)}")
    print(
        f"app peak RSS at {sizes[-1]} runs < 200 MB: {verdict(rss_ok)} ({max(r['rss'] for r in top):.0f} MB)"
    )
    for line in failures[:5]:
        print(f"failure: {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
