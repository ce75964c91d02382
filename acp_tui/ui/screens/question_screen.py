"""An agent's question (`elicitation/create`): its form to fill, or a URL to open.

Form mode: the agent's message, then one line per field (its title, `*` when required, its
description, what is wrong with it once touched), then Accept, Decline, Cancel and Later. The focus
starts on the first field, never on Accept; Enter in a text field accepts once the form is valid,
else it shows what is wrong and goes to the first field to fix. Accept sends the content; Decline
and Cancel go back to the agent as they are; Later (escape) leaves the question queued.

URL mode: the message, the host the URL leads to (what the person must see before they go), and
the URL itself. We never open it: the person does, if they wish (`y` copies it). Accept tells the
agent they agreed to go; the focus starts on Later.

Everything the agent sent (message, titles, descriptions, choices, the URL) is shown literally.
"""

from __future__ import annotations

from typing import Any, Literal

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.widget import Widget
from textual.widgets import Button, Checkbox, Input, Select, SelectionList, Static

from acp_tui.core.elicitation import (
    CANCEL,
    DECLINE,
    ElicitationAnswer,
    ElicitationAsk,
    ElicitationForm,
    Entry,
    FormField,
)
from acp_tui.core.text import visible
from acp_tui.ui import text
from acp_tui.ui.screens._dialog import DialogScreen

LATER = "\x00later"  # dismissed with this: the question stays in the queue
TEXT_CHARS = 2000  # an agent's message or description shown, at most (the rest is cut, and says so)
TITLE_CHARS = 80
PLACEHOLDERS = {
    "email": "name@example.com",
    "uri": "https://…",
    "date": "YYYY-MM-DD",
    "date-time": "YYYY-MM-DDTHH:MM:SSZ",
}


class _Box(Checkbox, inherit_bindings=False):
    """A checkbox that space toggles; Enter is the form's (it accepts), as in a text field."""

    BINDINGS = [Binding("space", "toggle_button", "Toggle", show=False)]


