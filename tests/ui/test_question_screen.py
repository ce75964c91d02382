"""An agent's question on the screen: the focus starts on the first field (never on Accept), Enter in
a field accepts once the form is valid, decline / cancel / later, a URL shown (its host first) and
never opened, and the agent's text shown literally."""

from __future__ import annotations

from typing import Any

from textual.app import App
from textual.widgets import Button, Checkbox, Input, Select, Static

from acp_tui.core.elicitation import CANCEL, DECLINE, ElicitationAnswer, ElicitationAsk, ElicitationForm
from acp_tui.ui.screens.question_screen import LATER, QuestionScreen

HOSTILE = "\x1b]0;pwned\x07[bold red]x[/]"
SCHEMA: dict[str, Any] = {
    "title": "Deployment",
    "properties": {
        "name": {"type": "string", "title": f"Name {HOSTILE}", "minLength": 2},
        "replicas": {"type": "integer", "minimum": 1, "maximum": 5, "default": 2},
        "confirm": {"type": "boolean", "title": "Confirm"},
        "region": {"type": "string", "enum": ["eu", "us"], "default": "eu"},
    },
    "required": ["name", "region"],
}


class Host(App[None]):
    def __init__(self, screen: QuestionScreen) -> None:
        super().__init__()
        self.question = screen
        self.answers: list[ElicitationAnswer | str] = []

    def on_mount(self) -> None:
        self.push_screen(self.question, self.answers.append)


def form_ask(schema: dict[str, Any] = SCHEMA) -> ElicitationAsk:
    return ElicitationAsk(
        "form", f"Where should this go? {HOSTILE}", ElicitationForm.from_schema(schema), schema=schema
    )


def shown(app: App[None]) -> str:
    return "\n".join(str(static.render()) for static in app.screen.query(Static))


async def test_focus_starts_on_the_first_field_and_enter_accepts_once_the_form_is_valid() -> None:
    app = Host(QuestionScreen("ed", form_ask(), label="r1·a1"))
    async with app.run_test(size=(80, 40)) as pilot:
        first = app.screen.query_one("#field-0", Input)
        assert app.focused is first
        assert app.screen.query_one("#accept", Button).disabled  # the name is required
        await pilot.press("enter")  # not valid yet: nothing sent, the wrong field says why
        assert app.answers == []
        assert str(app.screen.query_one("#error-0", Static).render()) == "required"
        await pilot.press("w", "enter")
        assert str(app.screen.query_one("#error-0", Static).render()) == "at least 2 characters"
        assert app.answers == [] and app.focused is first
        await pilot.press(*"eb")
        assert not app.screen.query_one("#accept", Button).disabled
        await pilot.press("enter")
    assert app.answers == [
        ElicitationAnswer.accept({"name": "web", "replicas": 2, "confirm": False, "region": "eu"})
    ]


async def test_every_field_takes_its_value_and_space_toggles_a_box() -> None:
    app = Host(QuestionScreen("ed", form_ask()))
    async with app.run_test(size=(80, 40)) as pilot:
        await pilot.press(*"dy", "tab")  # y types: it copies only a URL
        replicas = app.screen.query_one("#field-1", Input)
        assert app.focused is replicas
        replicas.value = "9"
        await pilot.pause()
        assert "at most 5" in str(app.screen.query_one("#error-1", Static).render())
        replicas.value = "3"
        await pilot.press("tab", "space")
        assert app.screen.query_one("#field-2", Checkbox).value is True
        app.screen.query_one("#field-3", Select).value = "us"
        await pilot.press("enter")  # Enter on the box is the form's
    assert app.answers == [
        ElicitationAnswer.accept({"name": "dy", "replicas": 3, "confirm": True, "region": "us"})
    ]


async def test_decline_cancel_and_later() -> None:
    for button, expected in (("#decline", DECLINE), ("#cancel", CANCEL), ("#later", LATER)):
        app = Host(QuestionScreen("ed", form_ask()))
        async with app.run_test(size=(80, 40)) as pilot:
            await pilot.click(button)
        assert app.answers == [expected]
    app = Host(QuestionScreen("ed", form_ask()))
    async with app.run_test(size=(80, 40)) as pilot:
        await pilot.press("escape")
    assert app.answers == [LATER]


async def test_the_agent_s_text_is_shown_literally() -> None:
    app = Host(QuestionScreen(f"ed{HOSTILE}", form_ask()))
    async with app.run_test(size=(80, 40)):
        text = shown(app)
        assert "\x1b" not in text and "\x07" not in text
        assert "\\x1b]0;pwned\\x07[bold red]x[/]" in text  # as sent, made visible, no markup applied
        assert "Name \\x1b]0;pwned" in text and "*" in text  # required marked


async def test_a_url_is_shown_with_its_host_first_and_never_opened() -> None:
    url = "https://auth.example.com/login?next=https://evil.test/"
    ask = ElicitationAsk("url", "Sign in to continue.", url=url)
    app = Host(QuestionScreen("ed", ask))
    async with app.run_test(size=(80, 30)) as pilot:
        assert app.focused is app.screen.query_one("#later", Button)  # nothing answered by a stray key
        assert "it leads to auth.example.com" in str(app.screen.query_one("#host", Static).render())
        assert url in shown(app)
        await pilot.press("y")
        assert app.clipboard == url
        await pilot.click("#accept")
    assert app.answers == [ElicitationAnswer.accept()]


async def test_a_form_too_big_to_fill_can_only_be_declined_and_long_text_is_cut() -> None:
    schema = {"properties": {f"f{n}": {"type": "string"} for n in range(70)}}
    ask = ElicitationAsk("form", "x" * 50_000, ElicitationForm.from_schema(schema), schema=schema)
    assert ask.form is not None and (len(ask.form.fields), ask.form.left_out) == (64, 6)
    app = Host(QuestionScreen("ed", ask))
    async with app.run_test(size=(80, 40)) as pilot:
        assert app.screen.query_one("#accept", Button).disabled
        assert "6 more fields than acp-tui shows: it can only be declined" in shown(app)
        assert str(app.screen.query_one("#message", Static).render()).endswith("… (cut)")
        await pilot.press("enter")  # valid fields, yet nothing is sent
        assert app.answers == []
        app.screen.query_one("#decline", Button).press()  # below, past the fields
        await pilot.pause()
    assert app.answers == [DECLINE]
