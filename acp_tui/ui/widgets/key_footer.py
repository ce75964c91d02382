"""The footer, recomposed only when the keys it shows change.

Textual's footer rebuilds itself at every change of focus, and a rebuild is a layout of the whole
screen: with sixteen panes, tab between two panes (same keys) paid for it every time. Nor does it
follow a screen's keys while another screen is over it: seen from under a dialog some keys are off
(the app's check says so while the dialog is shown), and they came back on as it closed: two
rebuilds, and a layout of the grid right after its first frame, at every dialog.
"""

from __future__ import annotations

from textual.screen import Screen
from textual.widgets import Footer


class KeyFooter(Footer):
    def __init__(self) -> None:
        super().__init__(compact=True)
        self._shown: tuple[object, ...] | None = None

    def bindings_changed(self, screen: Screen[object]) -> None:
        if screen is not screen.app.screen:  # under another: its keys are read again when it is shown
            return
        shown = tuple(
            (key, active.binding.description, active.enabled, active.binding.show)
            for key, active in screen.active_bindings.items()
        )
        if shown == self._shown and self.children:  # shown already (so Textual's footer is ready)
            return
        self._shown = shown
        super().bindings_changed(screen)
