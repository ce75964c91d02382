"""The floor for a first frame: the least Textual app with a prompt bar (startup.py's reference).

It imports Textual and paints a header, an input, a "send to:" label and a footer, nothing else.
"""

from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.widgets import Footer, Header, Input, Label


class Minimal(App[None]):
    BINDINGS = [Binding("ctrl+c", "quit", "Quit", priority=True)]

    def compose(self) -> ComposeResult:
        yield Header()
        yield Input("a prompt")
        yield Label("send to: nobody")
        yield Footer()


if __name__ == "__main__":
    Minimal().run()
