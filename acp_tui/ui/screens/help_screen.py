"""Every key of the app, from the one key table (`acp_tui.ui.keys`; the README's table says the same)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Grid
from textual.widgets import Static

from acp_tui.ui import keys
from acp_tui.ui.screens._dialog import DialogScreen


class HelpScreen(DialogScreen[None]):
    DEFAULT_CSS = """
    HelpScreen {
        & > #dialog { max-width: 100; }
        & #keys { grid-size: 2; grid-columns: 18 1fr; grid-gutter: 0 2; grid-rows: auto; height: auto; }
        & .key { color: $text-accent; }
        & .section { column-span: 2; text-style: bold; height: 2; content-align: left bottom; }
    }
    """
    BINDINGS = [Binding("escape,q,question_mark", "close", "Close")]
    DIALOG_FOCUSABLE = True  # nothing else to focus: the keys scroll it

    def compose_dialog(self) -> ComposeResult:
        with Grid(id="keys"):
            for section, rows in keys.help_sections():  # our own text only
                yield Static(section, classes="section", markup=False)
                for key, what in rows:
                    yield Static(key, classes="key", markup=False)
                    yield Static(what, markup=False)

    def on_mount(self) -> None:
        dialog = self.query_one("#dialog")
        dialog.border_title = "every key (escape: close)"
        dialog.focus()
