"""The clocks that bound a run, as anyio cancel scopes.

- the handshake: each step (spawn to `initialize`, the session) within `handshake` seconds;
- the run timeout and the idle timeout: `expired()` waits in a scope whose deadline is the nearer of
  the two and returns the reason when one passes. The idle deadline moves with every frame heard
  (lazily: the scope wakes at the old deadline and sleeps again until the new one), and stops while
  a permission request waits for an answer (a person deciding is not a silent agent): the scope's
  deadline is moved when the answer comes;
- the cancel grace: from `session/cancel` (or whatever ends a turn) to the signals, one deadline
  that the turn's wait and the session's close share.

Times are `time.monotonic()`, which is also anyio's clock under asyncio (the loop's time).
"""

from __future__ import annotations

import contextlib
import math
import time
from collections.abc import Iterator
from typing import Protocol

import anyio


class Timeouts(Protocol):
    """A provider's config, as far as the clocks go (`AcpProviderConfig` is one)."""

    @property
    def handshake_timeout(self) -> float: ...
    @property
    def cancel_grace(self) -> float: ...
    @property
    def run_timeout(self) -> float | None: ...
    @property
    def idle_timeout(self) -> float | None: ...


class Deadlines:
    def __init__(
        self,
        *,
        handshake: float,
        cancel_grace: float,
        run_timeout: float | None = None,
        idle_timeout: float | None = None,
    ) -> None:
        self.handshake = handshake
        self.cancel_grace = cancel_grace
        self.run_timeout = run_timeout
        self.idle_timeout = idle_timeout
        self.started = time.monotonic()
        self.grace_ends: float | None = None
        self._heard = self.started
        self._deciding = 0
        self._watch: anyio.CancelScope | None = None

    @classmethod
    def of(cls, config: Timeouts) -> Deadlines:
        return cls(
            handshake=config.handshake_timeout,
            cancel_grace=config.cancel_grace,
            run_timeout=config.run_timeout,
            idle_timeout=config.idle_timeout,
        )

    def elapsed(self) -> float:
        return time.monotonic() - self.started

    # The handshake and the grace -------------------------------------------------------------

    def handshake_step(self) -> contextlib.AbstractContextManager[anyio.CancelScope]:
        """One step of the handshake: TimeoutError when it outlasts `handshake` seconds."""
        return anyio.fail_after(self.handshake)

    def start_grace(self) -> float:
        """The grace starts (once): its deadline."""
        if self.grace_ends is None:
            self.grace_ends = time.monotonic() + self.cancel_grace
        return self.grace_ends

    def grace_left(self) -> float:
        """What is left of the grace; all of it when no cancel started it."""
        if self.grace_ends is None:
            return self.cancel_grace
        return max(0.0, self.grace_ends - time.monotonic())

    # The run and idle timeouts ---------------------------------------------------------------

    def heard(self) -> None:
        """The agent said something: silence is counted from now."""
        self._heard = time.monotonic()

    @contextlib.contextmanager
    def deciding(self) -> Iterator[None]:
        """While a permission request waits for its answer, the idle clock stops; it starts again
        from the answer."""
        self._deciding += 1
        self._move()
        try:
            yield
        finally:
            self._deciding -= 1
            self.heard()
            self._move()

    async def expired(self) -> str:
        """Wait until the run or the idle timeout passes; why, in words. Never, when neither is set."""
        while True:
            when, _ = self._next()
            with anyio.CancelScope(deadline=when) as self._watch:
                await anyio.sleep_forever()
            self._watch = None
            when, reason = self._next()
            if when <= time.monotonic():
                return reason

    def _next(self) -> tuple[float, str]:
        deadlines = [(math.inf, "")]
        if self.run_timeout is not None:
            deadlines.append((self.started + self.run_timeout, f"timed out after {self.run_timeout:g} s"))
        if self.idle_timeout is not None and not self._deciding:
            deadlines.append((self._heard + self.idle_timeout, f"silent for {self.idle_timeout:g} s"))
        return min(deadlines)

    def _move(self) -> None:
        if self._watch is not None:
            self._watch.deadline = self._next()[0]
