"""When a finished attempt can be followed up, and why not: the words `f` and `run --continue` say."""

from __future__ import annotations

from acp_tui.core.model import SubagentResult, SubagentStopReason
from acp_tui.session.attempts import Attempt, Session
from acp_tui.settings.schema import AgentPreset

PRESET = AgentPreset("kept", "kept-agent")


def ended(session_id: str | None, continuation: str | None = "resume") -> SubagentResult:
    stop = SubagentStopReason.COMPLETED if session_id else SubagentStopReason.ERROR
    return SubagentResult(stop, "", session_id=session_id, continuation=continuation)  # type: ignore[arg-type]


def test_a_follow_up_that_failed_before_its_session_opened_leaves_the_conversation_open() -> None:
    session = Session()
    [first] = session.new_round("go", [PRESET], {"kept": "reject"})
    first.result = ended("s-1")
    second = session.follow_up(first, "again", "reject")
    second.result = ended(None, None)  # e.g. its child could not start
    assert second.session_id == "s-1" and second.continuation == "resume"
    assert second.cannot_follow_up(asking_the_agent=True) is None
    assert session.latest_turn(first) is second and second.opening is first


def test_a_reopened_turn_whose_worktree_could_not_be_reopened_cannot_go_on() -> None:
    attempt = Attempt(1, PRESET, "go", 1, 1, "reject", isolated=True, result=ended("s-1"))
    attempt.recorded_worktree = ("/gone/slot-1/repo", "abc123", None)
    attempt.worktree_error = "/gone/slot-1/repo: not a worktree of ours"
    assert attempt.cannot_follow_up() == (
        "its worktree cannot be reopened: /gone/slot-1/repo: not a worktree of ours"
    )


def test_a_run_that_opened_no_session_cannot_be_followed_up() -> None:
    attempt = Attempt(1, PRESET, "go", 1, 1, "reject", result=ended(None, None))
    assert attempt.cannot_follow_up() == "the run opened no session to continue"
