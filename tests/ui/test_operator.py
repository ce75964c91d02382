"""Issue 21, the operator's screen: every agent in reach, keys that do what the person aims at,
nothing hidden that matters (Pilot against real scripted agents over stdio)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from textual import events
from textual.pilot import Pilot
from textual.widgets import DataTable, Static

from acp_tui.core.model import SubagentResult, SubagentStopReason
from acp_tui.lab.check import Decision, Row, text_table
from acp_tui.settings import paths
from acp_tui.settings.load import load_settings
from acp_tui.ui import keys
from acp_tui.ui.app import SupervisorApp
from acp_tui.ui.screens.activity_screen import ActivityScreen
from acp_tui.ui.screens.board_screen import BoardScreen
from acp_tui.ui.screens.compare_screen import CompareScreen
from acp_tui.ui.screens.confirm_screen import CancelAllScreen
from acp_tui.ui.screens.help_screen import HelpScreen
from acp_tui.ui.screens.permission_log_screen import PermissionLogScreen
from acp_tui.ui.screens.permission_screen import PermissionScreen
from acp_tui.ui.screens.permissions_panel_screen import PermissionsPanelScreen
from acp_tui.ui.screens.policy_screen import AgentsScreen
from acp_tui.ui.summary import ending_note, format_amount
from acp_tui.ui.widgets.answer_view import AnswerView
from acp_tui.ui.widgets.choice import Choice
from acp_tui.ui.widgets.fitted_table import FittedTable, fitted_widths
from acp_tui.ui.widgets.prompt_area import PromptArea
from acp_tui.ui.widgets.prompt_bar import PromptBar
from acp_tui.ui.widgets.round_box import RoundBox
from acp_tui.ui.widgets.run_pane import RunPane
from acp_tui.ui.widgets.toggle import Toggle
from tests.helpers import SCRIPTED_AGENT
from tests.ui.helpers import all_finished, panes, scripted_preset, settings, wait_until

SEVEN = ("claude", "codex", "gemini", "vibe", "opencode", "kimi", "ts")
LONG_RULE = "writes under the repository ask me before they happen"


def pane_list(app: SupervisorApp) -> list[RunPane]:
    return app.main_screen.panes()


async def one_round(app: SupervisorApp, pilot: Pilot[None]) -> list[RunPane]:
    """Enter, and every pane of the round once its run has ended."""
    await pilot.press("enter")
    await wait_until(pilot, all_finished(app))
    return pane_list(app)


def toasts(app: SupervisorApp) -> list[str]:
    return [str(note.message) for note in app._notifications]


def write_config(path: Path, body: str) -> Path:
    path.write_text(body, encoding="utf-8")
    return path


def scripted_agent_toml(name: str, *options: str, policy: str = "reject") -> str:
    args = json.dumps([SCRIPTED_AGENT, *options])
    command = json.dumps(sys.executable)
    return f'[[agent]]\nname = "{name}"\ncommand = {command}\nargs = {args}\npolicy = "{policy}"\n\n'


# Choosing agents ---------------------------------------------------------------------------------


async def test_every_agent_is_in_sight_at_80_columns_and_checked_reads_unlike_unchecked() -> None:
    app = SupervisorApp(settings(*(scripted_preset(name) for name in SEVEN)))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        bar = app.query_one(PromptBar)
        boxes = [box for box in app.query(Toggle) if box.name]
        assert [box.name for box in boxes] == list(SEVEN)
        for box in boxes:  # on screen, inside the prompt bar: the row wraps
            assert box.region.width > 0 and box.region.right <= 80, box.name
            assert bar.region.contains_region(box.region), box.name
        assert len({box.region.y for box in boxes}) > 1
        ts = boxes[-1]
        assert str(ts.render()).startswith("▐X▌")
        ts.value = False
        await pilot.pause()
        assert str(ts.render()).startswith("▐ ▌")  # the text says it, not only a colour
        assert bar.selected() == list(SEVEN[:-1])


async def test_tab_reaches_the_boxes_space_toggles_and_star_checks_or_unchecks_all() -> None:
    app = SupervisorApp(settings(scripted_preset("one"), scripted_preset("two"), scripted_preset("three")))
    async with app.run_test(size=(100, 30)) as pilot:
        bar = app.query_one(PromptBar)
        assert app.query_one(PromptArea).has_focus
        await pilot.press("tab")
        assert app.focused is app.query_one("#worktree", Toggle)
        await pilot.press("tab", "tab")
        first = app.focused
        assert isinstance(first, Toggle) and first.name == "one"
        await pilot.press("space")
        assert bar.selected() == ["two", "three"]
        await pilot.press("asterisk")  # not all checked: all
        assert bar.selected() == ["one", "two", "three"]
        await pilot.press("asterisk")  # all checked: none
        assert bar.selected() == []
        assert not bar.worktree and not bar.sandbox  # `*` is about agents only
        await pilot.press("space", "shift+tab", "shift+tab", "shift+tab")
        assert app.query_one(PromptArea).has_focus
        assert [pane.agent for pane in await one_round(app, pilot)] == ["one"]


async def test_agent_on_the_command_line_checks_exactly_the_presets_it_names(tmp_path: Path) -> None:
    config = write_config(
        tmp_path / "agents.toml", "".join(scripted_agent_toml(name) for name in ("one", "two", "three"))
    )
    app = SupervisorApp(load_settings(config, ["three", "one"]))  # `acp-tui --config F --agent three ...`
    async with app.run_test(size=(100, 30)) as pilot:
        assert app.query_one(PromptBar).selected() == ["one", "three"]
        assert sorted(pane.agent for pane in await one_round(app, pilot)) == ["one", "three"]


# Keys --------------------------------------------------------------------------------------------


async def test_the_prompts_editing_keys_are_its_own_and_cancel_all_asks_first() -> None:
    app = SupervisorApp(settings(scripted_preset("slow", forever=1), prompt="first second third"))
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("enter")
        [pane] = pane_list(app)
        await wait_until(pilot, lambda: pane.attempt.run is not None and pane.answer.text != "")
        await pilot.press("slash")
        area = app.query_one(PromptArea)
        await pilot.press("ctrl+a", "ctrl+k")  # the line start, then delete to its end
        assert area.text == "" and pane.attempt.live  # the run goes on
        area.text = "first second third"
        await pilot.press("ctrl+e", "ctrl+w")
        assert area.text == "first second "
        await pilot.press("ctrl+u")
        assert area.text == ""
        area.text = "ab"
        await pilot.press("home", "x", "end", "y")
        assert area.text == "xaby" and pane.attempt.live
        await pilot.press("escape", "ctrl+k")  # on the panes: nothing (it was cancel-all, one Enter away)
        assert pane.attempt.live and area.text == "xaby"
        await pilot.press("C")  # cancel all: asked first, the focus on no
        assert isinstance(app.screen, CancelAllScreen) and app.focused is app.screen.query_one("#no")
        await pilot.press("enter")
        assert not isinstance(app.screen, CancelAllScreen) and pane.attempt.live
        await pilot.press("C", "y")
        await wait_until(pilot, all_finished(app))
        assert pane.attempt.state == "cancelled"
        titles = [command.title for command in app.get_system_commands(app.screen)]
        assert "Cancel all" in titles


async def test_keys_typed_ahead_apply_in_order_and_enter_sends_the_text_as_edited() -> None:
    """One burst, as the terminal driver posts keys: `Home Delete Delete Enter` sends `go`, and a key
    typed after Enter acts on the new round's pane (`z` zooms it), not in the prompt."""
    app = SupervisorApp(settings(scripted_preset("echo", text="said {prompt}"), prompt="XYgo"))
    async with app.run_test(size=(100, 30)) as pilot:
        for key, character in (
            ("home", None),
            ("delete", None),
            ("delete", None),
            ("enter", "\r"),
            ("z", "z"),
        ):
            app.post_message(events.Key(key, character))
        await wait_until(pilot, all_finished(app))
        assert panes(app)["echo"].answer.text == "said go"
        assert app.query_one(PromptArea).text == "go"
        assert app.main_screen.zoomed is panes(app)["echo"]


