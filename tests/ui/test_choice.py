"""F2's choice: one widget on one line, its menu made when it opens (enter, space, up, down or a
click) and gone when it closes (a pick, escape, or the focus gone elsewhere); every change said once."""

from __future__ import annotations

import pytest
from textual.app import App, ComposeResult
from textual.content import Content
from textual.widgets import Button

from acp_tui.ui.widgets.choice import Choice, ChoiceMenu


class Choices(App[None]):
    def __init__(self) -> None:
        super().__init__()
        self.changes: list[str | None] = []

    def compose(self) -> ComposeResult:
        options = [(Content("reject"), "reject"), (Content("allow"), "allow"), (Content("[b]ask[/b]"), "ask")]
        yield Button("elsewhere")  # above: the menu opens below the choice
        yield Choice(options, "reject", id="policy")

    def on_choice_changed(self, event: Choice.Changed) -> None:
        self.changes.append(event.value)


@pytest.mark.parametrize("key", ["enter", "space", "up", "down"])
async def test_a_key_opens_the_menu_on_the_current_value_and_enter_picks(key: str) -> None:
    app = Choices()
    async with app.run_test(size=(40, 10)) as pilot:
        choice = app.query_one(Choice)
        choice.focus()
        assert not choice.children  # no menu made until it opens
        await pilot.press(key)
        menu = choice.query_one(ChoiceMenu)
        assert choice.expanded and menu.has_focus and menu.highlighted == 0
        await pilot.press("down", "enter")
        await pilot.pause()
        assert choice.value == "allow" and app.changes == ["allow"]
        assert not choice.expanded and not choice.children and choice.has_focus


async def test_escape_closes_the_menu_and_nothing_changes() -> None:
    app = Choices()
    async with app.run_test(size=(40, 10)) as pilot:
        app.query_one(Choice).focus()
        await pilot.press("space", "down", "escape")
        await pilot.pause()
        choice = app.query_one(Choice)
        assert not choice.expanded and choice.has_focus and choice.value == "reject" and app.changes == []


async def test_a_click_opens_a_click_on_an_option_picks_it_and_a_click_elsewhere_closes() -> None:
    app = Choices()
    async with app.run_test(size=(40, 10)) as pilot:
        await pilot.click(Choice)
        choice = app.query_one(Choice)
        assert choice.expanded
        await pilot.click(ChoiceMenu, offset=(3, 2))  # reject, allow, ask
        await pilot.pause()
        assert choice.value == "ask" and not choice.expanded and app.changes == ["ask"]
        await pilot.click(Choice)
        await pilot.click(Button)
        await pilot.pause()
        assert not choice.expanded and not choice.children and app.changes == ["ask"]


async def test_an_assignment_is_said_once_and_a_value_not_offered_is_refused() -> None:
    app = Choices()
    async with app.run_test(size=(40, 10)) as pilot:
        choice = app.query_one(Choice)
        choice.value = "ask"
        await pilot.pause()
        assert app.changes == ["ask"]
        with pytest.raises(ValueError, match="not one of the choices"):
            choice.value = "anything"
        choice.value = None  # nothing chosen: the prompt shows
        await pilot.pause()
        assert app.changes == ["ask", None] and choice.render().plain.startswith("choose")


async def test_its_line_shows_the_label_literally() -> None:
    app = Choices()
    async with app.run_test(size=(40, 10)):
        choice = app.query_one(Choice)
        choice.value = "ask"
        assert choice.render().plain.startswith("[b]ask[/b]")
