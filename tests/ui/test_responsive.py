"""What keeps the app responsive at a model's pace (issue 20): screens made once, not at every key;
answers streamed by many panes at once shown exactly, without a resize."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from textual.screen import Screen
from textual.widgets import Button

from acp_tui.ui.app import SupervisorApp
from acp_tui.ui.screens.board_screen import BoardScreen
from acp_tui.ui.screens.help_screen import HelpScreen
from acp_tui.ui.screens.permission_screen import PermissionScreen
from acp_tui.ui.screens.policy_screen import AgentsScreen
from acp_tui.ui.widgets.choice import Choice
from acp_tui.ui.widgets.pane_view import PaneView
from tests.ui.helpers import all_finished, ended, pane_lines, panes, scripted_preset, settings, wait_until

SIZE = (150, 40)


def two_agents() -> SupervisorApp:
    return SupervisorApp(
        settings(
            scripted_preset("first", text="## One\n\nThe first answer, " * 20, chunks=40),
            scripted_preset("second", text="- a list\n- of items\n\n" * 20, chunks=40),
        )
    )


async def test_the_board_and_the_help_are_made_once_and_opened_again() -> None:
    app = two_agents()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("enter")
        await wait_until(pilot, all_finished(app))
        opened = []
        for _ in range(2):
            await pilot.press("b")
            await wait_until(pilot, lambda: isinstance(app.screen, BoardScreen))
            board = app.screen
            assert isinstance(board, BoardScreen)
            opened.append(board)
            await pilot.press("s")  # sorted by the column under the cursor
            assert board.sort_column is not None
            await pilot.press("escape")
            await wait_until(pilot, lambda: not isinstance(app.screen, BoardScreen))
        assert opened[0] is opened[1]
        await pilot.press("b")
        await wait_until(pilot, lambda: isinstance(app.screen, BoardScreen))
        assert opened[0].sort_column is None  # opened as a new board is: in start order
        assert opened[0].query_one("#board").row_count == 2
        await pilot.press("escape")
        helps = []
        for _ in range(2):
            await pilot.press("question_mark")
            await wait_until(pilot, lambda: isinstance(app.screen, HelpScreen))
            helps.append(app.screen)
            await pilot.press("escape")
            await wait_until(pilot, lambda: not isinstance(app.screen, HelpScreen))
        assert helps[0] is helps[1]


async def test_f2_is_opened_again_as_it_was_left_only_when_nothing_changed() -> None:
    app = two_agents()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f2")
        await wait_until(pilot, lambda: isinstance(app.screen, AgentsScreen))
        screen = app.screen
        assert isinstance(screen, AgentsScreen)
        policy = screen.query(Choice).first()
        assert policy.value == "reject"
        policy.value = "allow"  # changed, then escape: nothing applied
        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, AgentsScreen))
        assert app.next_runs.policies["first"] == "reject"
        await pilot.press("f2")
        await wait_until(pilot, lambda: isinstance(app.screen, AgentsScreen))
        assert app.screen is screen  # the same screen, not composed again...
        assert screen.query(Choice).first().value == "reject"  # ...showing what the next runs get
        app.next_runs.policies["first"] = "allow"  # as applying would: what it shows changed
        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, AgentsScreen))
        await pilot.press("f2")
        await wait_until(pilot, lambda: isinstance(app.screen, AgentsScreen))
        assert app.screen is not screen
        assert app.screen.query(Choice).first().value == "allow"


async def test_answers_streamed_side_by_side_are_shown_exactly_without_a_resize() -> None:
    app = two_agents()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("enter")
        await wait_until(pilot, all_finished(app))
        for pane in panes(app).values():
            assert pane.attempt.result is not None
            await wait_until(pilot, lambda pane=pane: pane.answer.text == pane.attempt.result.output)  # type: ignore[misc]
            last = pane.attempt.result.output.strip().splitlines()[-1].strip("- #")
            assert any(last in line for line in pane_lines(pane))


async def test_a_dialog_a_zoom_and_a_state_change_paint_no_pane_again_nor_lay_out_the_screen(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A dialog's backdrop is the last frame under it (no pane renders again to be dimmed); the
    zoom draws the pane in a view of its own (the other panes paint nothing); a pane's state
    change repaints that pane alone, restyling and laying out nothing."""
    from textual.css.stylesheet import Stylesheet
    from textual.screen import Screen

    from acp_tui.ui.widgets.pane_view import PaneView

    app = SupervisorApp(settings(*(scripted_preset(f"a{i}", text=f"answer {i}") for i in range(6))))
    rendered: list[PaneView] = []
    layouts: list[Screen[object]] = []
    styled: list[object] = []
    render_line, refresh_layout, apply = PaneView.render_line, Screen._refresh_layout, Stylesheet.apply

    def counted_render(view: PaneView, y: int) -> Any:
        rendered.append(view)
        return render_line(view, y)

    def counted_layout(screen: Screen[object], *args: Any, **kwargs: Any) -> None:
        layouts.append(screen)
        refresh_layout(screen, *args, **kwargs)

    def counted_apply(stylesheet: Stylesheet, node: object, *args: Any, **kwargs: Any) -> None:
        styled.append(node)
        apply(stylesheet, node, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(PaneView, "render_line", counted_render)
    monkeypatch.setattr(Stylesheet, "apply", counted_apply)
    monkeypatch.setattr(Screen, "_refresh_layout", counted_layout)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("enter")
        await wait_until(pilot, all_finished(app))
        await pilot.pause()
        found = panes(app)
        rendered.clear()
        await pilot.press("question_mark")
        await wait_until(pilot, lambda: isinstance(app.screen, HelpScreen))
        await pilot.pause()
        assert [view for view in rendered if view in found.values()] == []  # under the dialog: as painted

        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, HelpScreen))
        app.main_screen.set_focus(found["a0"])
        await pilot.pause()
        rendered.clear()
        await pilot.press("z")
        await wait_until(pilot, lambda: app.main_screen.zoomed is found["a0"])
        await pilot.pause()
        assert rendered and all(view is app.main_screen.zoom for view in rendered)
        await pilot.press("z")
        await pilot.pause()

        pane = found["a1"]
        layouts.clear()
        rendered.clear()
        styled.clear()
        pane.feed.content.show_head(replace(pane.feed.content.head, state="cancelled"))
        await pilot.pause()
        # Its border took the state's colour: it alone repaints.
        assert layouts == [] and styled == [] and set(rendered) == {pane}


