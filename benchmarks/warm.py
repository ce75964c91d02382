"""Warm starts: Enter to the first answer chunk in the app, with spares against without, side by side.

    python benchmarks/warm.py [--rounds N] [--start S] [--follow-up]

The agent (tests/sessions_agent.py) takes `--start` seconds (default 3) before it answers
`initialize`, as large agents do (measured: Codex 1.3 s, Claude Agent 1.9 s, OpenCode 5.2 s). Each
round opens the app twice, alternating which goes first: `warm = true` (a spare is started after the
first frame) and `warm = false` (every run starts cold). With spares, the app stays idle for longer
than the start before Enter, as an operator reading and typing would. Timed: the key press to the
first answer chunk the pane receives. Target (issue 19): within 1.0 s warm (over `--start` cold);
reported as medians and their ratio.

`--follow-up` times the second turn instead (issue 31): once the first has ended, the operator
reads the answer (with spares: until its follow-up's spare is up), then `f`, a prompt and Enter;
timed from that Enter to the follow-up's first chunk.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _common import PY, end_progress, header, median, progress, ratios, table, verdict

ROOT = Path(__file__).resolve().parent.parent
AGENT = str(ROOT / "tests" / "sessions_agent.py")


async def once(warm: bool, start: float, store: Path, follow_up: bool) -> float:
    sys.path.insert(0, str(ROOT))
    from acp_tui.settings.schema import AgentPreset, Settings
    from acp_tui.ui.app import SupervisorApp

    preset = AgentPreset("slow", PY, (AGENT, f"store={store}", f"start_delay={start}"))
    app = SupervisorApp(Settings(presets=(preset,), prompt="how fast", warm=warm))
    async with app.run_test(size=(120, 36)) as pilot:
        spares = app.driver.spares

        async def read_until_spared(follow_ups: bool) -> None:
            """An operator reading the screen for longer than the agent takes to start."""
            assert spares is not None
            while not any(
                s.wanted.follow_up is follow_ups and s.handshake and s.handshake.ready.is_set()
                for s in spares._spares
            ):
                await pilot.pause(0.05)

        if warm and not follow_up:
            await read_until_spared(False)
        took = await timed_turn(pilot, app, None if follow_up else warm, "turn 1: how fast")
        if follow_up:
            if warm:
                await read_until_spared(True)
            app.main_screen.panes()[0].focus()
            await pilot.press("f", *"and then")
            took = await timed_turn(pilot, app, warm, "turn 2: and then (after: how fast)")
    return took


async def timed_turn(pilot: Any, app: Any, warm: bool | None, expected: str) -> float:
    """Enter, the turn it starts run to its end: seconds from Enter to its first chunk. `warm`:
    whether it must have taken a spare (None: whichever)."""
    before = len(app.session.attempts)
    pressed = time.monotonic()
    await pilot.press("enter")
    while len(app.session.attempts) == before or app.session.attempts[-1].first_output_at is None:
        await pilot.pause(0.005)
    attempt = app.session.attempts[-1]
    first: float = attempt.first_output_at - pressed
    while attempt.live:
        await pilot.pause(0.01)
    if attempt.result is None or attempt.result.output != expected or warm not in (None, attempt.warm):
        raise SystemExit(f"warm={warm}, {expected!r}: {attempt.result}")
    return first


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--start", type=float, default=3.0)
    parser.add_argument("--follow-up", action="store_true", help="time the second turn (f, Enter)")
    args = parser.parse_args()
    what = "a follow-up's Enter" if args.follow_up else "Enter"
    header(f"warm starts: {what} to the first chunk, spares against cold starts")
    warm, cold = [], []
    with tempfile.TemporaryDirectory() as scratch:
        for n in range(args.rounds):
            progress(f"round {n + 1}/{args.rounds}")
            order = (True, False) if n % 2 == 0 else (False, True)
            for is_warm in order:
                took = asyncio.run(once(is_warm, args.start, Path(scratch), args.follow_up))
                (warm if is_warm else cold).append(took)
    end_progress()
    print(
        table(
            ["", "median Enter -> first chunk", "runs"],
            [
                ["warm (a spare)", f"{median(warm):.3f} s", len(warm)],
                ["cold", f"{median(cold):.3f} s", len(cold)],
            ],
        )
    )
    print(f"warm / cold: {median(ratios(warm, cold)):.3f}x (agent start {args.start:g} s)")
    quick, slow = median(warm) < 1.0, median(cold) > args.start
    print(f"target: warm within 1.0 s: {verdict(quick)}; cold over the start: {verdict(slow)}")


if __name__ == "__main__":
    main()
