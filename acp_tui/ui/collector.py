"""Python's garbage collector, its long passes where no key waits for them.

Python collects its young objects every YOUNG_GENERATION allocations, the middle generation every
tenth time, everything every tenth of those: wherever the allocation falls, often in the middle of
a key's work. The older passes are long once many runs have streamed (sixty-four panes: 0.2 to 0.5 s,
through the widgets, lines and geometry that frames leave behind by the hundred thousand), and the
key that met one waited that long. Here Python keeps the young passes (short); the older ones, at
Python's pace, are started by us where nobody waits: just after the frame of a key is painted (the
person is looking at it), or when no key has come for a while.
"""

from __future__ import annotations

import gc
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from textual.app import App
    from textual.timer import Timer

    from acp_tui.ui.key_order import KeyOrder

# Allocations between two collections of the young objects (Python's default: 700). A frame of
# sixteen streaming panes makes tens of thousands of short-lived objects; collected every 700, many
# were still in use and moved to the old generation, whose full passes (0.2 to 0.8 s, every two
# seconds or so) were most of the keys' worst latencies. At 50,000 they die young.
YOUNG_GENERATION = 50_000
OLDER_EVERY = 10  # passes of a generation between two of the next older one (Python's pace)
NEVER = 1 << 30  # a threshold Python's own count never reaches
QUIET = 1.0  # seconds without a key after which a pass that is due runs anyway


class Collector:
    """Started with the app's first frame, stopped as it ends (Python's thresholds as they were)."""

    def __init__(self, app: App[Any], keys: KeyOrder) -> None:
        self._app = app
        self._keys = keys
        self._last_key = 0.0
        self._thresholds: tuple[int, ...] | None = None
        self._timer: Timer | None = None

    def start(self) -> None:
        self._thresholds = gc.get_threshold()
        gc.set_threshold(YOUNG_GENERATION, NEVER, NEVER)  # the older passes: ours to start
        self._timer = self._app.set_interval(QUIET, self._when_quiet)

    def stop(self) -> None:
        if self._timer is not None:
            self._timer.stop()
        if self._thresholds is not None:
            gc.set_threshold(*self._thresholds)
            self._thresholds = None

    def key_typed(self) -> None:
        """A key is on its way: a pass that is due runs once its frame is painted."""
        self._last_key = time.monotonic()
        self._keys.when_done(self.collect_due)

    def _when_quiet(self) -> None:
        if not self._keys.busy and time.monotonic() - self._last_key >= QUIET:
            self.collect_due()

    def collect_due(self) -> None:
        """The oldest generation whose pass Python would have started by now, if any. None before
        `start`, nor while the collector is paused (the SDK's import, in a thread, right after the
        first frame): an explicit pass runs all the same, through a heap not yet set aside, with
        the runs a key just started waiting for it."""
        if self._thresholds is None or not gc.isenabled():
            return
        _, young_passes, middle_passes = gc.get_count()
        if middle_passes >= OLDER_EVERY:
            gc.collect(2)
        elif young_passes >= OLDER_EVERY:
            gc.collect(1)
