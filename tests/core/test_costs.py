"""What an attempt spent, against its budget, and the session's totals per currency."""

from __future__ import annotations

from acp_tui.core.costs import over_budget, spent, totals
from acp_tui.core.model import Cost


def test_a_follow_up_spent_what_its_session_s_cost_grew_by() -> None:
    assert spent(Cost(0.07, "USD"), None) == Cost(0.07, "USD")
    grown = spent(Cost(0.07, "USD"), Cost(0.05, "USD"))
    assert grown is not None and round(grown.amount, 9) == 0.02
    # A fresh process that counts from zero again, or another currency: what it reports.
    assert spent(Cost(0.01, "USD"), Cost(0.05, "USD")) == Cost(0.01, "USD")
    assert spent(Cost(0.07, "EUR"), Cost(0.05, "USD")) == Cost(0.07, "EUR")
    assert spent(None, Cost(0.05, "USD")) is None


def test_a_cost_past_the_budget_is_an_error_naming_it() -> None:
    assert over_budget(Cost(0.05, "USD"), 0.05) is None  # reaching it is not passing it
    assert (
        over_budget(Cost(0.0601, "USD"), 0.05) == "over budget: spent 0.0601 USD, more than budget_usd = 0.05"
    )
    assert over_budget(Cost(0.0601, "usd"), 0.05) is not None
    assert over_budget(Cost(9.0, "EUR"), 0.05) is None  # never converted: judged by no budget
    assert over_budget(Cost(9.0, "USD"), None) is None
    assert over_budget(None, 0.05) is None


def test_totals_are_per_currency() -> None:
    assert totals([Cost(0.5, "USD"), None, Cost(1.0, "EUR"), Cost(0.25, "USD")]) == {"EUR": 1.0, "USD": 0.75}
    assert totals([]) == {}
