"""The permission broker: one agent's requests decided by the run's policy, and recorded.

What the policy sees is guarded (secrets masked, surrogates replaced), except the option ids, which
go back to the agent as they came. A request still waiting when the run stops (disposed, timed out,
its child gone) is answered `cancelled`: the agent would otherwise wait for an answer nobody gives.
While a request waits, the run's idle clock stops. Every request is recorded, answered or not.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from acp_tui.core.model import PermissionOptionInfo, PermissionRecord
from acp_tui.policy.ask import PermissionAsk, PermissionPolicy
from acp_tui.runs.deadlines import Deadlines
from acp_tui.runs.output import TextGuard
from acp_tui.runs.waiting import Waits


class PermissionBroker:
    def __init__(
        self,
        policy: PermissionPolicy,
        guard: TextGuard,
        deadlines: Deadlines,
        waits: Waits,
        *,
        on_record: Callable[[PermissionRecord], None],
    ) -> None:
        self.policy = policy
        self.records: list[PermissionRecord] = []
        self._guard = guard
        self._deadlines = deadlines
        self._waits = waits  # the run's: its stop cuts every wait short
        self._on_record = on_record

    async def decide(self, ask: PermissionAsk) -> str | None:
        """The option id the policy chose for `ask`, or None (answer `cancelled`)."""
        ask = self._guarded(ask)
        asked = time.monotonic()
        with self._deadlines.deciding():
            choice, cut = await self._waits.answer(lambda: self.policy.decide(ask))
        option_id, rule = None, "cancelled" if cut == "cancelled" else f"{self.policy.name} failed"
        if choice is not None:
            option_id, rule = choice.option_id, choice.rule
        kinds: dict[str, str] = {}
        for option in ask.options:  # an id offered twice reads as its first offer
            kinds.setdefault(option.option_id, option.kind)
        if option_id not in kinds:
            option_id = None
        record = PermissionRecord(
            title=ask.title,
            kind=ask.kind,
            options=ask.options,
            decision=kinds[option_id] if option_id is not None else "cancelled",
            option_id=option_id,
            rule=rule,
            at=self._deadlines.elapsed(),
            content=ask.content,
            raw_input=ask.raw_input,
            locations=ask.locations,
            waited_s=time.monotonic() - asked,
        )
        self.records.append(record)
        self._on_record(record)
        return option_id

    def _guarded(self, ask: PermissionAsk) -> PermissionAsk:
        guard = self._guard
        return PermissionAsk(
            title=guard(ask.title),
            kind=ask.kind,
            # The id goes back to the agent as it came: only the name is for people.
            options=tuple(PermissionOptionInfo(o.option_id, guard(o.name), o.kind) for o in ask.options),
            content=guard(ask.content),
            raw_input=guard.json(ask.raw_input),
            locations=tuple(guard(path) for path in ask.locations),
            cwd=ask.cwd,
        )