async def test_f1_opens_the_help_from_the_prompt_a_pane_and_the_board() -> None:
    app = SupervisorApp(settings(scripted_preset("one")))
    async with app.run_test(size=(100, 30)) as pilot:
        assert app.query_one(PromptArea).has_focus
        await pilot.press("question_mark")  # in the prompt, `?` is a character
        assert app.query_one(PromptArea).text == "hello?" and app.screen is app.main_screen
        for where in ("prompt", "pane", "board"):
            if where == "pane":
                await pilot.press("enter")
                await wait_until(pilot, all_finished(app))
            if where == "board":
                await pilot.press("b")
                await wait_until(pilot, lambda: isinstance(app.screen, BoardScreen))
            await pilot.press("f1")
            await wait_until(pilot, lambda: isinstance(app.screen, HelpScreen))
            await pilot.press("escape")
            await wait_until(pilot, lambda: not isinstance(app.screen, HelpScreen))


async def test_the_intro_names_only_keys_that_act_where_the_focus_is() -> None:
    named = keys.intro()
    assert [key for key, _ in named] == ["enter", "ctrl+j", "tab", "f2", "f1", "ctrl+c"]
    table = {key.keys.split(",")[0]: key for key in keys.KEYS if key.intro}
    assert all(table[key].acts_in_prompt for key, _ in named)
    app = SupervisorApp(settings(scripted_preset("one")))
    async with app.run_test(size=(80, 24)) as pilot:
        intro = str(app.query_one("#welcome", Static).render())
        for key, what in named:
            assert f"{key} {what}" in intro
        assert "?" not in intro and " b " not in intro
        assert app.query_one(PromptArea).has_focus
        await pilot.press("f2")  # what the intro says, from where the focus is
        await wait_until(pilot, lambda: isinstance(app.screen, AgentsScreen))
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.screen is app.main_screen)
        await pilot.press("tab")
        assert isinstance(app.focused, Toggle)


