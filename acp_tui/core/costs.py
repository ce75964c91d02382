"""What runs cost, as their agents report it (`usage_update`'s `cost`), against a budget.

An agent reports its session's cumulative cost. A follow-up continues a session whose earlier
turns an earlier attempt already counted: what the follow-up spent is the cost reported now less
the cost reported before it, in the same currency. A fresh process that counts from zero again
(its report falls below the earlier one) spent what it reports. The session's total is the sum of
what each attempt spent, per currency: never converted, so never added across currencies.

`budget_usd` judges costs reported in US dollars only; a cost in another currency is shown, and
judged by no budget.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # (the model loads with the first run; a session's costs are asked for before)
    from acp_tui.core.model import Cost

BUDGET_CURRENCY = "USD"


def spent(reported: Cost | None, before: Cost | None) -> Cost | None:
    """What one attempt spent, from the cumulative cost its agent reported and the one reported
    before it in the same session (None: a new session)."""
    if reported is None:
        return None
    if before is None or before.currency != reported.currency or reported.amount < before.amount:
        return reported
    from acp_tui.core.model import Cost

    return Cost(reported.amount - before.amount, reported.currency)


def over_budget(cost: Cost | None, budget_usd: float | None) -> str | None:
    """The error of a run whose cost passed its budget, naming the budget; None while within."""
    if budget_usd is None or cost is None or cost.currency.upper() != BUDGET_CURRENCY:
        return None
    if cost.amount <= budget_usd:
        return None
    return f"over budget: spent {cost.amount:.4f} USD, more than budget_usd = {budget_usd:g}"


def totals(costs: Iterable[Cost | None]) -> dict[str, float]:
    """The costs added up per currency, currencies in alphabetical order."""
    summed: dict[str, float] = {}
    for cost in costs:
        if cost is not None:
            summed[cost.currency] = summed.get(cost.currency, 0.0) + cost.amount
    return dict(sorted(summed.items()))
