"""What the pane, the board and the header say about an attempt, in words.

Presentation only (no widget here): the numbers and names come from the attempt, the wording from
us. Untrusted parts are made literal by whoever shows them (`acp_tui.ui.text`).
"""

from __future__ import annotations

import math
from collections import Counter

from acp_tui.acp.auth import LoginRefused, terminal_login
from acp_tui.core.model import (
    PermissionRecord,
    SubagentResult,
    SubagentStopReason,
    ToolCallInfo,
    Usage,
)
from acp_tui.core.text import one_line
from acp_tui.session.attempts import Attempt

HIDDEN_LABELS = {
    "agent_thought_chunk": "thoughts",
    "tool_call": "tool calls",
    "tool_call_update": "tool updates",
    "plan": "plans",
}
SILENT_AFTER = 10.0  # seconds without output before a live run says it is silent
# Tool calls a policy exists to decide on: made without a single request, the policy had no say.
DECIDABLE_KINDS = ("edit", "execute", "delete")
NEVER_ASKED = "this agent never asked: its policy had nothing to decide"
# The options a pane's header names, by category (or by id where the agent gives none).
HEADER_OPTIONS = ("mode", "model")
STOP_STEPS = {"cancel-sent": "cancelling", "sigterm": "sent SIGTERM", "sigkill": "killed (ignored cancel)"}


def format_seconds(seconds: float, *, live: bool = False) -> str:
    """`12.3 s` at the end; while the run is live, whole seconds, so the clock repaints once a second."""
    if seconds >= 60:
        return f"{int(seconds // 60)}m{int(seconds % 60):02d}s"
    return f"{int(seconds)} s" if live else f"{seconds:.1f} s"


def hidden_label(kind: str) -> str:
    if kind.startswith("agent_message_chunk:"):
        return f"{kind.partition(':')[2]} chunks"  # non-text answer content, counted not shown
    return HIDDEN_LABELS.get(kind, kind.replace("_", " "))


def hidden_summary(hidden: Counter[str] | dict[str, int]) -> str:
    if not hidden:
        return "nothing hidden"
    return "hidden: " + " · ".join(f"{hidden_label(k)} {n}" for k, n in sorted(hidden.items()))


def stopped_first(record: PermissionRecord) -> bool:
    """The run ended (a cancel, an error) before anything answered the request (the core's rule
    `cancelled`)."""
    return record.rule == "cancelled" and record.option_id is None


def decided_by(record: PermissionRecord) -> str:
    """What decided a request: the rule (or policy) that answered, or the run's end."""
    return "nothing: the run stopped first" if stopped_first(record) else record.rule


def offered_summary(record: PermissionRecord) -> str:
    return ", ".join(f"{o.name} ({o.kind})" for o in record.options) or "none"


def permissions_summary(records: list[PermissionRecord]) -> str:
    """What matters first, so a cut line keeps it: the last decision and its rule, then the counts."""
    if not records:
        return ""
    allowed = sum(r.decision.startswith("allow") for r in records)
    last = records[-1]
    decided = "cancelled, the run stopped first" if stopped_first(last) else f"{last.decision} by {last.rule}"
    return f"{decided}: {one_line(last.title)} · permissions {len(records)} asked, {allowed} allowed"


def failed_calls_summary(calls: tuple[ToolCallInfo, ...]) -> str:
    """`1 tool call failed: Write out.txt` (the titles, as many as a line holds), or nothing."""
    failed = [call for call in calls if call.failed]
    if not failed:
        return ""
    count = f"{len(failed)} tool call{'' if len(failed) == 1 else 's'} failed"
    return f"{count}: {', '.join(one_line(call.label) for call in failed)} (o: the activity)"


