"""The question broker: an agent's questions to the person (`elicitation/create`), answered by
whoever can (the app's queue), else declined, and recorded.

What the person sees is guarded (secrets masked, surrogates replaced); the form is read from the
guarded schema. Without anyone to ask (`acp-tui run`, a spare no run has taken) a question is
declined at once: never a hang. A question still waiting when the run stops is answered `cancel`,
and so is any later one. While a question waits, the run's idle clock stops (a person is reading).
Every question is recorded, with its answer and who gave it.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from acp_tui.core.elicitation import (
    CANCEL,
    DECLINE,
    ElicitationAnswer,
    ElicitationAsk,
    ElicitationForm,
    ElicitationRecord,
    QuestionHandler,
)
from acp_tui.runs.deadlines import Deadlines
from acp_tui.runs.output import TextGuard
from acp_tui.runs.waiting import Waits


class QuestionBroker:
    def __init__(
        self,
        handler: QuestionHandler | None,
        guard: TextGuard,
        deadlines: Deadlines,
        waits: Waits,
        *,
        on_record: Callable[[ElicitationRecord], None],
    ) -> None:
        self.records: list[ElicitationRecord] = []
        self._handler = handler
        self._guard = guard
        self._deadlines = deadlines
        self._waits = waits  # the run's: its stop cuts every wait short
        self._on_record = on_record

    async def ask(self, ask: ElicitationAsk) -> ElicitationAnswer:
        ask = self._guarded(ask)
        asked = time.monotonic()
        with self._deadlines.deciding():
            answer, by = await self._answer(ask)
        if answer.action != "accept" or ask.mode != "form":
            answer = ElicitationAnswer(answer.action)  # content goes with an accepted form only
        record = ElicitationRecord(
            ask.mode,
            ask.message,
            ask.schema if ask.mode == "form" else None,
            ask.url if ask.mode == "url" else None,
            answer.action,
            answer.content,
            by,
            self._deadlines.elapsed(),
            time.monotonic() - asked,
        )
        self.records.append(record)
        self._on_record(record)
        return answer

    async def _answer(self, ask: ElicitationAsk) -> tuple[ElicitationAnswer, str]:
        """The answer and who gave it: nobody to ask (or a mode we do not show) declines at once."""
        handler = self._handler
        if handler is None or ask.mode not in ("form", "url"):
            return (CANCEL, "cancelled") if self._waits.halted else (DECLINE, "no one")
        answer, cut = await self._waits.answer(lambda: handler(ask))
        return (answer, "person") if answer is not None else (CANCEL, cut or "cancelled")

    def _guarded(self, ask: ElicitationAsk) -> ElicitationAsk:
        guard = self._guard
        schema = guard.json(ask.schema)
        form = ElicitationForm.from_schema(schema) if ask.mode == "form" else None
        url = guard(ask.url) if ask.url is not None else None
        return ElicitationAsk(ask.mode, guard(ask.message), form, url, schema)