# A failed tool call, the activity ---------------------------------------------------------------


async def test_a_failed_tool_call_shows_on_its_pane_and_o_opens_the_runs_activity() -> None:
    app = SupervisorApp(
        settings(scripted_preset("gemini", failed_tool="Write out.txt", hidden=1, text="I wrote the file."))
    )
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.press("enter")
        [pane] = pane_list(app)
        await wait_until(pilot, all_finished(app))
        await pilot.pause()
        failed = pane.shown("failed")
        assert failed.startswith("1 tool call failed: Write out.txt")
        assert pane.answer.text == "I wrote the file."  # the answer stays clean
        await pilot.press("o")
        await wait_until(pilot, lambda: isinstance(app.screen, ActivityScreen))
        screen = app.screen
        table = screen.query_one(FittedTable)
        rows = [[str(cell) for cell in table.get_row_at(i)] for i in range(table.row_count)]
        assert [rows[0][0], *rows[0][2:]] == ["failed", "edit", "Write out.txt", "out.txt"]
        assert rows[1][0] == "completed" and rows[1][2:4] == ["read", "Read"]
        assert all(row[1].endswith(" s") for row in rows)  # how long each took
        counts = str(screen.query_one("#counts", Static).render())
        assert "2 tool calls (1 failed)" in counts and "thoughts 1" in counts and "plans 1" in counts
        assert "EACCES" in str(screen.query_one("#call-content", Static).render())
        await pilot.press("escape")
        await pilot.press("x")  # closed (the focus back in the prompt), reopened from the board
        await wait_until(pilot, lambda: not pane_list(app))
        app.main_screen.action_board()
        await wait_until(pilot, lambda: isinstance(app.screen, BoardScreen))
        await pilot.press("enter")
        await wait_until(pilot, lambda: len(pane_list(app)) == 1)
        [again] = pane_list(app)
        await pilot.pause()
        assert again.shown("failed").startswith("1 tool call failed")


