"""The board: one row per attempt of the session, closed panes included. Who is stuck, at a glance.

The app keeps one board (`MainScreen.action_board`), filled anew each time it opens.

Sortable by any column (`s` on the column under the cursor, or a click on its header), filtered
by state (`f` cycles through the states present); Enter jumps to the attempt's pane, reopening it
when it was closed.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import DataTable, Static

from acp_tui.core.text import one_line
from acp_tui.session.attempts import Attempt, Session
from acp_tui.ui import text
from acp_tui.ui.screens._styled import StyledScreen
from acp_tui.ui.summary import SILENT_AFTER, format_amount, format_seconds, usage_summary
from acp_tui.ui.widgets.fitted_table import FittedTable
from acp_tui.ui.widgets.key_footer import KeyFooter
from acp_tui.ui.widgets.status_badge import LIVE_STATES, STATE_COLOURS, colour_key, label

# What answers "who is stuck?" first, all of it in 80 columns: the state, who, which turn, for how long
# (or how long silent), its permissions, its cost, its prompt. The highlighted run's reason (its error)
# and usage have the line under the table, whole.
COLUMNS = ("state", "agent", "r·a", "time", "a/✓/✗", "cost", "prompt")
FLEXIBLE = ("agent", "prompt")


def _clock(attempt: Attempt, now: float) -> str:
    """The pane's clock: the time it took, or runs; `silent 40 s` once a live run has said nothing."""
    if attempt.result is not None:
        return format_seconds(attempt.result.duration_s)
    since = now - (attempt.last_output_at or attempt.started_at)
    if since >= SILENT_AFTER:
        return f"silent {format_seconds(since, live=True)}"
    return format_seconds(now - attempt.started_at, live=True)


def _row(attempt: Attempt, now: float) -> tuple[Text, ...]:
    state = attempt.state
    records = attempt.permissions
    allowed = sum(r.decision.startswith("allow") for r in records)
    cost = attempt.usage.cost if attempt.usage else None
    return (
        Text(label(state), style=f"bold {STATE_COLOURS[colour_key(state)]}"),
        text.rich_text(attempt.agent),
        Text(attempt.label),
        Text(_clock(attempt, now)),
        Text(f"{len(records)}/{allowed}/{len(records) - allowed}"),
        Text(f"{format_amount(cost.amount)} {one_line(cost.currency, 5)}" if cost else ""),
        text.rich_text(attempt.first_line),
    )


def _sort_key(attempt: Attempt, column: int, now: float) -> tuple[object, ...]:
    keys: list[Callable[[Attempt], object]] = [
        lambda a: label(a.state),
        lambda a: a.agent,
        lambda a: (a.round_no, a.attempt_no, a.turn),
        lambda a: -(a.result.duration_s if a.result else now - a.started_at),
        lambda a: -len(a.permissions),
        lambda a: -(a.usage.cost.amount if a.usage and a.usage.cost else 0),
        lambda a: a.first_line,
    ]
    return (keys[column](attempt), attempt.id)


def _details(attempt: Attempt) -> str:
    """The line under the table: the highlighted run's reason and usage, whole."""
    result = attempt.result
    reason = (result.error or "") if result else ""
    parts = (f"{attempt.agent} {attempt.label}", reason, usage_summary(attempt.usage))
    return " · ".join(part for part in parts if part)


class BoardScreen(StyledScreen[Attempt | None]):
    """A screen of its own, not a dialog: the app's keys (help, cancel all, quit) work from it."""

    DEFAULT_CSS = """
    BoardScreen {
        & > #dialog { height: 1fr; border: round $primary; border-title-style: bold; padding: 0 1; }
        & DataTable { height: 1fr; min-height: 5; }
        & #board-hint { height: 1; color: $text-muted; }
        & #board-details { height: auto; max-height: 3; }
    }
    """
    BINDINGS = [
        Binding("escape,b,q", "close", "Close"),
        Binding("enter", "jump", "Go to pane"),
        Binding("s", "sort", "Sort"),  # by the column under the cursor (or click a header)
        Binding("f", "filter", "Filter"),  # by state, in turn
    ]

    def __init__(self, session: Session) -> None:
        super().__init__()
        self.session = session
        self.sort_column: int | None = None
        self.state_filter: str | None = None
        self.rows: list[Attempt] = []  # the table's, in its order

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Static("", id="board-hint")
            yield FittedTable(COLUMNS, flexible=FLEXIBLE, id="board")
            yield Static("", id="board-details", markup=False)
        yield KeyFooter()

    def action_close(self) -> None:
        self.dismiss(None)

    def on_mount(self) -> None:
        self.query_one("#dialog").border_title = "board: every run of the session"
        self.ticker = self.set_interval(1.0, self.fill, pause=True)

    def on_screen_resume(self) -> None:
        """Opened: the screen is made once (the app keeps it), its rows are those of now, shown as
        a fresh board shows them (start order, every state, the first row), filled every second
        while it is open."""
        self.sort_column = None
        self.state_filter = None
        table = self.query_one(FittedTable)
        table.move_cursor(row=0, animate=False)
        self.fill()
        self.ticker.resume()
        table.focus()

    def on_screen_suspend(self) -> None:
        self.ticker.pause()

    def shown(self) -> list[Attempt]:
        now = time.monotonic()
        attempts = [a for a in self.session.attempts if self._passes(a)]
        if self.sort_column is not None:
            column = self.sort_column
            attempts.sort(key=lambda a: _sort_key(a, column, now))
        return attempts

    def _passes(self, attempt: Attempt) -> bool:
        if self.state_filter is None:
            return True
        if self.state_filter == "live":
            return attempt.state in LIVE_STATES
        return attempt.state == self.state_filter

    def fill(self) -> None:
        table = self.query_one(FittedTable)
        now = time.monotonic()
        self.rows = self.shown()
        table.show([_row(attempt, now) for attempt in self.rows])
        self._show_details()
        total = len(self.session.attempts)
        where = f"state {self.state_filter}" if self.state_filter else "all states"
        order = f"sorted by {COLUMNS[self.sort_column]}" if self.sort_column is not None else "in start order"
        self.query_one("#board-hint", Static).update(
            f"{table.row_count} of {total} runs · {where} · {order} · enter: go to its pane"
        )

    def _highlighted(self) -> Attempt | None:
        row = self.query_one(FittedTable).cursor_row
        return self.rows[row] if 0 <= row < len(self.rows) else None

    @on(DataTable.RowHighlighted)
    def _show_details(self) -> None:
        attempt = self._highlighted()
        self.query_one("#board-details", Static).update(text.line(_details(attempt)) if attempt else "")

    def action_jump(self) -> None:
        chosen = self._highlighted()
        if chosen is not None:
            self.dismiss(chosen)

    @on(DataTable.RowSelected)
    def _selected(self) -> None:
        self.action_jump()

    def action_sort(self) -> None:
        self.sort_by(self.query_one(FittedTable).cursor_column)

    @on(DataTable.HeaderSelected)
    def _header(self, event: DataTable.HeaderSelected) -> None:
        self.sort_by(event.column_index)

    def sort_by(self, column: int) -> None:
        self.sort_column = None if self.sort_column == column else column
        self.fill()

    def action_filter(self) -> None:
        present = sorted({a.state for a in self.session.attempts} - set(LIVE_STATES))
        cycle: list[str | None] = [None, "live", *present]
        index = cycle.index(self.state_filter) if self.state_filter in cycle else 0
        self.state_filter = cycle[(index + 1) % len(cycle)]
        self.fill()
