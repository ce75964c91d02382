"""The keyboard model of issue 10, key by key (Pilot against real scripted agents)."""

from __future__ import annotations

import json
from pathlib import Path

from textual import events
from textual.command import CommandPalette
from textual.geometry import Region
from textual.widgets import Button, Static

from acp_tui.ui import keys as key_table
from acp_tui.ui.app import SupervisorApp
from acp_tui.ui.screens.board_screen import COLUMNS as board_columns
from acp_tui.ui.screens.board_screen import BoardScreen
from acp_tui.ui.screens.confirm_screen import ConfirmScreen
from acp_tui.ui.screens.help_screen import HelpScreen
from acp_tui.ui.widgets.prompt_area import PromptArea
from acp_tui.ui.widgets.run_pane import RunPane
from acp_tui.ui.widgets.status_badge import LIVE_PHASES, STATE_COLOURS
from tests.ui.helpers import (
    all_finished,
    border_colour,
    ended,
    pane_lines,
    panes,
    scripted_preset,
    settings,
    wait_until,
)

SIZE = (150, 40)


def three(**options: object) -> SupervisorApp:
    return SupervisorApp(
        settings(
            scripted_preset("one", text="one says {prompt}", **options),
            scripted_preset("two", text="two says {prompt}", **options),
            scripted_preset("three", text="three says {prompt}", **options),
            prompt="the task",
        )
    )


def pane_list(app: SupervisorApp) -> list[RunPane]:
    return list(app.query(RunPane))


async def test_c_after_enter_cancels_the_first_pane_and_leaves_the_prompt_unchanged() -> None:
    app = three(forever=1)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("enter")
        first = pane_list(app)[0]
        assert first.has_focus  # focus moved to the first pane of the round
        area = app.query_one(PromptArea)
        assert area.text == "the task" and area.selected_text == ""
        await wait_until(pilot, lambda: first.attempt.run is not None and first.answer.text != "")
        await pilot.press("c")
        await wait_until(pilot, lambda: ended(first))
        assert first.attempt.state == "cancelled" and str(first.attempt.result.stop_reason) == "aborted"  # type: ignore[union-attr]
        assert area.text == "the task"
        assert [p.attempt.live for p in pane_list(app)[1:]] == [True, True]
        await pilot.press("C", "y")
        await wait_until(pilot, all_finished(app))


async def test_slash_and_i_focus_the_prompt_where_keys_type_and_escape_leaves_it() -> None:
    app = three()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("enter")
        await wait_until(pilot, all_finished(app))
        second = pane_list(app)[1]
        second.focus()
        await pilot.press("slash")
        area = app.query_one(PromptArea)
        assert area.has_focus and area.selected_text == ""
        await pilot.press("end", *" now", "c", "x")  # single-key commands type in the prompt
        assert area.text == "the task nowcx"
        assert len(pane_list(app)) == 3
        await pilot.press("escape")
        assert second.has_focus  # back to the pane last focused, not the oldest
        await pilot.press("i")
        assert area.has_focus
        await pilot.press("escape")


async def test_tab_walks_the_panes_only_in_reading_order() -> None:
    app = three(forever=1)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("enter")
        one, two, three_ = pane_list(app)
        await wait_until(pilot, lambda: all(p.attempt.run is not None for p in (one, two, three_)))
        assert one.has_focus
        await pilot.press("tab")
        assert two.has_focus
        await pilot.press("tab")
        assert three_.has_focus
        await pilot.press("tab")
        assert one.has_focus  # round the panes, never a Cancel button or a container
        await pilot.press("shift+tab")
        assert three_.has_focus
        await pilot.press("ctrl+left")
        assert two.has_focus
        assert all(not button.focusable for button in app.query(Button))
        await pilot.press("C", "y")
        await wait_until(pilot, all_finished(app))


async def test_digits_focus_the_nth_pane_of_the_newest_round() -> None:
    app = three()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("enter")
        await wait_until(pilot, all_finished(app))
        app.query_one(PromptArea).text = "again"
        await pilot.press("slash", "enter")
        await wait_until(pilot, lambda: len(pane_list(app)) == 6 and all_finished(app)())
        newest = pane_list(app)[3:]
        assert newest[0].has_focus
        await pilot.press("3")
        assert newest[2].has_focus
        await pilot.press("2")
        assert newest[1].has_focus
        await pilot.press("9")  # no ninth pane: nothing moves
        assert newest[1].has_focus