# The ask dialog ----------------------------------------------------------------------------------


async def test_the_ask_dialog_opens_at_its_top_and_never_focuses_a_lasting_option() -> None:
    raw = json.dumps({"file_path": "proof.txt", "content": "line\n" * 60})
    app = SupervisorApp(
        settings(
            scripted_preset("claude", policy="ask", permission="allow_always_first", permission_raw=raw),
            prompt="write it",
        )
    )
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("enter")
        await wait_until(pilot, lambda: bool(app.asks))
        await pilot.press("a")
        await wait_until(pilot, lambda: isinstance(app.screen, PermissionScreen))
        await pilot.pause()
        screen = app.screen
        dialog = screen.query_one("#dialog")
        assert dialog.scroll_y == 0
        shown = dialog.content_region
        for part in ("#who", "#title", "#kind", "#asked-by"):
            assert shown.contains_region(screen.query_one(part).region), part
        assert "claude · r1·a1 asks permission" in str(screen.query_one("#who", Static).render())
        assert "policy ask" in str(screen.query_one("#asked-by", Static).render())
        focused = app.focused
        assert focused is not None and focused.name == "r1"  # `Reject` (reject_once), not the first
        labels = {button.name: str(button.label) for button in screen.query(".option").results()}  # type: ignore[attr-defined]
        assert "lasting" in labels["aa"] and "lasting" in labels["ra"] and "lasting" not in labels["a1"]
        await pilot.press("escape")
        await pilot.press("C", "y")
        await wait_until(pilot, all_finished(app))


async def test_the_ask_dialog_names_the_rule_that_asked(tmp_path: Path) -> None:
    config = write_config(
        tmp_path / "agents.toml",
        scripted_agent_toml("gem", "permission=normal", policy="mine")
        + f'[policy.mine]\ndefault = "reject"\n[[policy.mine.rule]]\nname = "{LONG_RULE}"\n'
        'action = "ask"\nkind = "edit"\n',
    )
    app = SupervisorApp(load_settings(config))
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.press("enter")
        await wait_until(pilot, lambda: bool(app.asks))
        assert app.asks[0].ask.rule == LONG_RULE
        await pilot.press("a")
        await wait_until(pilot, lambda: isinstance(app.screen, PermissionScreen))
        asked_by = str(app.screen.query_one("#asked-by", Static).render())
        assert asked_by == f"asked by rule {LONG_RULE} of policy mine"
        await pilot.press("1")  # Allow
        await wait_until(pilot, all_finished(app))
        [record] = pane_list(app)[0].attempt.permissions
        assert (record.decision, record.rule) == ("allow_once", f"{LONG_RULE} (asked)")


# Tables ------------------------------------------------------------------------------------------


def test_fitted_widths_keep_the_short_facts_and_share_the_rest() -> None:
    # decision 10, rule 40, title 60, options 30 (flexible: title, options), padding 2 per column
    assert fitted_widths([10, 40, 60, 30], {2, 3}, 200, padding=2) == [10, 40, 60, 30]
    assert fitted_widths([10, 40, 60, 30], {2, 3}, 100, padding=2) == [10, 40, 21, 21]
    assert fitted_widths([10, 40, 60, 8], {2, 3}, 100, padding=2) == [10, 40, 34, 8]
    assert fitted_widths([10, 40, 60, 30], {2, 3}, 40, padding=2) == [10, 40, 6, 6]  # then it scrolls


