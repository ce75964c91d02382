"""A table whose short facts (a decision, a rule, a wait) are never cut: each column is as wide as
its widest cell, but the flexible ones (a title, the options offered), which share what is left and
end with an ellipsis. Fitted again at every width: the optional columns (the least needed) are left
out, the last first, while the rest does not fit; narrower than the short facts need, it scrolls
sideways (they come first)."""

from __future__ import annotations

from collections.abc import Collection, Sequence

from rich.cells import cell_len
from rich.text import Text
from textual import events
from textual.widgets import DataTable

MIN_FLEXIBLE = 6  # a flexible column never gets fewer cells than this


def fitted_widths(
    natural: Sequence[int], flexible: Collection[int], width: int, *, padding: int
) -> list[int]:
    """Column widths within `width` cells (each column also takes `padding`): the columns not in
    `flexible` keep their `natural` width; the flexible ones share the rest, the narrow first (each
    takes no more than it needs), none under `MIN_FLEXIBLE`."""
    room = width - padding * len(natural) - sum(w for i, w in enumerate(natural) if i not in flexible)
    widths = list(natural)
    shared = sorted(flexible, key=lambda i: natural[i])
    for n, i in enumerate(shared):
        widths[i] = max(MIN_FLEXIBLE, min(natural[i], room // (len(shared) - n)))
        room -= widths[i]
    return widths


def shown_columns(
    natural: Sequence[int], flexible: Collection[int], optional: Sequence[int], width: int, *, padding: int
) -> list[int]:
    """The columns that fit in `width`: every one, but the `optional` ones (the last first) while the
    short facts at their width and the flexible ones at their least do not fit."""
    shown = list(range(len(natural)))
    for column in reversed(optional):
        needed = sum(MIN_FLEXIBLE if i in flexible else natural[i] for i in shown) + padding * len(shown)
        if needed <= width:
            break
        shown.remove(column)
    return shown


class FittedTable(DataTable[Text]):
    DEFAULT_CSS = "FittedTable { width: 1fr; }"

    def __init__(
        self,
        columns: Sequence[str],
        flexible: Collection[str],
        *,
        optional: Sequence[str] = (),
        id: str | None = None,
    ) -> None:
        super().__init__(zebra_stripes=True, cursor_type="row", id=id)
        self.labels = list(columns)
        self.flexible = {self.labels.index(name) for name in flexible}
        self.optional = [self.labels.index(name) for name in optional]
        self.cells: list[tuple[Text, ...]] = []
        self.shown = list(range(len(self.labels)))  # the columns shown, at the width of now
        self._fitted_to = 0

    def show(self, rows: Sequence[Sequence[Text]]) -> None:
        """The rows (cells on one line each: `ui.text.rich_text`), fitted to the width of now."""
        self.cells = [tuple(row) for row in rows]
        self._fit(force=True)

    def on_resize(self, event: events.Resize) -> None:
        self._fit()

    def _fit(self, *, force: bool = False) -> None:
        # A vertical scrollbar may come with the rows: its room is kept whether it comes or not.
        width = self.size.width - self.styles.scrollbar_size_vertical
        if width == self._fitted_to and not force:
            return
        self._fitted_to = width
        natural = [
            max([cell_len(label)] + [cell_len(row[i].plain) for row in self.cells])
            for i, label in enumerate(self.labels)
        ]
        padding = 2 * self.cell_padding
        if width > 0:
            self.shown = shown_columns(natural, self.flexible, self.optional, width, padding=padding)
        shown = self.shown
        natural = [natural[i] for i in shown]
        flexible = {n for n, i in enumerate(shown) if i in self.flexible}
        widths = (
            fitted_widths(natural, flexible, width, padding=padding)
            if width > 0
            else natural  # not laid out yet: fitted at its first size
        )
        cursor = self.cursor_row
        self.clear(columns=True)
        for column, column_width in zip(shown, widths, strict=True):
            self.add_column(self.labels[column], width=column_width)
        self.add_rows([tuple(row[i] for i in shown) for row in self.cells])
        if self.cells:
            self.move_cursor(row=min(max(cursor, 0), len(self.cells) - 1), animate=False)
