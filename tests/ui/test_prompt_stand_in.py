"""The first frame's prompt is a stand-in (`ui.widgets.prompt_stand_in`) drawing what the text box
will draw; the box takes its place right after that frame, and the keys typed before it is there
reach it in the order typed (`KeyOrder.hold`)."""

from __future__ import annotations

import pytest
from textual import events
from textual.app import App, ComposeResult
from textual.geometry import Region
from textual.widget import Widget

from acp_tui.ui.app import SupervisorApp
from acp_tui.ui.widgets.prompt_area import PromptArea
from acp_tui.ui.widgets.prompt_bar import PromptBar
from acp_tui.ui.widgets.prompt_stand_in import PromptStandIn
from tests.ui.helpers import scripted_preset, settings
from tests.ui.test_key_order import burst

TEXTS = (
    "Explain what an ACP subagent is, in a few paragraphs.",
    "",
    "one\ntwo: a second line that wraps",
    "a_word_longer_than_the_box_is_wide",
    "日本語のテキストも同じ所で折り返す",
)
# A text taller than the box's six rows: the box shows its end with a scroll bar's column, which
# the stand-in does not draw (it shows the same end, a column wider, for the moment it is there).
TALL = "\n".join(f"line {n}" for n in range(9))


class OneBar(App[None]):
    def __init__(self, text: str, stand_in: bool) -> None:
        super().__init__()
        self.text, self.stand_in = text, stand_in

    def compose(self) -> ComposeResult:
        yield PromptBar({"one": "reject"}, self.text, stand_in=self.stand_in)

    def on_mount(self) -> None:
        self.query_one(PromptBar).focus_prompt()


def cells(widget: Widget) -> list[list[tuple[str, str]]]:
    """What `widget` paints, a cell (its text and its style) at a time."""
    strips = widget.render_lines(Region(0, 0, *widget.size))
    return [[(character, str(part.style)) for part in strip for character in part.text] for strip in strips]


async def painted(text: str, width: int, *, stand_in: bool) -> list[list[tuple[str, str]]]:
    app = OneBar(text, stand_in)
    async with app.run_test(size=(width, 16)) as pilot:
        prompt = app.query_one("#prompt-row").children[0]
        assert isinstance(prompt, PromptStandIn if stand_in else PromptArea)
        if isinstance(prompt, PromptArea):
            prompt.cursor_blink = False  # its cursor drawn, whenever this looks
        await pilot.pause()
        return cells(prompt)


@pytest.mark.parametrize("text", TEXTS)
@pytest.mark.parametrize("width", [40, 80, 140])
async def test_the_stand_in_paints_what_the_text_box_paints(text: str, width: int) -> None:
    assert await painted(text, width, stand_in=True) == await painted(text, width, stand_in=False)


async def test_a_text_taller_than_the_box_shows_its_end_as_the_box_does() -> None:
    def text(rows: list[list[tuple[str, str]]]) -> list[str]:
        return ["".join(character for character, _ in row).strip() for row in rows]

    assert text(await painted(TALL, 80, stand_in=True)) == text(await painted(TALL, 80, stand_in=False))
    assert text(await painted(TALL, 80, stand_in=True))[-1] == "line 8"


def test_a_text_the_stand_in_would_draw_otherwise_gets_the_text_box_at_once() -> None:
    assert PromptBar({}, "tab\there", stand_in=True).stand_in is None
    assert PromptBar({}, "plain", stand_in=True).stand_in is not None


async def test_the_text_box_replaces_the_stand_in_with_its_text_and_the_keys_held_meanwhile() -> None:
    """As on a terminal: keys typed before the text box is there wait for it, then type into it."""
    app = SupervisorApp(settings(scripted_preset("one"), prompt="hello"))
    async with app.run_test(size=(100, 30)) as pilot:
        bar = app.query_one(PromptBar)
        await bar.area.remove()  # the first frame's bar, as a terminal has it
        bar.stand_in = PromptStandIn("hello")
        await bar.query_one("#prompt-row").mount(bar.stand_in, before=0)
        bar.focus_prompt()
        app.key_order.hold()
        burst(app, "ctrl+e", " ", "w", "o", "r", "l", "d")
        await pilot.pause()
        assert bar.value == "hello" and app.focused is bar.stand_in
        await bar.make_prompt()
        await app.key_order.release()
        await pilot.pause()
        assert bar.stand_in is None and not app.query(PromptStandIn)
        assert app.focused is bar.area and bar.value == "hello world"


async def test_the_text_box_replacing_the_stand_in_while_the_app_is_blurred_gets_the_focus_back() -> None:
    """A browser's page not yet focused, a terminal window behind another: Textual takes the focus
    away and gives it back to the widget that had it, which must then be the text box."""
    app = SupervisorApp(settings(scripted_preset("one"), prompt="hello"))
    async with app.run_test(size=(100, 30)) as pilot:
        bar = app.query_one(PromptBar)
        await bar.area.remove()
        bar.stand_in = PromptStandIn("hello")
        await bar.query_one("#prompt-row").mount(bar.stand_in, before=0)
        bar.focus_prompt()
        app.post_message(events.AppBlur())
        await pilot.pause()
        assert app.focused is None
        await bar.make_prompt()
        app.post_message(events.AppFocus())
        await pilot.pause()
        assert app.focused is bar.area
        await pilot.press("enter")
        assert app.query("RunPane")  # Enter sent the round
