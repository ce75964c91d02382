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
from textual.screen import Screen
from textual.widgets import DataTable, Static

from acp_tui.session.attempts import Attempt, Session
from acp_tui.ui import text
from acp_tui.ui.summary import format_seconds, usage_summary
from acp_tui.ui.widgets.key_footer import KeyFooter
from acp_tui.ui.widgets.status_badge import LIVE_STATES, STATE_COLOURS, colour_key, label

# What answers "who is stuck?" first: state, agent, silence, the reason; then the rest.
COLUMNS = ("state", "agent", "r·a", "silent", "reason", "elapsed", "perms a/✓/✗", "tokens", "prompt")
WIDTHS = (11, 14, 5, 7, 28, 8, 11, 14, 40)


def _row(attempt: Attempt, now: float) -> tuple[object, ...]:
    state = attempt.state
    result = attempt.result
    elapsed = result.duration_s if result else now - attempt.started_at
    silent = "" if result else format_seconds(now - (attempt.last_output_at or attempt.started_at), live=True)
    records = result.permissions if result else attempt.permissions
    allowed = sum(r.decision.startswith("allow") for r in records)
    reason = (result.error or str(result.stop_reason)) if result else ""
    return (
        Text(label(state), style=f"bold {STATE_COLOURS[colour_key(state)]}"),
        text.rich_text(attempt.agent),
        attempt.label,
        silent,
        text.rich_text(reason),
        format_seconds(elapsed, live=result is None),
        f"{len(records)}/{allowed}/{len(records) - allowed}",
        usage_summary(attempt.usage),
        text.rich_text(attempt.first_line),
    )


def _sort_key(attempt: Attempt, column: int, now: float) -> tuple[object, ...]:
    keys: list[Callable[[Attempt], object]] = [
        lambda a: label(a.state),
        lambda a: a.agent,
        lambda a: (a.round_no, a.attempt_no),
        lambda a: -(now - (a.last_output_at or a.started_at)) if a.result is None else 0,
        lambda a: (a.result.error or "") if a.result else "",
        lambda a: -(a.result.duration_s if a.result else now - a.started_at),
        lambda a: -len(a.result.permissions if a.result else a.permissions),
        lambda a: -(a.usage.used if a.usage else 0),
        lambda a: a.first_line,
    ]
    return (keys[column](attempt), attempt.id)


class BoardScreen(Screen[Attempt | None]):
    """A screen of its own, not a dialog: the app's keys (help, cancel all, quit) work from it."""

    DEFAULT_CSS = """
    BoardScreen {
        & > #dialog { height: 1fr; border: round $primary; border-title-style: bold; padding: 0 1; }
        & DataTable { height: 1fr; min-height: 5; }
        & #board-hint { height: 1; color: $text-muted; }
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

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Static("", id="board-hint")
            table: DataTable[object] = DataTable(zebra_stripes=True, cursor_type="row", id="board")
            for name, width in zip(COLUMNS, WIDTHS, strict=True):
                table.add_column(name, width=width)
            yield table
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
        table = self.query_one(DataTable)
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
        table = self.query_one(DataTable)
        now = time.monotonic()
        keep = table.cursor_row
        table.clear()
        for attempt in self.shown():
            table.add_row(*_row(attempt, now), key=str(attempt.id))
        if table.row_count:
            table.move_cursor(row=min(keep, table.row_count - 1), animate=False)
        total = len(self.session.attempts)
        where = f"state {self.state_filter}" if self.state_filter else "all states"
        order = f"sorted by {COLUMNS[self.sort_column]}" if self.sort_column is not None else "in start order"
        self.query_one("#board-hint", Static).update(
            f"{table.row_count} of {total} runs · {where} · {order} · enter: go to its pane"
        )

    def action_jump(self) -> None:
        table = self.query_one(DataTable)
        if not table.row_count:
            return
        key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
        chosen = next((a for a in self.session.attempts if str(a.id) == key), None)
        self.dismiss(chosen)

    @on(DataTable.RowSelected)
    def _selected(self) -> None:
        self.action_jump()

    def action_sort(self) -> None:
        self.sort_by(self.query_one(DataTable).cursor_column)

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