async def test_the_log_and_the_panel_never_cut_decision_rule_or_wait(tmp_path: Path) -> None:
    config = write_config(
        tmp_path / "agents.toml",
        scripted_agent_toml(
            "gem", "permission=normal", "permission_title=" + "Write a file " * 12, policy="mine"
        )
        + f'[policy.mine]\ndefault = "reject"\n[[policy.mine.rule]]\nname = "{LONG_RULE}"\n'
        'action = "allow"\nkind = "edit"\n',
    )
    app = SupervisorApp(load_settings(config))
    async with app.run_test(size=(160, 45)) as pilot:
        await one_round(app, pilot)
        for key, screen_class in (("l", PermissionLogScreen), ("P", PermissionsPanelScreen)):
            await pilot.press(key)
            await wait_until(pilot, lambda screen_class=screen_class: isinstance(app.screen, screen_class))  # type: ignore[misc]
            await pilot.pause()
            table = app.screen.query_one(FittedTable)
            shown = {
                str(column.label): column.get_render_width(table) - 2 for column in table.columns.values()
            }
            assert shown["decision"] >= len("allow_once (a1)" if key == "l" else "allow_once")
            assert shown["rule"] >= len(LONG_RULE) and shown["waited"] >= len("0.00 s")
            assert table.virtual_size.width <= table.size.width  # no sideways scroll: the title gave way
            assert shown["request"] < len("Write a file " * 12)
            await pilot.press("escape")
            await wait_until(pilot, lambda: app.screen is app.main_screen)


def test_policy_check_prints_whole_rule_names_beside_their_decisions_and_the_run() -> None:
    row = Row(
        "runs.jsonl:3 r1·a2",
        "claude",
        "edit",
        "Write proof.txt",
        Decision("allow_once", LONG_RULE),
        Decision("reject_once", "writes ask (ask: reject)"),
    )
    header, line, _ = text_table([row]).splitlines()
    assert header.split() == ["run", "agent", "kind", "title", "was", "by", "now", "by", "changed"]
    assert line.startswith("runs.jsonl:3 r1·a2  claude") and f"allow_once  {LONG_RULE}" in line
    assert "reject_once  writes ask (ask: reject)" in line and "((" not in line and "))" not in line


# The grid ----------------------------------------------------------------------------------------


async def test_panes_are_grouped_by_round_under_a_header_and_x_closes_the_finished() -> None:
    app = SupervisorApp(settings(scripted_preset("one"), scripted_preset("two"), prompt="first task\nmore"))
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("enter")
        await wait_until(pilot, all_finished(app))
        app.query_one(PromptArea).text = "second task"
        await pilot.press("slash", "enter")
        await wait_until(pilot, lambda: len(pane_list(app)) == 4 and all_finished(app)())
        boxes = list(app.query(RoundBox))
        headers = [str(box.query_one(".round-header", Static).render()) for box in boxes]
        assert headers == ["round 1 · first task", "round 2 · second task"]
        assert [[pane.attempt.round_no for pane in box.panes()] for box in boxes] == [[1, 1], [2, 2]]
        assert boxes[1].region.y > max(pane.region.bottom for pane in boxes[0].panes()) - 1
        await pilot.press("X")
        await wait_until(pilot, lambda: not pane_list(app))
        assert not app.query(RoundBox) and app.query("#welcome")
        assert len(app.session.attempts) == 4  # still in the session: the board and the export


async def test_x_keeps_the_live_panes() -> None:
    app = SupervisorApp(settings(scripted_preset("done"), scripted_preset("slow", forever=1)))
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("enter")
        await wait_until(
            pilot,
            lambda: (
                panes(app)["done"].attempt.result is not None and panes(app)["slow"].attempt.run is not None
            ),
        )
        await pilot.press("X")
        await wait_until(pilot, lambda: [pane.agent for pane in pane_list(app)] == ["slow"])
        assert app.focused is panes(app)["slow"]
        await pilot.press("C", "y")
        await wait_until(pilot, all_finished(app))


