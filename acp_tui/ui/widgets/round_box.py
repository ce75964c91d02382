"""One round on the main screen: a header line (its number, the first line of its prompt), then its
panes in a grid of their own, so that rounds never mix in a row."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, cast

from textual.app import ComposeResult
from textual.containers import Container, Vertical
from textual.widgets import Static

from acp_tui.ui import text

if TYPE_CHECKING:
    from acp_tui.ui.widgets.run_pane import RunPane

MIN_PANE_WIDTH = 38
MIN_PANE_HEIGHT = 10


def grid_shape(count: int, width: int) -> int:
    """Columns for `count` panes at `width` cells: up to three side by side, more in a square
    (four are 2 x 2, nine 3 x 3), never more than fit at the minimum width; rows balanced."""
    fit = max(1, width // MIN_PANE_WIDTH)
    wanted = count if count <= 3 else math.ceil(math.sqrt(count))
    columns = max(1, min(fit, wanted))
    rows = math.ceil(count / columns)
    return math.ceil(count / rows)


class RoundBox(Vertical):
    DEFAULT_CSS = """
    RoundBox {
        height: auto;
        & > .round-header { height: 1; padding: 0 1; color: $text-muted; text-style: bold; }
        & > .round-grid { layout: grid; grid-size: 1; grid-gutter: 0 1; height: auto; }
    }
    """

    def __init__(self, round_no: int, first_line: str) -> None:
        super().__init__(id=f"round-{round_no}")
        self.round_no = round_no
        self.first_line = first_line
        self.grid = Container(classes="round-grid")  # there from the start: panes go in once mounted
        self._row_height = 0

    def compose(self) -> ComposeResult:
        yield Static(text.line(f"round {self.round_no} · {self.first_line}"), classes="round-header")
        yield self.grid

    def panes(self) -> list[RunPane]:
        # The grid's own children: a query of the whole subtree walks every pane's widgets.
        return cast("list[RunPane]", list(self.grid.query_children(".run-pane")))

    def fit(self, width: int, height: int) -> None:
        """Columns for the round's panes at `width`; rows fill `height` (the header's line taken), else
        the screen scrolls."""
        count = len(self.panes())
        grid = self.grid
        columns = grid_shape(count, width) if count else 1
        rows = max(1, math.ceil(count / columns))
        row_height = max(MIN_PANE_HEIGHT, (height - 1) // rows)
        if (grid.styles.grid_size_columns, self._row_height) != (columns, row_height):  # each set lays out
            grid.styles.grid_size_columns = columns
            grid.styles.grid_rows = str(row_height)
            self._row_height = row_height
