"""The rounds on the main screen, one under the other (a `RoundBox` each: a header line and a grid
of its panes), and the welcome before the first.

The grid knows its panes (in reading order, and by conversation): what follows an attempt finds
its pane without a query of the screen, whose every pane is a walk of its own.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.containers import VerticalScroll
from textual.content import Content
from textual.widgets import Static

from acp_tui.ui.widgets.round_box import MIN_PANE_HEIGHT, RoundBox

if TYPE_CHECKING:
    from textual.app import ComposeResult

    from acp_tui.session.attempts import Attempt
    from acp_tui.ui.widgets.run_pane import RunPane


class RunsGrid(VerticalScroll, can_focus=False):
    def __init__(self, welcome: Content) -> None:
        super().__init__(id="runs")
        self.welcome = welcome
        self._panes: list[RunPane] = []  # in reading order: round by round
        self._by_conversation: dict[int, RunPane] = {}  # the opening attempt's id -> its pane

    def compose(self) -> ComposeResult:
        yield Static(self.welcome, id="welcome")

    def panes(self) -> list[RunPane]:
        """Every pane on the grid, in reading order: round by round."""
        return list(self._panes)

    def pane_for(self, attempt: Attempt) -> RunPane | None:
        """The pane of `attempt`'s conversation: one pane shows every turn of it."""
        return self._by_conversation.get(attempt.opening.id)

    def boxes(self) -> list[RoundBox]:
        return list(self.query_children(RoundBox))

    def box(self, round_no: int) -> RoundBox | None:
        return next((box for box in self.boxes() if box.round_no == round_no), None)

    async def add(self, panes: list[RunPane], first_lines: dict[int, str], *, after: RunPane | None) -> None:
        """`panes` in their rounds' boxes (made, in round order, where missing); beside `after` if
        it is in the same round."""
        welcome = self.query_children("#welcome")
        if welcome:
            await welcome.remove()
        for round_no in dict.fromkeys(pane.attempt.round_no for pane in panes):
            box = self.box(round_no)
            if box is None:
                box = RoundBox(round_no, first_lines[round_no])
                later = next((other for other in self.boxes() if other.round_no > round_no), None)
                await self.mount(box, before=later)
            these = [pane for pane in panes if pane.attempt.round_no == round_no]
            if after is not None and after.parent is box.grid:
                await box.grid.mount_all(these, after=after)
            else:
                await box.grid.mount_all(these)
        for pane in panes:
            self._by_conversation[pane.attempt.opening.id] = pane
        self._panes = [pane for box in self.boxes() for pane in box.panes()]
        self.fit()

    async def remove_panes(self, closing: list[RunPane]) -> None:
        """The panes leave (a round with none left goes, header and all; the welcome returns when
        no pane is left)."""
        for pane in closing:
            self._by_conversation.pop(pane.attempt.opening.id, None)
            await pane.remove()
        for box in self.boxes():
            if not box.panes():
                await box.remove()
        self._panes = [pane for box in self.boxes() for pane in box.panes()]
        self.fit()
        if not self._panes:
            await self.mount(Static(self.welcome, id="welcome"))

    def show_welcome(self, welcome: Content) -> None:
        self.welcome = welcome
        for shown in self.query_children("#welcome"):
            if isinstance(shown, Static):
                shown.update(welcome)

    def on_resize(self) -> None:
        self.fit()

    def fit(self) -> None:
        """Each round's columns from the grid's width of now; its rows fill the grid's height (the
        screen's below the prompt bar), else the grid scrolls."""
        size = self.outer_size  # its scrollbar and padding included: what the panes share
        height = max(MIN_PANE_HEIGHT, size.height)
        for box in self.boxes():
            box.fit(size.width - 2, height)  # the grid's padding

    def tick(self) -> None:
        """The panes' clocks and counters, a few times a second: one timer for all of them."""
        for pane in self._panes:
            pane.tick()

    def bring_into_view(self, pane: RunPane) -> None:
        if pane.is_attached and pane.has_focus:
            self.scroll_to_widget(pane, animate=False)
