"""Permission requests waiting for a person (the `ask` policy, and rules that say `ask`): one queue,
oldest first, each request a future the run awaits.

A request belongs to the attempt whose run asked (the run says who is asking while its policy
decides: `policy.ask.asking_run`; the queue is told whose attempt a run serves). A request leaves the queue
the moment it is answered, or when its run stops asking (it ended, or withdrew the request):
listeners hear every change, so a dialog showing a request that left can close, and every count of
the requests waiting (the header's, the dialog's) is this queue's.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from acp_tui.policy.ask import PermissionAsk
    from acp_tui.session.attempts import Attempt


@dataclass(eq=False)
class PendingAsk:
    """A permission request waiting for a person; the run awaits `answer`."""

    attempt: Attempt | None
    ask: PermissionAsk
    answer: asyncio.Future[str | None] = field(
        default_factory=lambda: asyncio.get_running_loop().create_future()
    )

    @property
    def agent(self) -> str:
        return self.attempt.agent if self.attempt is not None else "?"

    @property
    def rule(self) -> str | None:
        """The `ask` rule that sent the request to a person (None: the `ask` policy sends them all)."""
        return self.ask.rule


Listener = Callable[[PendingAsk], None]


class AskQueue:
    """The requests waiting, oldest first. `ask` is the handler policies are given."""

    def __init__(self, attempt_of: Callable[[object], Attempt | None] = lambda run: None) -> None:
        self.pending: list[PendingAsk] = []
        self._listeners: list[Listener] = []
        self._attempt_of = attempt_of  # the attempt a run serves

    def listen(self, listener: Listener) -> None:
        """`listener(pending)` is called when a request joins the queue and when it leaves."""
        self._listeners.append(listener)

    async def ask(self, ask: PermissionAsk) -> str | None:
        """Queue the request and wait for a person's answer (an option id, or None: cancelled)."""
        from acp_tui.policy.ask import asking_run

        run = asking_run.get()
        pending = PendingAsk(self._attempt_of(run) if run is not None else None, ask)
        self.pending.append(pending)
        self._changed(pending)
        try:
            return await pending.answer
        finally:
            self._leave(pending)

    def answer(self, pending: PendingAsk, option_id: str | None) -> None:
        """A person's answer: the request leaves the queue now. Too late (the run stopped asking) is
        nothing."""
        if not pending.answer.done():
            pending.answer.set_result(option_id)
        self._leave(pending)

    def _leave(self, pending: PendingAsk) -> None:
        if pending in self.pending:
            self.pending.remove(pending)
            self._changed(pending)

    def waiting_for(self, attempt: Attempt) -> int:
        return sum(pending.attempt is attempt for pending in self.pending)

    def __bool__(self) -> bool:
        return bool(self.pending)

    def __len__(self) -> int:
        return len(self.pending)

    def _changed(self, pending: PendingAsk) -> None:
        for listener in self._listeners:
            listener(pending)