@pytest.mark.parametrize(
    ("key", "kind"), [("b", BoardScreen), ("question_mark", HelpScreen), ("f2", AgentsScreen)]
)
async def test_a_screen_opened_again_is_restyled_only_when_the_apps_styles_changed(
    monkeypatch: pytest.MonkeyPatch, key: str, kind: type[Screen[Any]]
) -> None:
    """Textual restyles every widget of a screen each time it is shown (F2: three hundred): a screen
    the app keeps skips that pass while the app's styles are as they were, and makes it after a
    theme change (its widgets then show the new theme)."""
    from textual.css.stylesheet import Stylesheet

    app = two_agents()
    styled: list[object] = []
    update_nodes = Stylesheet.update_nodes

    def counted(stylesheet: Stylesheet, nodes: Any, animate: bool = False) -> None:
        nodes = list(nodes)
        styled.extend(nodes)
        update_nodes(stylesheet, nodes, animate=animate)

    monkeypatch.setattr(Stylesheet, "update_nodes", counted)

    async def opened() -> Screen[Any]:
        await pilot.press(key)
        await wait_until(pilot, lambda: isinstance(app.screen, kind))
        await pilot.pause()
        return app.screen

    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("enter")  # the panes have the keys (b is the board's there)
        await wait_until(pilot, all_finished(app))
        first = await opened()
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.screen is app.main_screen)
        styled.clear()
        assert await opened() is first
        assert first not in styled  # no pass over the screen and all its widgets
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.screen is app.main_screen)

        app.theme = "textual-light"
        await pilot.pause()
        styled.clear()
        assert await opened() is first
        assert first in styled
        surface = app.current_theme.surface
        assert surface is not None
        dialog = first.query_one("#dialog")
        assert dialog.styles.background.hex.lower() == surface.lower() or kind is BoardScreen


async def test_a_dialog_closed_leaves_the_grids_footer_as_it_was() -> None:
    """Seen from under a dialog some of the grid's keys are off; its footer is not rebuilt for that
    (twice: as the dialog opens, as it closes), nor the grid laid out again after its first frame."""
    from acp_tui.ui.widgets.key_footer import KeyFooter

    app = two_agents()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("enter")
        await wait_until(pilot, all_finished(app))
        await pilot.pause()
        footer = app.main_screen.query_one(KeyFooter)
        keys = list(footer.children)
        await pilot.press("question_mark")
        await wait_until(pilot, lambda: isinstance(app.screen, HelpScreen))
        await pilot.pause()
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.screen is app.main_screen)
        await pilot.pause()
        assert keys and list(footer.children) == keys  # the same keys, not composed again


