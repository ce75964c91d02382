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


class OptionButton(Button):
    """One of the agent's options: named by its id, as the dialog is filled anew."""

    option_id: str | None = None

    @property
    def name(self) -> str | None:
        return self.option_id


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
    OPTIONS = 4  # option buttons made with the dialog (ACP's four kinds); more are mounted if asked

    def __init__(self) -> None:
        super().__init__()
        self.agent = ""
        self.ask = PermissionAsk("", None, ())
        self.position = self.waiting = 1
        self.label = ""  # the attempt's round and attempt (`r1·a2`)
        self.policy = "ask"  # the policy that asked
        self.pending: object = None  # the app's queue entry this dialog answers
        self._options: list[OptionButton] = []

    def compose_dialog(self) -> ComposeResult:
        yield Static(id="who")
        yield Static(id="queue", markup=False)
        yield Static(id="title")
        yield Static(id="kind")
        yield Static(id="asked-by")
        with VerticalScroll(id="content"):
            yield Static(id="content-text")
        with Vertical(id="options"):
            self._options = [self._option_button() for _ in range(self.OPTIONS)]
            yield from self._options
            yield Button("Answer cancelled (no options offered)", id="cancelled", compact=True)
            yield Button("Decide later (it stays queued)", id="later", compact=True)

    @staticmethod
    def _option_button() -> OptionButton:
        return OptionButton("", classes="option", compact=True)

    def show_ask(
        self, agent: str, ask: PermissionAsk, *, waiting: int = 1, label: str = "", policy: str = "ask"
    ) -> None:
        """Fill the dialog with this request (the app keeps one dialog and fills it at each opening:
        a new one is a stylesheet pass over every widget of it), its focus on a refusal."""
        self.agent, self.ask, self.position, self.waiting = agent, ask, 1, waiting
        self.label, self.policy = label, policy
        if self.is_mounted:
            self._fill()

    def on_mount(self) -> None:
        self._fill()

    def _fill(self) -> None:
        ask, policy, label = self.ask, self.policy, self.label
        where = f" · {label}" if label else ""
        who = text.markup("$agent$where asks permission", agent=self.agent, where=where)
        self.query_one("#who", Static).update(who)
        self.query_one("#queue", Static).update(self.queue_line)
        self.query_one("#title", Static).update(text.literal(ask.title))
        facts = f"kind: {ask.kind or 'unspecified'}"
        if ask.locations:
            facts += " · paths: " + ", ".join(ask.locations)
        self.query_one("#kind", Static).update(text.line(facts))
        asked_by = (
            f"asked by rule {ask.rule} of policy {policy}"
            if ask.rule
            else f"asked by policy {policy}: every request comes to you"
        )
        self.query_one("#asked-by", Static).update(text.line(asked_by))
        self.query_one("#content").display = bool(ask.content)
        self.query_one("#content-text", Static).update(text.literal(ask.content))
        self._show_options(ask)
        self.query_one("#dialog").scroll_home(animate=False)

    def _show_options(self, ask: PermissionAsk) -> None:
        missing = len(ask.options) - len(self._options)
        if missing > 0:
            added = [self._option_button() for _ in range(missing)]
            self.query_one("#options").mount_all(added, before="#cancelled")
            self._options += added
        for number, button in enumerate(self._options, start=1):
            button.display = number <= len(ask.options)
            if not button.display:
                continue
            option = ask.options[number - 1]
            lasting = f" · {LASTING[option.kind]}" if option.kind in LASTING else ""
            button.label = text.markup(
                f"{number}. $name ($kind)$lasting", name=option.name, kind=option.kind, lasting=lasting
            )
            button.option_id = option.option_id
            button.variant = "success" if option.kind.startswith("allow") else "error"
        self.query_one("#cancelled").display = not ask.options
        # A refusal for this once, else nothing decided: never an approval, never a lasting choice.
        rejects = [i for i, option in enumerate(ask.options) if option.kind == "reject_once"]
        first = self._options[rejects[0]] if rejects else self.query_one("#later", Button)
        self.set_focus(first, scroll_visible=False)

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

    def on_key(self, event: events.Key) -> None:
        key = event.key
        if key.isdigit() and 1 <= int(key) <= len(self.ask.options):
            event.stop()
            self.dismiss(self.ask.options[int(key) - 1].option_id)

    @on(Button.Pressed, ".option")
    def choose(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.name)
