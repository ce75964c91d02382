"""A run's phase: one value that only moves forward, and the status each phase is announced as."""

from __future__ import annotations

import enum

from acp_tui.core.model import RunStatus


class Phase(enum.IntEnum):
    """Where a run is. `CANCELLING` comes after every live phase: a phase reached while a run is
    stopping is not news, so nothing moves a run back from it."""

    NEW = 0  # made, not started: never announced
    SPAWNING = 1
    INITIALIZING = 2
    PROMPTING = 3
    CANCELLING = 4
    FINISHED = 5

    @property
    def status(self) -> RunStatus:
        assert self is not Phase.NEW, "a run that has not started has no status"
        return self.name.lower()  # type: ignore[return-value]
