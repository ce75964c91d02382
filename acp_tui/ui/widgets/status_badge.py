"""A run's state at a glance: one colour per state, shared with the pane's border (`STATE_COLOURS`).

States: the live phases (`waiting`, `spawning`, `initializing`, `prompting`), `needs-you` (a
permission request waits for the user), `cancelling`, and the stop reasons in the screen's words
(`core.model.stop_word`: `cancelled`, where the data says `aborted`).
"""

from __future__ import annotations

from textual.reactive import reactive
from textual.widgets import Static

LIVE_PHASES = ("waiting", "spawning", "initializing", "prompting")
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


def _badge_css() -> str:
    rules = []
    for key, colour in STATE_COLOURS.items():
        if key == "error":
            rules.append(f"&.-{key} {{ background: {colour}; color: white; text-style: bold; }}")
        elif key == "needs-you":
            rules.append(f"&.-{key} {{ background: {colour}; color: black; text-style: bold; }}")
        else:
            rules.append(f"&.-{key} {{ color: {colour}; background: {colour} 20%; }}")
    return "\n".join(rules)


class StatusBadge(Static):
    DEFAULT_CSS = f"""
    StatusBadge {{
        width: 12;  /* the longest label, so that a change needs no layout (a reflow of the screen) */
        content-align: center middle;
        text-style: bold;
        color: $text;
        background: $panel;
        {_badge_css()}
    }}
    """

    status: reactive[str] = reactive("waiting", init=False)

    def __init__(self, status: str = "waiting", *, id: str | None = None) -> None:
        super().__init__(label(status), id=id, markup=False)
        self.set_reactive(StatusBadge.status, status)
        self.add_class(f"-{colour_key(status)}")

    def watch_status(self, old: str, new: str) -> None:
        self.remove_class(f"-{colour_key(old)}")
        self.add_class(f"-{colour_key(new)}")
        self.update(label(new), layout=False)

    @property
    def live(self) -> bool:
        return self.status in LIVE_STATES