async def test_the_focused_pane_is_always_in_view() -> None:
    app = SupervisorApp(settings(*(scripted_preset(f"a{n}") for n in range(3)), prompt="one"))
    async with app.run_test(size=(80, 24)) as pilot:
        runs = app.main_screen.runs
        for round_no in (1, 2, 3):
            await pilot.press(*(("slash",) if round_no > 1 else ()), "enter")
            await wait_until(pilot, lambda round_no=round_no: len(pane_list(app)) == 3 * round_no)  # type: ignore[misc]
            await wait_until(pilot, all_finished(app))
            await pilot.pause()
            focused = app.focused
            assert isinstance(focused, RunPane) and focused.attempt.round_no == round_no
            assert runs.region.contains_region(focused.region)
        for _ in range(9):  # tab round every pane, from the newest round to the oldest and back
            await pilot.press("tab")
            await pilot.pause()
            focused = app.focused
            assert isinstance(focused, RunPane)
            visible = runs.region.intersection(focused.region)
            assert visible.height >= min(focused.region.height, runs.region.height) - 1


async def test_a_reopened_pane_keeps_its_title() -> None:
    app = SupervisorApp(settings(scripted_preset("fed", agent_info="fed-agent/Fed Agent/1.2.3")))
    async with app.run_test(size=(100, 30)) as pilot:
        [pane] = await one_round(app, pilot)
        assert "Fed Agent 1.2.3" in str(pane.border_title)
        await pilot.press("x")
        await wait_until(pilot, lambda: not pane_list(app))
        app.main_screen.action_board()
        await wait_until(pilot, lambda: isinstance(app.screen, BoardScreen))
        await pilot.press("enter")
        await wait_until(pilot, lambda: len(pane_list(app)) == 1)
        assert "Fed Agent 1.2.3" in str(pane_list(app)[0].border_title)


async def test_the_compare_view_follows_the_round_and_renders_markdown() -> None:
    app = SupervisorApp(
        settings(
            scripted_preset("fast", text="## Heading\n\nSome **bold** words."),
            scripted_preset("held", policy="ask", permission="normal", text="later"),
        )
    )
    async with app.run_test(size=(140, 44)) as pilot:
        await pilot.press("enter")
        await wait_until(pilot, lambda: panes(app)["fast"].attempt.result is not None and bool(app.asks))
        panes(app)["fast"].focus()
        await pilot.press("v")
        await wait_until(pilot, lambda: isinstance(app.screen, CompareScreen))
        screen = app.screen
        assert isinstance(screen, CompareScreen)
        assert "1 still running" in screen.title_text and screen.query_one(DataTable).row_count == 1
        [view] = screen.query(AnswerView)
        await wait_until(pilot, lambda: view.virtual_size.height > 0)
        lines = [view.render_line(y).text for y in range(view.virtual_size.height)]
        assert any("Heading" in line for line in lines) and not any(
            "##" in line or "**" in line for line in lines
        )
        app.driver.asks.answer(app.asks[0], "a1")  # the held run goes on, and ends
        await wait_until(pilot, all_finished(app))
        await wait_until(pilot, lambda: len(screen.query(AnswerView)) == 2)
        assert screen.query_one(DataTable).row_count == 2 and "still running" not in screen.title_text


# Words that are true -----------------------------------------------------------------------------


async def test_a_completed_run_whose_agent_outlives_stdin_says_nothing_of_sigterm() -> None:
    app = SupervisorApp(settings(scripted_preset("codex", linger=1, text="done"), scripted_preset("ok")))
    states: list[str] = []
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.press("enter")
        codex = panes(app)["codex"]
        while codex.attempt.result is None:
            states.append(codex.attempt.state)
            await pilot.pause(0.01)
        await pilot.pause()
        assert codex.attempt.result.ended_by == "sigterm" and codex.attempt.state == "completed"
        assert "cancelling" not in states  # never said to be stopping: it was done
        assert codex.shown("error") == ""


def test_ending_notes_speak_only_of_what_we_had_to_do() -> None:
    def note(reason: SubagentStopReason, ended_by: str, step: str = "") -> str:
        return ending_note(SubagentResult(reason, "", ended_by=ended_by), step)  # type: ignore[arg-type]

    assert note(SubagentStopReason.COMPLETED, "sigterm") == ""
    assert note(SubagentStopReason.REFUSAL, "exit") == ""
    assert note(SubagentStopReason.COMPLETED, "sigkill") == "killed after its turn (it ignored SIGTERM)"
    assert note(SubagentStopReason.ABORTED, "sigterm") == "ended by SIGTERM"
    assert note(SubagentStopReason.ABORTED, "sigkill") == "killed (ignored cancel)"
    assert note(SubagentStopReason.ERROR, "sigterm") == "ended by SIGTERM"
    assert note(SubagentStopReason.ERROR, "exit") == ""


