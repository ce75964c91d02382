"""The prompt bar's and F2's check box: Textual's compact Checkbox in every state and theme, made
light (ours), and on or off by enter, space, a click or an assignment, each said once."""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.content import Content
from textual.geometry import Region
from textual.pilot import Pilot
from textual.widgets import Checkbox

from acp_tui.ui.widgets.toggle import Toggle


class TextualBox(Checkbox):
    """Textual's compact check box, `X` only when checked: the look ours copies."""

    def render(self) -> Content:
        self.BUTTON_INNER = "X" if self.value else " "
        return super().render()


class Boxes(App[None]):
    CSS = "Toggle, TextualBox { margin-bottom: 1; }"

    def __init__(self) -> None:
        super().__init__()
        self.changes: list[tuple[str | None, bool]] = []

    def compose(self) -> ComposeResult:
        yield Toggle(Content("sandbox (ctrl+b)"), id="ours")
        yield TextualBox("sandbox (ctrl+b)", id="textual", compact=True)
        yield Toggle(Content("claude · ask"), value=True, id="on")

    def on_toggle_changed(self, event: Toggle.Changed) -> None:
        self.changes.append((event.toggle.id, event.value))


def cells(widget: Toggle | Checkbox) -> list[tuple[str, str]]:
    (strip,) = widget.render_lines(Region(0, 0, widget.size.width, 1))
    return [(char, str(segment.style)) for segment in strip for char in segment.text]


async def look(pilot: Pilot[None], box: Toggle | Checkbox, state: str) -> list[tuple[str, str]]:
    """`box`'s cells, focused, under the mouse, or neither."""
    pilot.app.set_focus(box if state == "focus" else None)
    if state == "hover":
        await pilot.hover(box)
    else:
        await pilot.hover(None, (39, 7))  # the screen's empty corner
    await pilot.pause()
    return cells(box)


async def test_it_looks_as_textual_s_compact_checkbox_whatever_its_state_and_the_theme() -> None:
    app = Boxes()
    async with app.run_test(size=(40, 8)) as pilot:
        ours, textual = app.query_one("#ours", Toggle), app.query_one("#textual", TextualBox)
        assert [char for char, _ in cells(ours)] == list("▐ ▌ sandbox (ctrl+b) ")
        for theme in ("textual-dark", "nord", "ansi-dark", "textual-light"):
            app.theme = theme
            for value in (False, True):
                ours.value = textual.value = value
                for state in ("plain", "focus", "hover"):
                    seen = await look(pilot, ours, state)
                    assert seen == await look(pilot, textual, state), (theme, value, state)


async def test_enter_space_a_click_and_an_assignment_turn_it_over_each_said_once() -> None:
    app = Boxes()
    async with app.run_test(size=(40, 8)) as pilot:
        box = app.query_one("#ours", Toggle)
        box.focus()
        await pilot.press("space")
        await pilot.press("enter")
        await pilot.click(box)
        box.value = False
        await pilot.pause()
        # The first value (`on` checked at first) is not a change.
        assert app.changes == [("ours", True), ("ours", False), ("ours", True), ("ours", False)]
        box.label = "worktree"
        await pilot.pause()
        assert "".join(char for char, _ in cells(box)) == "▐ ▌ worktree "