def format_amount(amount: float) -> str:
    """A cost with its significant digits: `1.25`, `0.04`, `0.0004` (never `0.00` for a cost)."""
    if amount == 0 or abs(amount) >= 0.01:
        return f"{amount:.2f}"
    digits = 1 - math.floor(math.log10(abs(amount)))  # two significant digits
    return f"{amount:.{digits}f}".rstrip("0")


def usage_summary(usage: Usage | None) -> str:
    if usage is None:
        return ""
    used = f"{usage.used / 1000:.1f}k" if usage.used >= 1000 else str(usage.used)
    size = f"/{usage.size // 1000}k" if usage.size >= 1000 else (f"/{usage.size}" if usage.size else "")
    tokens = f"{used}{size} tok"
    if usage.cost is None:
        return tokens
    return f"{format_amount(usage.cost.amount)} {one_line(usage.cost.currency, 5)} · {tokens}"  # cost first


# Turns the agent ended itself: its process being ended afterwards is housekeeping, not news.
TURN_ENDED = (SubagentStopReason.COMPLETED, SubagentStopReason.MAX_TOKENS, SubagentStopReason.REFUSAL)


def ending_note(result: SubagentResult, stop_step: str = "") -> str:
    """How the agent's processes ended, when it is news: we had to signal a run that did not end by
    itself (a cancel it did not honour, a hang, an error). An agent that does not exit when its
    stdin closes after a finished turn is ended by SIGTERM, and that is not worth a word; one that
    ignored even SIGTERM is."""
    killed = stop_step == "sigkill" or result.ended_by == "sigkill"
    if result.stop_reason in TURN_ENDED:
        return "killed after its turn (it ignored SIGTERM)" if killed else ""
    if killed:
        return "killed (ignored cancel)" if result.stop_reason is SubagentStopReason.ABORTED else "killed"
    return "ended by SIGTERM" if result.ended_by == "sigterm" else ""


def never_asked_note(result: SubagentResult | None) -> str:
    """Said when a run made edit/execute/delete tool calls without one permission request."""
    if result is None or result.permissions:
        return ""
    made = [f"{kind} {result.tool_kinds[kind]}" for kind in DECIDABLE_KINDS if result.tool_kinds.get(kind)]
    return f"{NEVER_ASKED} ({', '.join(made)})" if made else ""


def options_summary(attempt: Attempt) -> str:
    """`mode ask · model demo-fast`: the session's mode and model (by category, else by id: a record
    keeps no categories); before the session, every option chosen for the run."""
    if not attempt.options:
        return " · ".join(f"{key} {value}" for key, value in attempt.preset.options.items())
    named = {info.id: info.category or info.id for info in attempt.offered}
    return " · ".join(
        f"{named.get(key, key)} {value}"
        for key, value in attempt.options.items()
        if named.get(key, key) in HEADER_OPTIONS
    )


def login_offer(attempt: Attempt) -> tuple[list[str] | None, str | None]:
    """The terminal login an authentication failure offers (`L`), if the agent advertised one it
    may run; else why the one it named is refused (one line), if it named one."""
    result = attempt.result
    if result is None or result.stop_reason is not SubagentStopReason.ERROR:
        return None, None
    preset, refused = attempt.preset, None
    for method in result.auth_methods:
        try:
            argv = terminal_login(method, preset.command, preset.args)
        except LoginRefused as exc:
            refused = refused or str(exc)
            continue
        if argv:
            return argv, None
    return None, refused


def follow_up_refused(attempt: Attempt) -> str | None:
    """Why `f` cannot follow up on this attempt (None: it can)."""
    if attempt.live:
        return "the run has not ended yet"
    return attempt.cannot_follow_up(asking_the_agent=True)


def turn_header(attempt: Attempt) -> str:
    """What opens a follow-up's turn in its pane's answer (Markdown): a rule, then its prompt's
    first line, its punctuation escaped."""
    from acp_tui.reports.compare import inline

    return f"\n\n---\n\n> **follow up ({attempt.label}):** {inline(attempt.first_line, 200)}\n\n"