async def test_a_request_pending_at_cancel_reads_as_what_happened() -> None:
    app = SupervisorApp(settings(scripted_preset("asker", policy="ask", permission="normal")))
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.press("enter")
        await wait_until(pilot, lambda: bool(app.asks))
        await pilot.press("c")
        await wait_until(pilot, all_finished(app))
        [pane] = pane_list(app)
        pane.feed.tick(final=True)
        stats = pane.shown("stats")
        assert "cancelled, the run stopped first: Write proof.txt" in stats
        assert "cancelled by cancelled" not in stats
        await pilot.press("l")
        await wait_until(pilot, lambda: isinstance(app.screen, PermissionLogScreen))
        table = app.screen.query_one(FittedTable)
        assert str(table.get_row_at(0)[1]) == "nothing: the run stopped first"


def test_costs_keep_their_significant_digits() -> None:
    assert [format_amount(a) for a in (0.0004, 0.00012345, 0.031, 1.5, 0.0, 12.345)] == [
        "0.0004",
        "0.00012",
        "0.03",
        "1.50",
        "0.00",
        "12.35",
    ]


async def test_a_pane_shows_a_small_cost_as_it_is() -> None:
    app = SupervisorApp(settings(scripted_preset("cheap", usage="1200/200000/0.0004/USD")))
    async with app.run_test(size=(100, 30)) as pilot:
        [pane] = await one_round(app, pilot)
        pane.feed.tick(final=True)
        assert pane.shown("usage") == "0.0004 USD · 1.2k/200k tok"


@pytest.mark.parametrize("tmux", [False, True])
async def test_y_says_where_the_answer_went(monkeypatch: pytest.MonkeyPatch, tmux: bool) -> None:
    if tmux:
        monkeypatch.setenv("TMUX", "/tmp/tmux-0/default,1,0")
    else:
        monkeypatch.delenv("TMUX", raising=False)
    app = SupervisorApp(settings(scripted_preset("one", text="four")))
    async with app.run_test(size=(100, 30), notifications=True) as pilot:
        await one_round(app, pilot)
        app.clear_notifications()
        await pilot.press("y")
        [note] = toasts(app)
        assert "4 characters" in note and "OSC 52" in note
        assert ("set-clipboard on" in note) is tmux


# Exports -----------------------------------------------------------------------------------------


async def test_exports_go_to_the_state_folder_never_the_working_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, acp_home: Path
) -> None:
    work = tmp_path / "checkout"
    work.mkdir()
    monkeypatch.chdir(work)
    app = SupervisorApp(settings(scripted_preset("one")))
    assert app.export_dir == paths.exports_dir() == acp_home / "state" / "exports"
    async with app.run_test(size=(100, 30), notifications=True) as pilot:
        await one_round(app, pilot)
        app.clear_notifications()
        await pilot.press("ctrl+s")
        [note] = toasts(app)
    assert not list(work.iterdir())
    written = sorted(path.name for path in app.export_dir.iterdir())
    assert len(written) == 3 and str(app.export_dir) in note


async def test_export_dir_in_the_config_names_the_folder(tmp_path: Path) -> None:
    config = write_config(
        tmp_path / "agents.toml", 'export_dir = "exports-here"\n' + scripted_agent_toml("one")
    )
    app = SupervisorApp(load_settings(config))
    assert app.export_dir == tmp_path / "exports-here"
    async with app.run_test(size=(100, 30)) as pilot:
        await one_round(app, pilot)
        await pilot.press("ctrl+s")
    assert len(list((tmp_path / "exports-here").glob("acp-tui-*"))) == 3


