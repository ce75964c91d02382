"""What waits for a person: permission requests (the `ask` policy, and rules that say `ask`) and the
agents' questions (`elicitation/create`). One queue, oldest first, each a future the run awaits.

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
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the questions' module loads with the first question, not before the first frame
    from acp_tui.core.elicitation import ElicitationAnswer, ElicitationAsk
    from acp_tui.policy.ask import PermissionAsk
    from acp_tui.session.attempts import Attempt


@dataclass(eq=False)
class PendingAsk:
    """A permission request (its answer: an option id, None for cancelled) or a question (its
    answer: an `ElicitationAnswer`) waiting for a person; the run awaits `answer`."""

    attempt: Attempt | None
    ask: PermissionAsk | ElicitationAsk
    answer: asyncio.Future[Any] = field(default_factory=lambda: asyncio.get_running_loop().create_future())

    @property
    def agent(self) -> str:
        return self.attempt.agent if self.attempt is not None else "?"

    @property
    def is_question(self) -> bool:
        from acp_tui.core.elicitation import ElicitationAsk

        return isinstance(self.ask, ElicitationAsk)

    @property
    def what(self) -> str:
        """What is waiting, in a few words: the request's title, or the question's message."""
        from acp_tui.core.elicitation import ElicitationAsk

        return self.ask.message if isinstance(self.ask, ElicitationAsk) else self.ask.title


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
        answer: str | None = await self._wait(ask)
        return answer

    async def question(self, ask: ElicitationAsk) -> ElicitationAnswer:
        """Queue the agent's question and wait for a person's answer. (The question handler.)"""
        answer: ElicitationAnswer = await self._wait(ask)
        return answer

    async def _wait(self, ask: PermissionAsk | ElicitationAsk) -> Any:
        from acp_tui.policy.ask import asking_run

        run = asking_run.get()
        pending = PendingAsk(self._attempt_of(run) if run is not None else None, ask)
        self.pending.append(pending)
        self._changed(pending)
        try:
            return await pending.answer
        finally:
            self._leave(pending)

    def answer(self, pending: PendingAsk, answer: str | ElicitationAnswer | None) -> None:
        """A person's answer: it leaves the queue now. Too late (the run stopped asking) is
        nothing."""
        if not pending.answer.done():
            pending.answer.set_result(answer)
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
