"""Soak: start-and-dispose cycles at random moments of the lifecycle, some of them concurrent.

Afterwards: no child process, no file descriptor of ours left open, no task left running, and our
memory back near where it started.

    python -m pytest -m soak tests/hostile                         # CI: 200 cycles, well under a minute
    ACP_TUI_SOAK_CYCLES=5000 python -m pytest -m soak tests/hostile -s   # by hand: about 5 minutes

`ACP_TUI_SOAK_SEED` replays a given sequence of moments (the seed in use is printed on failure).
"""

from __future__ import annotations

import asyncio
import os
import random
from collections import Counter
from dataclasses import dataclass

import pytest

import acp_tui.acp.client  # noqa: F401  (the SDK import, paid before the baseline)
from acp_tui import (
    AcpSubagentProvider,
    OutputDelta,
    StatusChanged,
    SubagentRequest,
    SubagentStopReason,
)
from acp_tui.process.group import group_alive
from tests.helpers import our_live_processes, scripted
from tests.hostile.support import MB, fd_count, release_free_memory, rss_bytes

CYCLES = int(os.environ.get("ACP_TUI_SOAK_CYCLES", "200"))
SEED = int(os.environ.get("ACP_TUI_SOAK_SEED", str(random.SystemRandom().randrange(1 << 30))))
BATCH = 8  # runs started together in a concurrent batch
FD_TOLERANCE = 2  # the event loop's own descriptors may come and go
RSS_TOLERANCE = 25 * MB  # allocator slack and the SDK's caches, not a leak per cycle

S = SubagentStopReason
MOMENTS = ("pre-abort", "abort-mid-handshake", "dispose-mid-handshake", "mid-prompt", "at-the-end", "random")


@dataclass
class Cycle:
    moment: str
    delay: float  # for "random": how long after start() the dispose comes


async def one_cycle(cycle: Cycle) -> tuple[str, SubagentStopReason]:
    abort = asyncio.Event()
    if cycle.moment == "pre-abort":
        abort.set()
        config = scripted()
    elif cycle.moment in ("abort-mid-handshake", "dispose-mid-handshake"):
        config = scripted(hang="session/new")
    elif cycle.moment == "mid-prompt":
        config = scripted(forever=1, delay=0.01)
    elif cycle.moment == "at-the-end":
        config = scripted(text="done")
    else:
        config = scripted(text="some text in pieces", chunks=5, delay=0.005)
    run = await AcpSubagentProvider(config).start(SubagentRequest("soak"), abort=abort)
    if cycle.moment in ("abort-mid-handshake", "dispose-mid-handshake"):
        async for event in run.events():
            if isinstance(event, StatusChanged) and event.status == "initializing":
                break
        if cycle.moment == "abort-mid-handshake":
            abort.set()
        else:
            await run.dispose("soak")
    elif cycle.moment == "mid-prompt":
        async for event in run.events():
            if isinstance(event, OutputDelta):
                break
        await run.dispose("soak")
    elif cycle.moment == "at-the-end":
        await run.result()
        await run.dispose("soak")  # after the end: a no-op
    elif cycle.moment == "random":
        await asyncio.sleep(cycle.delay)
        await run.dispose("soak")
    result = await asyncio.wait_for(run.result(), 10)
    assert run.pid is None or not group_alive(run.pid), cycle
    expected = {
        "at-the-end": {S.COMPLETED},
        "random": {S.COMPLETED, S.ABORTED},
    }.get(cycle.moment, {S.ABORTED})
    assert result.stop_reason in expected, (cycle, result)
    if cycle.moment == "pre-abort":
        assert run.pid is None and result.exit_code is None
    return cycle.moment, result.stop_reason


async def cycles(rng: random.Random, count: int) -> Counter[tuple[str, SubagentStopReason]]:
    seen: Counter[tuple[str, SubagentStopReason]] = Counter()
    done = 0
    batch_no = 0
    while done < count:
        size = min(BATCH, count - done)
        batch = [Cycle(rng.choice(MOMENTS), rng.uniform(0, 0.3)) for _ in range(size)]
        if batch_no % 2 == 0:  # every other batch runs concurrently
            outcomes = await asyncio.gather(*(one_cycle(c) for c in batch))
        else:
            outcomes = [await one_cycle(c) for c in batch]
        seen.update(outcomes)
        done += size
        batch_no += 1
    return seen


@pytest.mark.soak
@pytest.mark.timeout(max(60, CYCLES))
async def test_start_and_dispose_cycles_leave_nothing_behind() -> None:
    rng = random.Random(SEED)
    await cycles(rng, BATCH * 2)  # warm-up: the watchdog, the SDK's caches, the loop's selectors
    release_free_memory()
    fds_before, rss_before = fd_count(), rss_bytes()
    tasks_before = len(asyncio.all_tasks())

    seen = await cycles(rng, CYCLES)

    release_free_memory()
    await asyncio.sleep(0.05)  # let transports closed in the last cycle finish closing
    context = f"seed {SEED} (ACP_TUI_SOAK_SEED replays it); outcomes {dict(seen)}"
    assert sum(seen.values()) == CYCLES
    assert {moment for moment, _ in seen} >= set(MOMENTS) or CYCLES < 50, context
    assert our_live_processes() == [], context
    assert len(asyncio.all_tasks()) == tasks_before, f"tasks left: {asyncio.all_tasks()} ({context})"
    fds_after = fd_count()
    assert fds_after <= fds_before + FD_TOLERANCE, (
        f"{fds_after - fds_before} file descriptors more than before: "
        f"{sorted(os.listdir('/proc/self/fd'), key=int)} ({context})"
    )
    growth = rss_bytes() - rss_before
    print(f"\nsoak: {CYCLES} cycles, fds {fds_before}->{fds_after}, RSS {growth / MB:+.1f} MB; {context}")
    assert growth < RSS_TOLERANCE, f"our RSS grew by {growth / MB:.1f} MB over {CYCLES} cycles ({context})"
