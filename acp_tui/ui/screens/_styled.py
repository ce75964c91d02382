"""A screen shown again as it was styled: Textual restyles every widget of a screen each time it is
shown (a stylesheet pass over all of them: F2's three hundred, a tenth of a second and more while
panes stream), in case the app's styles changed while it was hidden. Here that pass is made only
when they did (`compat.Styling`): a screen is styled as its widgets mount, and a change made to a
widget later restyles it as it is made, shown or not."""

from __future__ import annotations

from typing import TypeVar

from textual import events, on
from textual.screen import Screen

from acp_tui import compat

ResultType = TypeVar("ResultType")


class StyledScreen(Screen[ResultType]):
    """The base of the app's screens shown over the grid (the board, every dialog)."""

    _styled: compat.Styling | None = None

    @on(events.Mount)
    def _styled_as_mounted(self) -> None:
        self._styled = compat.Styling(self.app)  # its widgets were styled as they mounted

    @on(events.ScreenResume)
    def _restyle_if_changed(self, event: events.ScreenResume) -> None:
        # Runs before Textual's own handler, which restyles (a subclass's handlers run first).
        styling = compat.Styling(self.app)
        if styling == self._styled:
            event.refresh_styles = False
        self._styled = styling