async def test_a_pasted_multi_line_prompt_is_sent_whole_and_ctrl_j_adds_a_line() -> None:
    app = SupervisorApp(settings(scripted_preset("echo", text="said {prompt}"), prompt=""))
    async with app.run_test(size=SIZE) as pilot:
        area = app.query_one(PromptArea)
        app.post_message(events.Paste("first line\nsecond line\nthird line"))  # as the driver does
        await pilot.pause()
        assert area.text == "first line\nsecond line\nthird line"
        await pilot.press("ctrl+j", *"fourth")
        assert area.text.endswith("third line\nfourth")
        await pilot.press("enter")
        await wait_until(pilot, all_finished(app))
        assert panes(app)["echo"].answer.text == "said first line\nsecond line\nthird line\nfourth"


async def test_up_and_down_walk_the_prompts_of_this_session() -> None:
    app = SupervisorApp(settings(scripted_preset("echo", text="said {prompt}"), prompt="first"))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("enter")
        await wait_until(pilot, all_finished(app))
        area = app.query_one(PromptArea)
        area.text = "second"
        await pilot.press("slash", "enter")
        await wait_until(pilot, lambda: len(pane_list(app)) == 2 and all_finished(app)())
        area.text = "draft"
        await pilot.press("slash", "up")
        assert area.text == "second"
        await pilot.press("up")
        assert area.text == "first"
        await pilot.press("down")
        assert area.text == "second"
        await pilot.press("down")
        assert area.text == "draft"


async def test_r_adds_an_attempt_beside_the_old_one_and_the_export_holds_both(tmp_path: Path) -> None:
    app = SupervisorApp(settings(scripted_preset("echo", text="said {prompt}", permission="normal")))
    app.export_dir = tmp_path
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("enter")
        await wait_until(pilot, all_finished(app))
        app.next_runs.policies["echo"] = "allow"  # as the policy screen would
        await pilot.press("r")
        await wait_until(pilot, lambda: len(pane_list(app)) == 2 and all_finished(app)())
        old, new = pane_list(app)
        assert (old.attempt.attempt_no, new.attempt.attempt_no) == (1, 2)
        assert old.attempt.policy == "reject" and new.attempt.policy == "allow"
        assert "allow" in str(new.border_subtitle) and "a2" in str(new.border_subtitle)
        assert [r.rule for r in new.attempt.permissions] == ["allow"]
        await pilot.press("x")  # closing the new one keeps it in the session
        await wait_until(pilot, lambda: len(pane_list(app)) == 1)
        await pilot.press("ctrl+s")
    [jsonl] = tmp_path.glob("*.jsonl")
    records = [json.loads(line) for line in jsonl.read_text().splitlines()]
    assert [(r["round"], r["attempt"], r["policy"]) for r in records] == [(1, 1, "reject"), (1, 2, "allow")]
    md = next(tmp_path.glob("*[0-9].md")).read_text()  # not the comparison report, `...-compare.md`
    assert "## echo (round 1, attempt 1): completed" in md and "## echo (round 1, attempt 2): completed" in md


async def test_two_exports_in_the_same_second_do_not_overwrite_each_other(tmp_path: Path) -> None:
    app = SupervisorApp(settings(scripted_preset("echo")))
    app.export_dir = tmp_path
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("enter")
        await wait_until(pilot, all_finished(app))
        await pilot.press("ctrl+s", "ctrl+s")
    assert len(list(tmp_path.glob("*[0-9].md"))) == 2 and len(list(tmp_path.glob("*.jsonl"))) == 2
    assert len(list(tmp_path.glob("*-compare.md"))) == 2


async def test_closing_every_pane_brings_the_welcome_back_and_keeps_the_runs(tmp_path: Path) -> None:
    app = three()
    app.export_dir = tmp_path
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("enter")
        await wait_until(pilot, all_finished(app))
        await pilot.press("x", "x", "x")
        await wait_until(pilot, lambda: not pane_list(app))
        await wait_until(pilot, lambda: bool(app.query("#welcome")))
        assert app.query_one(PromptArea).has_focus
        await pilot.press("ctrl+s")
    [jsonl] = tmp_path.glob("*.jsonl")
    assert [json.loads(line)["name"] for line in jsonl.read_text().splitlines()] == ["one", "two", "three"]