async def test_the_palettes_screenshot_saves_in_the_state_folder_or_says_why_not(
    monkeypatch: pytest.MonkeyPatch, acp_home: Path
) -> None:
    """Textual saves into ~/Downloads, which need not exist: `Failed to save screenshot`, no more."""
    monkeypatch.setenv("HOME", str(acp_home / "no-such-home"))
    app = SupervisorApp(settings(scripted_preset("one")))
    async with app.run_test(size=(100, 30), notifications=True) as pilot:
        [command] = [c for c in app.get_system_commands(app.screen) if c.title == "Screenshot"]
        command.callback()
        await wait_until(pilot, lambda: bool(toasts(app)))
        [saved] = list(paths.screenshots_dir().glob("acp-tui-*.svg"))
        assert toasts(app) == [f"Screenshot saved: {saved.with_suffix('')}.svg"]
        assert "<svg" in saved.read_text()
        app.clear_notifications()
        app.deliver_screenshot(path=str(saved))  # a file where the folder should be
        await wait_until(pilot, lambda: bool(toasts(app)))
        [note] = toasts(app)
        assert note.startswith(f"Screenshot not saved in {saved}: ") and "Not a directory" in note


# F2 ----------------------------------------------------------------------------------------------


async def test_f2_by_keyboard_shows_the_focus_and_enter_applies() -> None:
    app = SupervisorApp(settings(scripted_preset("one"), scripted_preset("two")))
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("f2")
        await wait_until(pilot, lambda: isinstance(app.screen, AgentsScreen))
        screen = app.screen
        policy = app.focused
        assert isinstance(policy, Choice) and policy.value == "reject"
        assert screen.query_one("#agent-0").has_pseudo_class("focus-within")
        await pilot.press("space")  # opens the menu: Enter there picks, it does not apply
        await wait_until(pilot, lambda: policy.expanded)
        await pilot.press("down", "enter")
        await wait_until(pilot, lambda: not policy.expanded)
        assert policy.value == "allow" and isinstance(app.screen, AgentsScreen)
        await pilot.press("tab")  # the sandbox box of the same row
        assert app.focused is screen.query_one("#sandbox-0", Toggle)
        await pilot.press("space", "enter")
        await wait_until(pilot, lambda: not isinstance(app.screen, AgentsScreen))
        assert app.next_runs.policies == {"one": "allow", "two": "reject"}
        assert app.next_runs.sandboxes == {"one": "workspace", "two": "none"}


async def test_a_reload_that_changes_a_policy_wins_over_an_earlier_f2_choice(tmp_path: Path) -> None:
    config = tmp_path / "agents.toml"
    write_config(config, scripted_agent_toml("one") + scripted_agent_toml("two"))
    app = SupervisorApp(load_settings(config))
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        app.next_runs.policies.update(one="allow", two="allow")  # as F2 would
        write_config(config, scripted_agent_toml("one", policy="allow-once") + scripted_agent_toml("two"))
        app.clear_notifications()
        await pilot.press("ctrl+r")
        await wait_until(pilot, lambda: any("Config reloaded" in note for note in toasts(app)))
        # The file changed one, not two.
        assert app.next_runs.policies == {"one": "allow-once", "two": "allow"}
        [note] = [note for note in toasts(app) if "Config reloaded" in note]
        assert "the file's policy wins over F2's: one allow-once (not allow)" in note


# The demo -------------------------------------------------------------------------------------


async def test_the_demo_agents_session_close_writes_no_warning(tmp_path: Path) -> None:
    from acp_tui import AcpSubagentProvider, SubagentRequest
    from tests.helpers import demo

    provider = AcpSubagentProvider(demo("pong"))
    try:
        run = await provider.start(SubagentRequest("ping", cwd=str(tmp_path)), abort=None)
        result = await run.result()
    finally:
        await provider.aclose()
    assert result.stop_reason is SubagentStopReason.COMPLETED
    assert not [line for line in result.stderr_tail if "Warning" in line], result.stderr_tail
