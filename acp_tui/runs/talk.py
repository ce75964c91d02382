"""The conversation as a stop reaches it: the one place a run's cancellation meets its turn.

`stop()` only asks, from any task, any number of times (the first reason is the one kept). Outside a
turn it cancels the conversation's scope; inside one, `turn()` asks the agent to end the turn and
gives it the cancel grace, past which the request is abandoned (`Interrupted`). However the
conversation then ends, a run told to stop ends `aborted` (`aborted()`, `failed()`,
`turn_outcome()`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Iterator
from typing import TypeVar

import anyio

from acp_tui.core.model import SubagentStopReason
from acp_tui.runs.deadlines import Deadlines

log = logging.getLogger(__name__)

Outcome = tuple[SubagentStopReason, str | None]
T = TypeVar("T")


class Interrupted(Exception):
    """The run was told to stop while it waited for the agent."""


class Talk:
    def __init__(self, deadlines: Deadlines, on_step: Callable[[str], None]) -> None:
        self.stopping = False  # told to stop (dispose, the abort event, a timeout): it ends aborted
        self.turn_ended = False  # the agent ended its turn itself (a cancel honoured counts)
        self._reason: str | None = None
        self._deadlines = deadlines
        self._on_step = on_step
        self._in_turn = False
        # A plain asyncio event: it exists before the spawn, where anyio's backend is not loaded yet.
        self._stop_asked = asyncio.Event()
        self._scope: anyio.CancelScope | None = None

    def stop(self, reason: str | None) -> bool:
        """Ask the conversation to stop; False when it was asked already (the first reason stays)."""
        if self.stopping:
            return False
        self.stopping, self._reason = True, reason
        self._stop_asked.set()
        if not self._in_turn:
            self.cut()
        return True

    def cut(self) -> None:
        """End the conversation now (its child gone, or a stop outside a turn)."""
        if self._scope is not None:
            self._scope.cancel()

    @contextlib.contextmanager
    def scope(self) -> Iterator[None]:
        """The conversation's scope: what `cut()` cancels, cancelled at once once told to stop."""
        try:
            with anyio.CancelScope() as self._scope:
                if self.stopping:
                    self._scope.cancel()
                yield
        finally:
            self._scope = None  # a stop from now on has no conversation to cancel

    def aborted(self) -> Outcome:
        """How a run told to stop ends, whatever its agent answers (some answer `end_turn`)."""
        return SubagentStopReason.ABORTED, self._reason

    def failed(self, message: str) -> Outcome:
        """A failure; once a stop was asked for, whatever went wrong is an abort."""
        return self.aborted() if self.stopping else (SubagentStopReason.ERROR, message)

    async def turn(self, request: Callable[[], Awaitable[T]], cancel: Callable[[], Awaitable[object]]) -> T:
        """The turn: `request()` to its answer. Told to stop meanwhile, the run sends `cancel()` and
        gives the request what is left of the cancel grace to end (the agent ends its turn, or not);
        past it the request is abandoned: Interrupted. Cancelling the task awaiting a request sends
        nothing to the agent, hence `cancel`."""
        if self.stopping:  # the race before the turn: never send a request once told to stop
            raise Interrupted
        answers: list[T] = []
        failures: list[Exception] = []
        self._in_turn = True
        try:
            async with anyio.create_task_group() as group:

                async def ask() -> None:
                    try:
                        answers.append(await request())
                    except Exception as exc:  # the caller's to read, not the group's to raise
                        failures.append(exc)
                    group.cancel_scope.cancel()

                group.start_soon(ask)
                await self._stop_asked.wait()
                self._on_step("cancel-sent")
                with anyio.move_on_at(self._deadlines.start_grace()):
                    # After a broken pipe even this notification can hang: it shares the bound.
                    try:
                        await cancel()
                    except Exception:
                        log.debug("the turn's cancel failed", exc_info=True)
                    await anyio.sleep_forever()  # until the request ends the group
                group.cancel_scope.cancel()
        finally:
            self._in_turn = False
        if failures:
            raise failures[0]
        if not answers:
            raise Interrupted
        self.turn_ended = True
        return answers[0]

    async def turn_outcome(
        self,
        request: Callable[[], Awaitable[object]],
        cancel: Callable[[], Awaitable[object]],
        outcome: Callable[[], Outcome],
    ) -> Outcome:
        """The turn (`turn`), then how the run ends: `outcome()`, read from what the agent said; or
        aborted once told to stop, however the agent ended a turn it was asked to end (canceled,
        interrupted, or as its error)."""
        await self.turn(request, cancel)
        return self.aborted() if self.stopping else outcome()
