"""A run's state at a glance: the live phase while it runs, then the coloured stop reason."""

from __future__ import annotations

from textual.reactive import reactive
from textual.widgets import Static

LIVE_PHASES = ("waiting", "spawning", "initializing", "prompting")


class StatusBadge(Static):
    DEFAULT_CSS = """
    StatusBadge {
        width: 14;  /* the longest status, so that a change needs no layout (a reflow of the screen) */
        content-align: center middle;
        text-style: bold;
        color: $text;
        background: $panel;
        &.-waiting, &.-spawning, &.-initializing { background: $primary-muted; }
        &.-prompting { background: $accent-muted; }
        &.-completed { background: $success; color: $text-success; background: $success-muted; }
        &.-max-tokens { background: $warning-muted; color: $text-warning; }
        &.-refusal { background: $secondary-muted; color: $text-secondary; }
        &.-aborted { background: $warning-muted; color: $text-warning; }
        &.-error { background: $error-muted; color: $text-error; }
    }
    """

    status: reactive[str] = reactive("waiting", init=False)

    def __init__(self, status: str = "waiting", *, id: str | None = None) -> None:
        super().__init__(status, id=id)
        self.set_reactive(StatusBadge.status, status)
        self.add_class(f"-{status}")

    def watch_status(self, old: str, new: str) -> None:
        self.remove_class(f"-{old}")
        self.add_class(f"-{new}")
        self.update(new, layout=False)

    @property
    def live(self) -> bool:
        return self.status in LIVE_PHASES
