"""The `ask` policy's question: what the agent wants to do, and its own options to answer with.

Nothing that approves is focused at first: focus starts on the first reject option, else on
"Decide later", which leaves the request queued. Everything the agent sent is shown literally.
"""

from __future__ import annotations

from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import Button, Static

from acp_tui.policy.ask import PermissionAsk
from acp_tui.ui import text
from acp_tui.ui.screens._dialog import DialogScreen

LATER = "\x00later"  # dismissed with this: the request stays in the queue


class PermissionScreen(DialogScreen[str | None]):
    """Dismisses with the chosen option id, None (answered `cancelled`), or LATER."""

    DEFAULT_CSS = """
    PermissionScreen {
        & > #dialog { border: thick $warning; max-width: 100; }
        & #who { text-style: bold; }
        & #title { text-style: bold; margin-top: 1; }
        & #kind, & #queue { color: $text-muted; }
        & #content { height: auto; margin: 1 0; border: round $panel-lighten-2; padding: 0 1; }
        & #options { height: auto; margin: 1 0 0 0; }
        & #options Button { width: 100%; margin-bottom: 1; }
    }
    """
    BINDINGS = [
        Binding("escape", "later", "Decide later"),
        Binding("down,tab", "app.focus_next", "Next option", show=False),
        Binding("up,shift+tab", "app.focus_previous", "Previous option", show=False),
    ]

    def __init__(self, agent: str, ask: PermissionAsk, *, position: int = 1, waiting: int = 1) -> None:
        super().__init__()
        self.agent = agent
        self.ask = ask
        self.position = position
        self.waiting = waiting
        self.pending: object = None  # the app's queue entry this dialog answers

    def compose_dialog(self) -> ComposeResult:
        yield Static(text.markup("$agent asks permission", agent=self.agent), id="who")
        yield Static(
            text.markup(
                "request $n of $total waiting (oldest first)", n=str(self.position), total=str(self.waiting)
            ),
            id="queue",
        )
        yield Static(text.literal(self.ask.title), id="title")
        facts = f"kind: {self.ask.kind or 'unspecified'}"
        if self.ask.locations:
            facts += " · paths: " + ", ".join(self.ask.locations)
        yield Static(text.line(facts), id="kind")
        if self.ask.content:
            yield Static(text.literal(self.ask.content), id="content")
        with Vertical(id="options"):
            for number, option in enumerate(self.ask.options, start=1):
                yield Button(
                    text.markup(f"{number}. $name ($kind)", name=option.name, kind=option.kind),
                    variant="success" if option.kind.startswith("allow") else "error",
                    name=option.option_id,
                    classes="option",
                    compact=True,
                )
            if not self.ask.options:
                yield Button("Answer cancelled (no options offered)", id="cancelled", compact=True)
            yield Button("Decide later (it stays queued)", id="later", compact=True)
        yield Static("a number picks that option · escape: decide later", classes="hint")

    def on_mount(self) -> None:
        rejects = [
            button
            for button, option in zip(self.query(".option").results(Button), self.ask.options, strict=True)
            if not option.kind.startswith("allow")
        ]
        (rejects[0] if rejects else self.query_one("#later", Button)).focus()

    def on_key(self, event: events.Key) -> None:
        key = event.key
        if key.isdigit() and 1 <= int(key) <= len(self.ask.options):
            event.stop()
            self.dismiss(self.ask.options[int(key) - 1].option_id)

    @on(Button.Pressed, ".option")
    def choose(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.name)

    @on(Button.Pressed, "#cancelled")
    def answer_cancelled(self) -> None:
        self.dismiss(None)

    @on(Button.Pressed, "#later")
    def action_later(self) -> None:
        self.dismiss(LATER)