async def test_the_board_lists_every_run_and_enter_reopens_a_closed_one() -> None:
    app = SupervisorApp(
        settings(
            scripted_preset("good", text="fine"),
            scripted_preset("bad", exit=3, exit_at="prompt"),
            scripted_preset("shy", stop="refusal", text="no"),
        )
    )
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("enter")
        await wait_until(pilot, all_finished(app))
        await pilot.press("x")  # close "good"
        await wait_until(pilot, lambda: len(pane_list(app)) == 2)
        await pilot.press("b")
        await wait_until(pilot, lambda: isinstance(app.screen, BoardScreen))
        board = app.screen
        assert isinstance(board, BoardScreen)
        table = board.query_one("DataTable")
        rows = [[str(cell) for cell in table.get_row_at(i)] for i in range(table.row_count)]  # type: ignore[attr-defined]
        assert [(row[0], row[1]) for row in rows] == [
            ("completed", "good"),
            ("error", "bad"),
            ("refusal", "shy"),
        ]
        await pilot.press("down")  # the highlighted run's reason, whole, under the table
        assert "exited with code 3" in str(board.query_one("#board-details", Static).render())
        await pilot.press("up")
        await pilot.press("f", "f")  # all -> live -> the first state present
        assert board.state_filter == "completed" and table.row_count == 1  # type: ignore[attr-defined]
        await pilot.press("f", "f", "f")  # error, refusal, back to all
        assert board.state_filter is None and table.row_count == 3  # type: ignore[attr-defined]
        board.sort_by(0)  # by state
        assert [str(table.get_row_at(i)[0]) for i in range(3)] == ["completed", "error", "refusal"]  # type: ignore[attr-defined]
        board.sort_by(0)
        await pilot.press("home", "enter")  # the first row: "good", whose pane was closed
        await wait_until(pilot, lambda: not isinstance(app.screen, BoardScreen))
        await wait_until(pilot, lambda: len(pane_list(app)) == 3)
        reopened = app.focused
        assert (
            isinstance(reopened, RunPane)
            and reopened.agent == "good"
            and reopened.attempt.state == "completed"
        )
        assert reopened.answer.text == "fine"


async def test_the_board_at_80_columns_shows_every_column_and_a_follow_ups_turn(tmp_path: Path) -> None:
    from tests.conversations.test_app import kept

    app = SupervisorApp(settings(kept("kept", tmp_path / "s"), scripted_preset("other"), prompt="first"))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("enter")
        await wait_until(pilot, all_finished(app))
        await pilot.press("f", *"again", "enter")
        await wait_until(pilot, lambda: len(app.session.attempts) == 3 and all_finished(app)())
        await pilot.press("b")
        await wait_until(pilot, lambda: isinstance(app.screen, BoardScreen))
        await pilot.pause()
        table = app.screen.query_one("DataTable")
        rows = [[str(cell) for cell in table.get_row_at(i)] for i in range(table.row_count)]  # type: ignore[attr-defined]
        assert [row[2] for row in rows] == ["r1·a1", "r1·a1", "r1·a1·t2"]  # the turn, in full
        assert table.ordered_columns[2].width >= len("r1·a1·t2")  # type: ignore[attr-defined]
        assert [row[-1] for row in rows] == ["first", "first", "again"]  # the prompt column, in sight
        assert [column.label.plain for column in table.ordered_columns] == list(board_columns)  # type: ignore[attr-defined]
        assert table.virtual_size.width <= table.scrollable_content_region.width  # no sideways scroll


async def test_z_zooms_the_focused_pane_and_back() -> None:
    app = three()
    async with app.run_test(size=SIZE) as pilot:
        app.query_one(PromptArea).text = "a task\nof two lines"
        await pilot.press("enter")
        await wait_until(pilot, all_finished(app))
        first = pane_list(app)[0]
        await pilot.press("z")
        zoom = app.main_screen.zoom
        assert app.main_screen.zoomed is first and zoom.region.width > 140 and first.region.width < 60
        await pilot.pause()
        shown = pane_lines(zoom)
        assert any("a task" in line for line in shown) and any("of two lines" in line for line in shown)
        await pilot.press("z")
        assert app.main_screen.zoomed is None and not zoom.display
        await pilot.press("tab")
        assert first.shown("asked") == "a task"  # its first line again


