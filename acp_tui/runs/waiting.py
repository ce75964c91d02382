"""Waiting for an answer that the run's stop cuts short: a policy deciding (which may ask a
person), a person answering an agent's question.

Each wait is a cancel scope that `halt()` cancels (the run stops: disposed, timed out, its child
gone); once halted, no wait begins. The agent would otherwise wait for an answer nobody gives.
While it waits, whose request it is can be told (`policy.ask.asking_run`: the queue a person
answers from needs it).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Literal, TypeVar

import anyio

from acp_tui.policy.ask import asking_run

T = TypeVar("T")
Cut = Literal["cancelled", "failed"]  # why no answer came: the run stopped, or the answerer raised


class Waits:
    def __init__(self, asker: object) -> None:
        self._asker = asker  # whose request it is
        self._waiting: set[anyio.CancelScope] = set()
        self.halted = False

    def halt(self) -> None:
        """Every wait ends now, unanswered, and so does any later one."""
        self.halted = True
        for scope in self._waiting:
            scope.cancel()

    async def answer(self, ask: Callable[[], Awaitable[T]]) -> tuple[T | None, Cut | None]:
        """(what `ask()` gave, None), or (None, why it gave nothing)."""
        if self.halted:
            return None, "cancelled"
        token = asking_run.set(self._asker)
        try:
            with anyio.CancelScope() as scope:
                self._waiting.add(scope)
                try:
                    return await ask(), None
                except Exception:
                    return None, "failed"
                finally:
                    self._waiting.discard(scope)
        finally:
            asking_run.reset(token)
        return None, "cancelled"  # the scope was cancelled: the run halted
