"""A run's state at a glance: one colour per state, for the pane's badge and border (`STATE_COLOURS`).

States: the live phases (`session.attempts.LIVE_PHASES`), `needs-you` (a
permission request waits for the user), `cancelling`, and the stop reasons in the screen's words
(`core.model.stop_word`: `cancelled`, where the data says `aborted`).
"""

from __future__ import annotations

from acp_tui.session.attempts import LIVE_PHASES

LIVE_STATES = (*LIVE_PHASES, "needs-you", "cancelling")

# One colour per state; error the loudest (a full background), a live run the calmest.
STATE_COLOURS = {
    "live": "#3b82c4",
    "needs-you": "#e5a50a",
    "cancelling": "#b07cc6",
    "completed": "#4ebf71",
    "max-tokens": "#d9822b",
    "refusal": "#3fb6c6",
    "cancelled": "#8a8f98",
    "error": "#e5484d",
}

LABELS = {"needs-you": "needs you"}


def colour_key(state: str) -> str:
    """The key of `STATE_COLOURS` for a state (the live phases share one)."""
    return "live" if state in LIVE_PHASES else state


def label(state: str) -> str:
    return LABELS.get(state, state)
