"""The RFC's map from ACP stop reasons to the seam's."""

from __future__ import annotations

from acp_tui.core.model import SubagentStopReason

ACP_STOP_REASONS: dict[str, SubagentStopReason] = {
    "end_turn": SubagentStopReason.COMPLETED,
    "max_tokens": SubagentStopReason.MAX_TOKENS,
    "refusal": SubagentStopReason.REFUSAL,
    "cancelled": SubagentStopReason.ABORTED,
    # No equivalent meaning: the task did not finish.
    "max_turn_requests": SubagentStopReason.ERROR,
}


def map_stop_reason(acp_stop_reason: str) -> SubagentStopReason:
    """Anything the table does not know is an error."""
    return ACP_STOP_REASONS.get(acp_stop_reason, SubagentStopReason.ERROR)
