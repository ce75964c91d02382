"""What each turn spent, for the budget and the session's total: a follow-up's is what its session's
cost grew by; the total is per currency."""

from __future__ import annotations

from acp_tui.core.model import Cost, SubagentResult, SubagentStopReason, Usage
from acp_tui.session.attempts import Session
from acp_tui.settings.schema import AgentPreset


def ended(amount: float, currency: str = "USD") -> SubagentResult:
    return SubagentResult(SubagentStopReason.COMPLETED, "", usage=Usage(10, 100, Cost(amount, currency)))


def test_a_follow_up_spent_what_the_session_grew_by_and_the_total_is_per_currency() -> None:
    session = Session()
    a, b = AgentPreset("a", "x"), AgentPreset("b", "y")
    first, other = session.new_round("go", [a, b], {"a": "reject", "b": "reject"})
    first.result, other.result = ended(0.25), ended(1.5, "EUR")
    follow = session.follow_up(first, "and?", "reject", a)
    follow.usage = Usage(20, 100, Cost(0.75, "USD"))  # live: the session's cost so far
    assert follow.spent == Cost(0.5, "USD")
    assert session.costs() == {"EUR": 1.5, "USD": 0.75}


def test_a_session_continued_with_no_cost_known_counts_from_its_first_report() -> None:
    """An agent's own session (`--load`, or chosen from its list) spent before we came: what it
    spent then is no turn of ours, nor against a budget."""
    session = Session()
    a = AgentPreset("a", "x")
    (kept,) = session.new_round("its title", [a], {"a": "reject"})
    kept.result = SubagentResult(SubagentStopReason.COMPLETED, "")  # as a loaded session's record has it
    follow = session.follow_up(kept, "go on", "reject", a)
    follow.usage = follow.first_usage = Usage(20, 100, Cost(3.0, "USD"))  # the session's cost so far
    follow.usage = Usage(30, 100, Cost(3.25, "USD"))
    assert follow.spent == Cost(0.25, "USD")
