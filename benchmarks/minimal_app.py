"""The floor Textual sets, for the pty benchmarks' references.

    python minimal_app.py              the least Textual app with a prompt (startup.py's first frame)
    python minimal_app.py --panes N    the same with N panes, and the keys streaming.py presses

With no option it imports Textual and paints a header, an input, a "send to:" label and a footer,
nothing else. With `--panes N` it also shows N bordered panes of text (titles m00, m01, ...), and
does with plain Textual what acp-tui's keys do: Enter focuses the first pane, tab the next one
(heavy border when focused), home and pagedown scroll the focused pane, `b`, `?`, `f2` and `a`
each push a screen with a title (a screen of its own, then three dialogs), escape pops it, `z`
maximizes the focused pane and back. Nothing streams: it is what the same kind of action costs in
Textual itself.
"""

import sys

from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Grid, Vertical, VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.widgets import Footer, Header, Input, Label, Static

# The words echo_agent.py streams (not imported from it: the first frame pays only for Textual).
WORDS = [
    *("the", "agent", "reads", "a", "file", "then", "writes", "its"),
    *("plan", "and", "checks", "every", "step", "before", "it", "answers"),
]
# The titles acp-tui's screens show, so that one test of the screen serves both apps.
TITLES = {
    "board": "board: every run of the session",
    "help": "every key (escape: close)",
    "agents": "Agents: policy, sandbox",
    "answer": "asks permission",
}


class Minimal(App[None]):
    BINDINGS = [Binding("ctrl+c", "quit", "Quit", priority=True)]

    def compose(self) -> ComposeResult:
        yield Header()
        yield Input("a prompt")
        yield Label("send to: nobody")
        yield Footer()


class Pane(VerticalScroll, can_focus=True):
    ALLOW_MAXIMIZE = True
    DEFAULT_CSS = """
    Pane { border: round $panel-lighten-2; height: 1fr; &:focus { border: heavy $accent; } }
    """
    BINDINGS = [Binding("tab", "app.next_pane", show=False)]

    def __init__(self, number: int) -> None:
        super().__init__(id=f"m{number:02d}")
        self.border_title = f"m{number:02d}"

    def compose(self) -> ComposeResult:
        lines = [" ".join(WORDS[(i + k) % len(WORDS)] for k in range(6)) for i in range(30)]
        yield Static("Part 0".center(30) + "\n\n" + "\n".join(lines), markup=False)


class Titled(Screen[None]):
    """A screen of its own (acp-tui's board is one)."""

    BINDINGS = [Binding("escape", "app.pop_screen", "Close")]

    def __init__(self, title: str) -> None:
        super().__init__()
        self.title_text = title

    def compose(self) -> ComposeResult:
        dialog = Vertical(Static("\n".join(f"row {i}" for i in range(20))))
        dialog.border_title = self.title_text
        dialog.styles.border = ("round", "white")
        yield dialog
        yield Footer()


class Dialog(ModalScreen[None]):
    """A dialog over the screen (acp-tui's help, agents and permission screens are)."""

    DEFAULT_CSS = (
        "Dialog { align: center middle; & > Vertical { width: 60; height: 12; border: thick $primary; } }"
    )
    BINDINGS = [Binding("escape", "app.pop_screen", "Close")]

    def __init__(self, title: str) -> None:
        super().__init__()
        self.title_text = title

    def compose(self) -> ComposeResult:
        dialog = Vertical(Static("a dialog"))
        dialog.border_title = self.title_text
        yield dialog
        yield Footer()


class Panes(App[None]):
    CSS = "#grid { grid-size: 4; grid-gutter: 0 1; }"
    BINDINGS = [
        Binding("ctrl+c", "quit", "Quit", priority=True),
        Binding("b", "push('board')", "Board"),
        Binding("question_mark", "push('help')", "Help"),
        Binding("f2", "push('agents')", "Agents", priority=True),
        Binding("a", "push('answer')", "Answer"),
        Binding("z", "zoom", "Zoom"),
    ]

    def __init__(self, panes: int) -> None:
        super().__init__()
        self.count = panes

    def compose(self) -> ComposeResult:
        yield Header()
        yield Input("a prompt")
        yield Label("send to: nobody")
        with Grid(id="grid"):
            for number in range(self.count):
                yield Pane(number)
        yield Footer()

    def on_input_submitted(self) -> None:
        self.query(Pane).first().focus()

    def action_next_pane(self) -> None:
        panes = list(self.query(Pane))
        focused = self.focused
        index = panes.index(focused) if focused in panes else -1
        panes[(index + 1) % len(panes)].focus()

    def action_push(self, what: str) -> None:
        self.push_screen(Titled(TITLES[what]) if what == "board" else Dialog(TITLES[what]))

    def action_zoom(self) -> None:
        if self.screen.maximized is not None:
            self.screen.minimize()
        elif self.focused is not None:
            self.screen.maximize(self.focused, container=False)


if __name__ == "__main__":
    if "--panes" in sys.argv:
        Panes(int(sys.argv[sys.argv.index("--panes") + 1])).run()
    else:
        Minimal().run()
