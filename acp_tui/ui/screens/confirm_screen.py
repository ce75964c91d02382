"""A yes/no question whose safe answer is the focused one."""

from __future__ import annotations

from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.content import Content
from textual.widgets import Button, Static

from acp_tui.ui.screens._dialog import DialogScreen


class ConfirmScreen(DialogScreen[bool]):
    DEFAULT_CSS = """
    ConfirmScreen {
        & > #dialog { max-width: 80; border: thick $warning; }
        & #question { margin: 1 0; }
        & #answers { height: auto; }
        & #answers Button { margin-right: 2; }
    }
    """
    BINDINGS = [Binding("escape,n", "answer('no')", "Not now"), Binding("y", "answer('yes')", "Send anyway")]
    ANSWERS = {"yes": True, "no": False}

    def __init__(self, question: Content, yes: str, no: str) -> None:
        super().__init__()
        self.question = question
        self.yes_label = yes
        self.no_label = no

    def compose_dialog(self) -> ComposeResult:
        yield Static(self.question, id="question")
        with Horizontal(id="answers"):
            yield Button(self.no_label, id="no", compact=True)
            yield Button(self.yes_label, id="yes", variant="warning", compact=True)

    def on_mount(self) -> None:
        self.query_one("#no", Button).focus()


class CancelAllScreen(ConfirmScreen):
    """Cancel every live run? One key away from `c`: asked first, the focus on no."""

    BINDINGS = [Binding("escape,n", "answer('no')", "No"), Binding("y", "answer('yes')", "Cancel them")]


class QuitScreen(ConfirmScreen):
    """Quit with runs live or a request waiting? `y` quits; any other key stays (a second ctrl+c
    quits at once: that is the app's binding; the app's other keys wait, see `check_action`)."""

    BINDINGS = [Binding("escape,n", "answer('no')", "Stay"), Binding("y", "answer('yes')", "Quit")]

    def on_key(self, event: events.Key) -> None:
        if event.key not in ("y", "tab", "shift+tab", "enter", "left", "right"):
            event.stop()
            self.dismiss(False)
