"""What the hostile tests share: memory and descriptor probes, the bulk answer's text, key latency."""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import gc
import os
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from tests.helpers import SCRIPTED_AGENT

MiB = 1 << 20
MB = 1_000_000


def rss_bytes() -> int:
    """Our resident set size now (VmRSS of /proc/self/status)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS in /proc/self/status")


def fd_count() -> int:
    return len(os.listdir("/proc/self/fd"))


@dataclass
class PeakRss:
    """The highest RSS seen above the baseline while the block ran (sampled every 20 ms)."""

    baseline: int = 0
    peak: int = 0
    _stop: threading.Event = field(default_factory=threading.Event)

    @property
    def growth(self) -> int:
        return self.peak - self.baseline

    def _sample(self) -> None:
        while not self._stop.wait(0.02):
            self.peak = max(self.peak, rss_bytes())


def release_free_memory() -> None:
    """Collect garbage and hand freed heap pages back to the OS, so a baseline is not inflated by
    what earlier tests freed (glibc keeps it otherwise, and later growth would hide inside it)."""
    gc.collect()
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6").malloc_trim(0)


@contextmanager
def peak_rss() -> Iterator[PeakRss]:
    release_free_memory()
    probe = PeakRss(baseline=rss_bytes())
    probe.peak = probe.baseline
    sampler = threading.Thread(target=probe._sample, daemon=True)
    sampler.start()
    try:
        yield probe
    finally:
        probe._stop.set()
        sampler.join()
        probe.peak = max(probe.peak, rss_bytes())


class LoopLag:
    """The longest the event loop went without running a 5 ms timer: how long a UI would freeze.
    A figure for the notes ($ACP_TUI_HOSTILE_NOTES), never a bound: it grows with the machine's load."""

    def __init__(self) -> None:
        self.worst = 0.0
        self._task: asyncio.Task[None] | None = None

    async def _watch(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            before = loop.time()
            await asyncio.sleep(0.005)
            self.worst = max(self.worst, loop.time() - before - 0.005)

    def __enter__(self) -> LoopLag:
        self._task = asyncio.ensure_future(self._watch())
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._task is not None
        self._task.cancel()


def bulk_piece(i: int, size: int, newlines: bool = False) -> str:
    """The same as tests/scripted_agent.py's bulk_piece (that module reads argv when imported)."""
    unit = f"{i:07d}|" * 9 + ("\n" if newlines else "|")
    return (unit * (size // len(unit) + 1))[:size]


def bulk_text(total: int, chunk: int = MiB, *, limit: int | None = None, newlines: bool = False) -> str:
    """The first `limit` characters of the scripted agent's `bulk=total bulk_chunk=chunk` answer."""
    limit = total if limit is None else min(limit, total)
    parts, made, i = [], 0, 0
    while made < limit:
        size = min(chunk, total - i * chunk)
        parts.append(bulk_piece(i, size, newlines))
        made += size
        i += 1
    return "".join(parts)[:limit]


def scripted_args(**options: object) -> tuple[str, ...]:
    return (SCRIPTED_AGENT, *(f"{key}={value}" for key, value in options.items()))


def python() -> str:
    return sys.executable


async def key_lands(app: Any, key: str = "tab") -> None:
    """A real key event, then its effect (`tab` moves the focus), on any screen.

    Not `pilot.press`: that waits for the whole app to go idle, which a flooded app never is.
    """
    from textual import events

    before = app.focused
    app._driver.send_message(events.Key(key, "\t" if key == "tab" else key))
    await eventually(lambda: app.focused is not before, what=f"{key} to land")


def send_key(app: Any, key: str, character: str | None = None) -> None:
    """A key as the terminal would deliver it, without waiting for the app to go idle."""
    from textual import events

    app._driver.send_message(events.Key(key, character))


@contextmanager
def frozen_heap() -> Iterator[None]:
    """Move everything the test session allocated so far out of the collector's sight.

    A full collection walks every object of the process: after a few hundred tests that is the
    pytest session's heap, and its pauses (a few tenths of a second) would be charged to the app's
    key latency. The app's own objects, made after this, are still collected as usual.
    """
    gc.collect()
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


async def eventually(condition: Any, what: str = "") -> None:
    """Wait for `condition()` (`what`, as the caller names it) on the event loop alone, with no
    deadline of its own: the test's timeout is the only clock. Not `pilot.pause`: that first waits
    for every widget to drain its message queue, which is exactly what a flooded app cannot do quickly."""
    while not condition():  # noqa: ASYNC110  (a condition of the app's state, set by no event of ours)
        await asyncio.sleep(0.005)
