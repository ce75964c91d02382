"""The `ask` policy's question: what the agent wants to do, and its own options to answer with."""

from __future__ import annotations

from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Label, Static

from ...subagents.acp.permissions import PermissionAsk


class PermissionScreen(ModalScreen[str | None]):
    """Dismisses with the chosen option id, or None (answered `cancelled`)."""

    CSS_PATH = "permission_screen.tcss"
    BINDINGS = [Binding("escape", "dismiss_cancelled", "Answer cancelled")]

    def __init__(self, agent: str, ask: PermissionAsk) -> None:
        super().__init__()
        self.agent = agent
        self.ask = ask

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Label(f"[b]{self.agent}[/] asks permission", id="who")
            yield Static(self.ask.title, id="title", markup=False)
            yield Label(f"kind: {self.ask.kind or 'unspecified'}", id="kind")
            if self.ask.content:
                with VerticalScroll(id="content"):
                    yield Static(self.ask.content, markup=False)
            with Vertical(id="options"):
                for number, option in enumerate(self.ask.options, start=1):
                    yield Button(
                        f"{number}. {option.name} ({option.kind})",
                        variant="success" if option.kind.startswith("allow") else "error",
                        name=option.option_id,
                        compact=True,
                    )
            hint = "press a number or click an option · escape answers cancelled"
            yield Label(hint if self.ask.options else "no options offered · escape answers cancelled")

    def on_mount(self) -> None:
        buttons = self.query(Button)
        if buttons:
            buttons.first().focus()

    def on_key(self, event: events.Key) -> None:
        key = event.key
        if key.isdigit() and 1 <= int(key) <= len(self.ask.options):
            self.dismiss(self.ask.options[int(key) - 1].option_id)

    @on(Button.Pressed)
    def choose(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.name)

    def action_dismiss_cancelled(self) -> None:
        self.dismiss(None)
