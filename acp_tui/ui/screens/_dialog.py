"""The one base of the modal screens: a centred dialog that fits any terminal (it scrolls), and a
footer with the dialog's own keys.

Each screen's CSS is scoped to it: every rule starts with the screen's class name, so no dialog's
style reaches another (stylesheets are app-wide in Textual once loaded).
"""

from __future__ import annotations

from typing import TypeVar

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen

from acp_tui.ui.widgets.key_footer import KeyFooter

ResultType = TypeVar("ResultType")


class DialogScreen(ModalScreen[ResultType]):
    DEFAULT_CSS = """
    DialogScreen {
        align: center middle;
        background: $background 60%;
        & > #dialog {
            width: 90%;
            max-width: 120;
            height: auto;
            max-height: 90%;
            border: thick $primary;
            border-title-color: $text;
            border-title-style: bold;
            background: $surface;
            padding: 0 1;
        }
        & .hint { color: $text-muted; }
        & > Footer { dock: bottom; }
    }
    """
    BINDINGS = [Binding("escape", "close", "Close")]
    DIALOG_FOCUSABLE = False  # True where nothing inside takes the focus: the keys scroll the dialog

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="dialog", can_focus=self.DIALOG_FOCUSABLE):
            yield from self.compose_dialog()
        yield KeyFooter()

    def compose_dialog(self) -> ComposeResult:
        yield from ()

    def action_close(self) -> None:
        self.dismiss(None)