async def test_question_mark_lists_every_key_and_the_palette_has_the_app_commands() -> None:
    app = three()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("enter")
        await wait_until(pilot, all_finished(app))
        await pilot.press("question_mark")
        await wait_until(pilot, lambda: isinstance(app.screen, HelpScreen))
        keys = " ".join(f" {key} " for _, rows in key_table.help_sections() for key, _ in rows)
        for key in (
            " C ",
            "tab",
            "1 … 9",
            " c ",
            " r ",
            " x ",
            " e ",
            " l ",
            " t ",
            " z ",
            " b ",
            " y ",
            " a ",
            " L ",
            " P ",
            "ctrl+r",
        ):
            assert key in keys, key
        await pilot.press("escape")
        titles = [command.title for command in app.get_system_commands(app.screen)]
        for title in ("Cancel all", "Export", "Agents", "Reload config", "Tracing", "Board", "Help", "Zoom"):
            assert title in titles
        await pilot.press("ctrl+p")
        await wait_until(pilot, lambda: isinstance(app.screen, CommandPalette))
        await pilot.press("escape")


async def test_y_copies_the_focused_answer() -> None:
    app = three()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("enter")
        await wait_until(pilot, all_finished(app))
        await pilot.press("2", "y")
        assert app.clipboard == "two says the task"


async def test_enter_again_while_a_round_runs_asks_first() -> None:
    app = SupervisorApp(settings(scripted_preset("slow", forever=1)))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("enter")
        await wait_until(pilot, lambda: pane_list(app)[0].attempt.run is not None)
        await pilot.press("slash", "enter")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("enter")  # the focused answer is "not now"
        await wait_until(pilot, lambda: not isinstance(app.screen, ConfirmScreen))
        assert len(pane_list(app)) == 1
        await pilot.press("slash", "enter")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("y")
        await wait_until(pilot, lambda: len(pane_list(app)) == 2)
        await pilot.press("C", "y")
        await wait_until(pilot, all_finished(app))


async def test_columns_follow_the_width_at_every_resize() -> None:
    app = SupervisorApp(settings(*(scripted_preset(f"a{n}") for n in range(6))))
    async with app.run_test(size=(80, 30)) as pilot:
        await pilot.press("enter")
        await wait_until(pilot, all_finished(app))

        def columns() -> int:
            return len({pane.region.x for pane in pane_list(app) if pane.region.width})

        await pilot.pause()
        assert columns() == 2
        for width, expected in ((220, 3), (100, 2), (200, 3), (80, 2)):
            await pilot.resize_terminal(width, 30)
            await pilot.pause()
            await pilot.pause()
            assert (width, columns()) == (width, expected)


async def test_four_panes_lay_out_two_by_two() -> None:
    app = SupervisorApp(settings(*(scripted_preset(f"a{n}") for n in range(4))))
    async with app.run_test(size=(200, 50)) as pilot:
        await pilot.press("enter")
        await wait_until(pilot, all_finished(app))
        await pilot.pause()
        found = pane_list(app)
        assert len({p.region.x for p in found}) == 2 and len({p.region.y for p in found}) == 2


async def test_every_state_has_its_colour_on_the_badge_and_the_border() -> None:
    app = SupervisorApp(
        settings(
            scripted_preset("done", text="ok"),
            scripted_preset("cut", stop="max_tokens", text="trunc"),
            scripted_preset("shy", stop="refusal", text="no"),
            scripted_preset("crash", exit=3, exit_at="prompt"),
            scripted_preset("live", forever=1),
        )
    )
    async with app.run_test(size=(200, 50)) as pilot:
        await pilot.press("enter")
        live = panes(app)["live"]
        await wait_until(
            pilot,
            lambda: (
                all(p.attempt.result for p in pane_list(app) if p is not live)
                and live.attempt.run is not None
            ),
        )
        assert border_colour(live) == STATE_COLOURS["live"] and live.shown("state") in LIVE_PHASES
        expected = {"done": "completed", "cut": "max-tokens", "shy": "refusal", "crash": "error"}
        for name, state in expected.items():
            pane = panes(app)[name]
            assert pane.attempt.state == state and border_colour(pane) == STATE_COLOURS[state]
            assert pane.shown("state") == state
        live.focus()
        await pilot.press("c")
        await wait_until(pilot, lambda: ended(live))
        assert border_colour(live) == STATE_COLOURS["cancelled"] and live.shown("state") == "cancelled"
        assert (
            "1 completed" in app.sub_title and "1 error" in app.sub_title and "1 cancelled" in app.sub_title
        )