class QuestionScreen(DialogScreen[ElicitationAnswer | str]):
    """Dismisses with the answer for the agent, or LATER."""

    DEFAULT_CSS = """
    QuestionScreen {
        & > #dialog { border: thick $warning; max-width: 100; }
        & #who { text-style: bold; }
        & #queue, & .about, & #url { color: $text-muted; }
        & #message { margin: 1 0; }
        & #host { text-style: bold; }
        & .field { height: auto; margin-bottom: 1; }
        & .title { text-style: bold; }
        & .error { color: $error; }
        & Input, & Select, & SelectionList { width: 100%; }
        & SelectionList { height: auto; max-height: 8; }
        & #answers { height: auto; margin-top: 1; }
        & #answers Button { margin-right: 1; }
    }
    """
    BINDINGS = [
        Binding("escape", "answer('later')", "Later"),
        Binding("enter", "accept", "Accept", show=False),
        Binding("y", "copy_url", "Copy the URL", show=False),
    ]
    ANSWERS = {"decline": DECLINE, "cancel": CANCEL, "later": LATER}

    def __init__(
        self, agent: str, ask: ElicitationAsk, *, position: int = 1, waiting: int = 1, label: str = ""
    ) -> None:
        super().__init__()
        self.agent = agent
        self.ask = ask
        self.form = ask.form if ask.mode == "form" and ask.form is not None else ElicitationForm("", "", ())
        self.position = position
        self.waiting = waiting
        self.label = label
        self.pending: object = None  # the app's queue entry this dialog answers
        self._touched: set[int] = set()  # fields whose errors are shown: changed, or tried to accept

    # Layout ------------------------------------------------------------------------------------

    def compose_dialog(self) -> ComposeResult:
        where = f" · {self.label}" if self.label else ""
        yield Static(text.markup("$agent$where asks you", agent=self.agent, where=where), id="who")
        yield Static(self.queue_line, id="queue", markup=False)
        yield Static(text.literal(_cut(self.ask.message)), id="message")
        if self.is_form:
            yield from self._compose_form()
        else:
            yield Static(
                text.markup("it leads to [b]$host[/b]", host=self.ask.host or "(no host)"), id="host"
            )
            yield Static(text.literal(_cut(self.ask.url or "")), id="url")
            yield Static(text.line("acp-tui never opens it: open it yourself if you wish."), classes="about")
        with Horizontal(id="answers"):
            accept = "Accept" if self.is_form else "Accept (I will go there myself)"
            yield Button(accept, id="accept", variant="success", compact=True, disabled=self.is_form)
            yield Button("Decline", id="decline", compact=True)
            yield Button("Cancel", id="cancel", compact=True)
            yield Button("Later", id="later", compact=True)

    def _compose_form(self) -> ComposeResult:
        if self.form.title:
            yield Static(text.line(self.form.title, TITLE_CHARS), classes="title")
        if self.form.description:
            yield Static(text.literal(_cut(self.form.description)), classes="about")
        if self.form.left_out:
            yield Static(
                text.line(f"{self.form.left_out} more fields than acp-tui shows: it can only be declined"),
                classes="error",
            )
        for index, form_field in enumerate(self.form.fields):
            with Vertical(classes="field"):
                required = " *" if form_field.required else ""
                if form_field.kind != "boolean":
                    yield Static(
                        text.markup(
                            "$title$required", title=form_field.title[:TITLE_CHARS], required=required
                        ),
                        classes="title",
                    )
                if form_field.description:
                    yield Static(text.literal(_cut(form_field.description)), classes="about")
                yield _input(form_field, f"field-{index}", required)
                yield Static("", id=f"error-{index}", classes="error")

    def on_mount(self) -> None:
        # The first field, never Accept: nothing is sent by a stray key. Without fields: Later.
        first = next(iter(self.query(".input").results(Widget)), None) if self.is_form else None
        (first or self.query_one("#later", Button)).focus(scroll_visible=False)
        self._check()
        self.call_after_refresh(self.query_one("#dialog").scroll_home, animate=False)

    @property
    def is_form(self) -> bool:
        return self.ask.mode == "form"

    @property
    def queue_line(self) -> str:
        how = "enter in a field accepts once the form is valid" if self.is_form else "y copies the URL"
        return f"question {self.position} of {self.waiting} waiting · {how} · escape: later"

    def show_queue(self, position: int, waiting: int) -> None:
        """The queue moved (a request joined or left): where this one stands in it now."""
        self.position, self.waiting = position, waiting
        if self.is_mounted:
            self.query_one("#queue", Static).update(self.queue_line)

    # What the person entered -------------------------------------------------------------------

    def entries(self) -> dict[str, Entry]:
        found: dict[str, Entry] = {}
        for index, form_field in enumerate(self.form.fields):
            widget = self.query_one(f"#field-{index}")
            if isinstance(widget, Input | Checkbox):
                found[form_field.name] = widget.value
            elif isinstance(widget, Select):
                found[form_field.name] = None if widget.value is Select.NULL else str(widget.value)
            elif isinstance(widget, SelectionList):
                found[form_field.name] = tuple(widget.selected)
        return found

    def _check(self) -> tuple[dict[str, Any], dict[str, str]]:
        """Validate, show the errors of the fields touched, and let Accept go once it is valid."""
        content, errors = self.form.validate(self.entries())
        for index, form_field in enumerate(self.form.fields):
            error = errors.get(form_field.name, "") if index in self._touched else ""
            self.query_one(f"#error-{index}", Static).update(text.line(error))
        if self.is_form:
            self.query_one("#accept", Button).disabled = bool(errors) or bool(self.form.left_out)
        return content, errors

    @on(Input.Changed)
    @on(Checkbox.Changed)
    @on(Select.Changed)
    @on(SelectionList.SelectedChanged)
    def changed(self, event: Message) -> None:
        widget = getattr(event, "control", None)
        if widget is not None and widget.id and widget.id.startswith("field-"):
            self._touched.add(int(widget.id.removeprefix("field-")))
        self._check()

    # Answers -----------------------------------------------------------------------------------

    @on(Input.Submitted)
    def action_accept(self) -> None:
        """Enter in a field: accept once the form is valid."""
        if self.is_form:
            self._accept_form()

    @on(Button.Pressed, "#accept")
    def accept_pressed(self) -> None:
        if self.is_form:
            self._accept_form()
        else:
            self.dismiss(ElicitationAnswer.accept())

    def _accept_form(self) -> None:
        self._touched.update(range(len(self.form.fields)))
        content, errors = self._check()
        if not errors and not self.form.left_out:
            self.dismiss(ElicitationAnswer.accept(content))
            return
        wrong = next((i for i, f in enumerate(self.form.fields) if f.name in errors), None)
        if wrong is not None:
            self.query_one(f"#field-{wrong}").focus()

    def action_copy_url(self) -> None:
        if self.ask.url:
            self.app.copy_to_clipboard(self.ask.url)
            self.notify("The URL is copied: acp-tui did not open it.")


def _input(form_field: FormField, widget_id: str, required: str) -> Widget:
    """The widget that takes one field's value, as the field's kind asks."""
    initial = form_field.initial
    if form_field.kind == "boolean":
        label = text.markup("$title$required", title=form_field.title[:TITLE_CHARS], required=required)
        return _Box(label, value=bool(initial), id=widget_id, classes="input", compact=True)
    if form_field.kind == "choice":
        options = [(text.rich_text(choice.title), choice.value) for choice in form_field.choices]
        value = initial if isinstance(initial, str) else Select.NULL
        return Select(options, prompt="choose", value=value, id=widget_id, classes="input", compact=True)
    if form_field.kind == "choices":
        chosen = initial if isinstance(initial, tuple) else ()
        selections = [(text.line(c.title), c.value, c.value in chosen) for c in form_field.choices]
        return SelectionList[str](*selections, id=widget_id, classes="input", compact=True)
    if form_field.kind == "unsupported":
        return Static(text.line("(a kind of field acp-tui cannot fill)"), id=widget_id, classes="about")
    kind: Literal["integer", "number", "text"] = (
        "integer" if form_field.kind == "integer" else "number" if form_field.kind == "number" else "text"
    )
    placeholder = PLACEHOLDERS.get(form_field.format or "", "")
    value = visible(initial) if isinstance(initial, str) else ""  # an Input writes what it holds
    return Input(value, placeholder=placeholder, type=kind, id=widget_id, classes="input", compact=True)


def _cut(said: str) -> str:
    return said if len(said) <= TEXT_CHARS else said[:TEXT_CHARS] + "… (cut)"
