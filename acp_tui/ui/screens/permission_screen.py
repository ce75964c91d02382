"""The `ask` policy's question: who asks and what, what sent it to a person, then the agent's own
options to answer with.

It opens at its top, whatever the size: the agent, its round and attempt, the title, the kind and
the rule that asked come first, then the content (a diff can be long: it scrolls in its own box),
then the options. Nothing that approves or lasts is focused at first: focus starts on the first
`reject_once` option, else on "Decide later", which leaves the request queued. Options that last
(`allow_always`, `reject_always`: the agent may not ask again) say so. Everything the agent sent
is shown literally.
"""

from __future__ import annotations

from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.widgets import Button, Static

from acp_tui.policy.ask import PermissionAsk
from acp_tui.ui import text
from acp_tui.ui.screens._dialog import DialogScreen

LATER = "\x00later"  # dismissed with this: the request stays in the queue
LASTING = {
    "allow_always": "lasting: the agent may not ask again",
    "reject_always": "lasting: the agent may not ask again",
}


class PermissionScreen(DialogScreen[str | None]):
    """Dismisses with the chosen option id, None (answered `cancelled`), or LATER."""

    DEFAULT_CSS = """
    PermissionScreen {
        & > #dialog { border: thick $warning; max-width: 100; }
        & #who { text-style: bold; }
        & #title { text-style: bold; margin-top: 1; }
        & #kind, & #queue, & #asked-by { color: $text-muted; }
        & #content {
            height: auto; max-height: 12; margin: 1 0; border: round $panel-lighten-2; padding: 0 1;
        }
        & #options { height: auto; margin: 1 0 0 0; }
        & #options Button { width: 100%; margin-bottom: 1; }
    }
    """
    BINDINGS = [
        Binding("escape", "answer('later')", "Decide later"),
        Binding("down,tab", "app.focus_next", "Next option", show=False),
        Binding("up,shift+tab", "app.focus_previous", "Previous option", show=False),
    ]
    ANSWERS = {"cancelled": None, "later": LATER}

    def __init__(
        self,
        agent: str,
        ask: PermissionAsk,
        *,
        position: int = 1,
        waiting: int = 1,
        label: str = "",
        policy: str = "ask",
    ) -> None:
        """`label`: the attempt's round and attempt (`r1·a2`); `policy`: the policy that asked."""
        super().__init__()
        self.agent = agent
        self.ask = ask
        self.position = position
        self.waiting = waiting
        self.label = label
        self.policy = policy
        self.pending: object = None  # the app's queue entry this dialog answers

    def compose_dialog(self) -> ComposeResult:
        where = f" · {self.label}" if self.label else ""
        yield Static(text.markup("$agent$where asks permission", agent=self.agent, where=where), id="who")
        yield Static(self.queue_line, id="queue", markup=False)
        yield Static(text.literal(self.ask.title), id="title")
        facts = f"kind: {self.ask.kind or 'unspecified'}"
        if self.ask.locations:
            facts += " · paths: " + ", ".join(self.ask.locations)
        yield Static(text.line(facts), id="kind")
        asked_by = (
            f"asked by rule {self.ask.rule} of policy {self.policy}"
            if self.ask.rule
            else f"asked by policy {self.policy}: every request comes to you"
        )
        yield Static(text.line(asked_by), id="asked-by")
        if self.ask.content:
            with VerticalScroll(id="content"):
                yield Static(text.literal(self.ask.content))
        with Vertical(id="options"):
            for number, option in enumerate(self.ask.options, start=1):
                lasting = f" · {LASTING[option.kind]}" if option.kind in LASTING else ""
                yield Button(
                    text.markup(
                        f"{number}. $name ($kind)$lasting",
                        name=option.name,
                        kind=option.kind,
                        lasting=lasting,
                    ),
                    variant="success" if option.kind.startswith("allow") else "error",
                    name=option.option_id,
                    classes="option",
                    compact=True,
                )
            if not self.ask.options:
                yield Button("Answer cancelled (no options offered)", id="cancelled", compact=True)
            yield Button("Decide later (it stays queued)", id="later", compact=True)

    @property
    def queue_line(self) -> str:
        count = len(self.ask.options)
        picks = f"{count} options below: 1-{count} picks one" if count > 1 else "its answer below"
        return f"request {self.position} of {self.waiting} waiting · {picks} · escape: later"

    def show_queue(self, position: int, waiting: int) -> None:
        """The queue moved (a request joined or left): where this one stands in it now."""
        self.position, self.waiting = position, waiting
        if self.is_mounted:
            self.query_one("#queue", Static).update(self.queue_line)

    def on_mount(self) -> None:
        # A refusal for this once, else nothing decided: never an approval, never a lasting choice.
        rejects = [
            button
            for button, option in zip(self.query(".option").results(Button), self.ask.options, strict=True)
            if option.kind == "reject_once"
        ]
        (rejects[0] if rejects else self.query_one("#later", Button)).focus(scroll_visible=False)
        self.call_after_refresh(self.query_one("#dialog").scroll_home, animate=False)

    def on_key(self, event: events.Key) -> None:
        key = event.key
        if key.isdigit() and 1 <= int(key) <= len(self.ask.options):
            event.stop()
            self.dismiss(self.ask.options[int(key) - 1].option_id)

    @on(Button.Pressed, ".option")
    def choose(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.name)