async def test_the_help_is_one_widget_of_lines_whatever_the_number_of_keys() -> None:
    """Every key is a line of one widget (ninety labels were a stylesheet pass each and a layout of
    them all at the first opening), wrapped in its column as a grid of labels would wrap it."""
    from acp_tui.ui import keys
    from acp_tui.ui.screens.help_screen import KeyTable

    app = two_agents()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("f1")
        await wait_until(pilot, lambda: isinstance(app.screen, HelpScreen))
        await pilot.pause()
        screen = app.screen
        assert len(list(screen.query("*"))) < 10  # the dialog, its table, its scroll bar, the footer's keys
        table = screen.query_one(KeyTable)
        lines = [table.render_line(y).text for y in range(table.virtual_size.height)]
        assert lines[0].startswith("In the prompt")
        width = table.content_region.width
        for title, rows in keys.help_sections():
            assert any(line.startswith(title) for line in lines)
            for shown, what in rows:
                assert any(line.startswith(shown.split()[0]) for line in lines)
                assert what.split()[-1] in " ".join(lines)
        assert all(len(line) <= width for line in lines)


async def test_the_permission_dialog_is_made_once_and_filled_anew_for_each_request() -> None:
    """One dialog for every request (a new one composed and styled its widgets each time): filled
    with the next request, its focus on a refusal, its options as many as the request's."""
    kinds = {"first": "allow_always_first", "second": "normal"}
    presets = (scripted_preset(name, policy="ask", permission=kind) for name, kind in kinds.items())
    app = SupervisorApp(settings(*presets))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("enter")
        await wait_until(pilot, lambda: len(app.asks) == 2)
        await pilot.press("a")
        await wait_until(pilot, lambda: isinstance(app.screen, PermissionScreen))
        dialog = app.screen
        assert isinstance(dialog, PermissionScreen)
        widgets = set(dialog.query("*"))
        shown = [button.name for button in dialog.query(".option").results(Button) if button.display]
        assert shown == [option.option_id for option in dialog.ask.options]
        await pilot.press("enter")  # the focused refusal: the next request opens in its place
        await wait_until(pilot, lambda: len(app.asks) == 1)
        await wait_until(pilot, lambda: app.screen is dialog and dialog.pending is app.asks[0])
        assert set(dialog.query("*")) == widgets  # nothing composed again
        focused = app.focused
        assert isinstance(focused, Button) and focused.name == "r1"  # a refusal, not an approval
        assert [button.name for button in dialog.query(".option").results(Button) if button.display] == [
            option.option_id for option in dialog.ask.options
        ]
        await pilot.press("1")
        await wait_until(pilot, all_finished(app))


async def test_an_answer_scrolled_to_its_start_is_painted_once_at_its_true_heights(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Blocks not rendered since they scrolled away have guessed heights: the scroll renders those
    it shows before the frame, instead of a frame at guessed heights and another at true ones."""
    answer = "".join(f"## Part {i}\n\n- a list\n- of items\n\nA paragraph of words.\n\n" for i in range(200))
    app = SupervisorApp(settings(scripted_preset("parts", text=answer, chunks=50)))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("enter")
        await wait_until(pilot, lambda: [p.answer.text for p in panes(app).values()] == [answer])
        [pane] = panes(app).values()
        await wait_until(pilot, lambda: not pane.answer.busy and ended(pane))
        await pilot.pause()
        repaints: list[str] = []
        changed = PaneView.answer_changed
        monkeypatch.setattr(
            PaneView, "answer_changed", lambda view: (repaints.append("answer"), changed(view))
        )
        app.set_focus(pane)
        await pilot.press("home")
        await pilot.pause()
        assert repaints == ["answer"]
        assert any("Part 0" in line for line in pane_lines(pane))


async def test_a_frame_makes_nothing_for_the_panes_whose_rows_it_does_not_paint(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Textual asks every pane of the grid for its lines at each frame that paints any of them, and
    keeps the rows that did not change: a pane's style of the frame and its scrollbar are made
    only when one of its rows is painted (sixteen panes, most frames repaint a few)."""
    text = "A line of the answer that wraps in a narrow pane.\n\n" * 40
    app = SupervisorApp(settings(*(scripted_preset(f"a{i}", text=text, chunks=4) for i in range(6))))
    made: list[PaneView] = []
    scrollbar = PaneView._scrollbar

    def counted(view: PaneView, content: Any) -> Any:
        made.append(view)
        return scrollbar(view, content)

    monkeypatch.setattr(PaneView, "_scrollbar", counted)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("enter")
        await wait_until(pilot, all_finished(app))
        await wait_until(pilot, lambda: not any(pane.answer.busy for pane in panes(app).values()))
        await pilot.pause()
        made.clear()
        pane = panes(app)["a1"]
        pane.action_scroll_answer("home")
        await pilot.pause()
        assert any("A line of the answer" in line for line in pane_lines(pane))
        assert set(made) == {pane}