async def test_toasts_never_cover_a_panes_summary_lines() -> None:
    app = three()
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await pilot.press("enter")
        await wait_until(pilot, all_finished(app))
        app.notify("a toast long enough to wrap at eighty columns, or very nearly so")
        await wait_until(pilot, lambda: bool(app.screen.query("Toast")))
        await pilot.pause()
        [toast] = app.screen.query("Toast")
        for pane in pane_list(app):
            parts = (pane.shown("stats"), pane.shown("error"))
            summary = [part.splitlines()[0][:20] for part in parts if part]
            rows = [y for y, line in enumerate(pane_lines(pane)) if any(words in line for words in summary)]
            assert len(rows) >= len(summary)
            region = pane.content_region
            for y in rows:
                assert not toast.region.overlaps(Region(region.x, region.y + y, region.width, 1))


async def test_the_app_keys_work_from_the_board_and_the_grid_ones_wait() -> None:
    app = three(forever=1)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("enter")
        await wait_until(pilot, lambda: all(p.attempt.run is not None for p in pane_list(app)))
        await pilot.press("b")
        await wait_until(pilot, lambda: isinstance(app.screen, BoardScreen))
        await pilot.press("slash", "2", "tab", "z")  # grid keys: nothing happens behind the board
        await pilot.resize_terminal(120, 30)  # the grid follows the width even behind the board
        await pilot.pause()
        assert isinstance(app.screen, BoardScreen)
        await pilot.press("C", "y")  # cancel all works from the board
        await wait_until(pilot, all_finished(app))
        assert all(p.attempt.state == "cancelled" for p in pane_list(app))
        await pilot.press("escape")
        assert pane_list(app)[0].has_focus and app.query_one(PromptArea).text == "the task"


async def test_an_empty_permission_log_says_so() -> None:
    app = three()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("enter")
        await wait_until(pilot, all_finished(app))
        await pilot.press("l")
        await wait_until(pilot, lambda: app.screen is not app.main_screen)
        shown = " ".join(str(s.render()) for s in app.screen.query(Static))
        assert "No permission request yet" in shown


async def test_the_palette_opens_the_session_permissions_panel() -> None:
    from acp_tui.ui.screens.permissions_panel_screen import PermissionsPanelScreen

    app = SupervisorApp(settings(scripted_preset("asked", permission="normal"), scripted_preset("quiet")))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("enter")
        await wait_until(pilot, all_finished(app))
        [command] = [
            c for c in app.get_system_commands(app.screen) if c.title == "Permissions of the session"
        ]
        command.callback()
        await wait_until(pilot, lambda: isinstance(app.screen, PermissionsPanelScreen))
        await wait_until(pilot, lambda: bool(app.screen.query("DataTable")))
        assert app.screen.query_one("DataTable").row_count == 1  # type: ignore[attr-defined]
        await pilot.press("escape")


async def test_bell_and_toasts_on_error_unless_switched_off() -> None:
    import dataclasses

    for notify, toasts in (("all", True), ("off", False)):
        app = SupervisorApp(
            dataclasses.replace(settings(scripted_preset("bad", exit=3)), notify=notify, toasts=toasts)
        )
        rings: list[str] = []
        app.calls.attention.write = rings.append
        async with app.run_test(size=SIZE, notifications=True) as pilot:
            await pilot.press("enter")
            await wait_until(pilot, all_finished(app))
            await pilot.pause()
            assert (rings, bool(app._notifications)) == (["\x07"] if notify == "all" else [], toasts)
