"""The compare view, pushed directly on a bare app: the table, answers side by side, the diff."""

from __future__ import annotations

from typing import Any

from rich.syntax import Syntax
from rich.text import Text
from textual.app import App
from textual.widgets import DataTable, Static

from acp_tui.reports.records import RunRecord, read_record
from acp_tui.ui.screens.compare_screen import CompareScreen
from acp_tui.ui.widgets.answer_view import AnswerView

SIZE = (160, 50)


def record(name: str, output: str, diff: str | None, **fields: Any) -> RunRecord:
    return read_record(
        {
            "name": name,
            "command": ["agent"],
            "prompt": "Fix it",
            "stop_reason": "completed",
            "output": output,
            "hidden": {"tool_call": 1},
            "permissions": [{"decision": "allow_once"}],
            "duration_s": 2.0,
            "first_chunk_s": 0.5,
            "worktree": "/w" if diff is not None else None,
            "base": "abc" if diff is not None else None,
            "diff": diff,
            "diff_stat": {"files": 1, "insertions": 1, "deletions": 0} if diff else None,
            "diff_truncated": False,
            **fields,
        }
    )


RECORDS = [
    record("first [b]bold[/b]", "# Answer one\n\x1b[31mred", "diff --git a/f b/f\n+one\n"),
    record("second", "Answer two", "diff --git a/g b/g\n+two\n"),
    record("plain", "Answer three", None),
]


class Host(App[None]):
    def __init__(self) -> None:
        super().__init__()
        self.results: list[int | None] = []

    def on_mount(self) -> None:
        self.push_screen(CompareScreen(RECORDS, focused=0, title="Round 1"), self.results.append)


def shown_diff(app: App[None]) -> Any:
    return app.screen.query_one("#diff-view", Static).content


async def test_the_table_answers_and_the_focused_rows_diff() -> None:
    app = Host()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, CompareScreen)
        table = screen.query_one("#runs", DataTable)
        assert table.row_count == 3
        first = [str(cell) for cell in table.get_row_at(0)]
        assert first[0] == "1. first [b]bold[/b]"  # the name stays text, never markup
        assert first[1:] == ["completed", "2.00 s", "—", "—", "1/1/0", "1 (+1 -0)", "0.50 s", "1"]
        answers = [view.text for view in screen.query(AnswerView)]  # drawn as Markdown, escapes visible
        assert answers == ["# Answer one\n\\x1b[31mred", "Answer two", "Answer three"]
        diff = shown_diff(app)
        assert isinstance(diff, Syntax) and "+one" in diff.code
        assert screen.query(".answer")[0].has_class("focused")

        await pilot.press("down")
        diff = shown_diff(app)
        assert isinstance(diff, Syntax) and "+two" in diff.code
        assert screen.query(".answer")[1].has_class("focused")

        await pilot.press("down")
        diff = shown_diff(app)
        assert isinstance(diff, Text) and "not isolated" in diff.plain

        await pilot.press("a")  # nothing to apply: a warning, and the view stays
        await pilot.pause()
        assert app.screen is screen and app.results == []

        await pilot.press("up", "a")
        await pilot.pause()
        assert app.results == [1]


class Narrow(App[None]):
    """At 80x24: the chosen run's answer and diff, a follow-up's turn, an error where no answer."""

    def on_mount(self) -> None:
        records = [
            *RECORDS,
            record("second", "", None, turn=2, stop_reason="error", error="agent exited with code 1: boom"),
        ]
        self.push_screen(CompareScreen(records, focused=3, title="Round 1"))


async def test_at_80x24_the_chosen_runs_answer_is_the_one_shown_and_every_cell_is_whole() -> None:
    app = Narrow()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        screen = app.screen
        table = screen.query_one("#runs", DataTable)
        shown = [box for box in screen.query(".answer") if box.display]
        assert len(shown) == 2 and shown[-1].has_class("focused")  # the chosen, with one beside it
        assert "4. second t2" in str(screen.query_one("#diff").border_title)
        said = str(shown[-1].query_one(".no-answer", Static).render())
        assert said == "(no answer) agent exited with code 1: boom"
        assert [column.label.plain for column in table.ordered_columns][:7] == [
            "run", "stop", "total", "cost", "tokens", "a/✓/✗", "files"
        ]  # fmt: skip
        assert table.virtual_size.width <= table.scrollable_content_region.width  # nothing cut at the edge
        assert screen.query_one("#answers").size.height >= 8  # more than a two-line box
        footer = {binding.binding.description for binding in screen.active_bindings.values()}
        assert {"Close", "Apply diff"} <= footer and "Board" not in footer  # its own keys, not the grid's
        await pilot.press("up", "up", "up")
        shown = [box for box in screen.query(".answer") if box.display]
        assert shown[0].has_class("focused") and "1. first" in str(screen.query_one("#diff").border_title)


async def test_escape_closes_with_nothing_chosen() -> None:
    app = Host()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("escape")
        await pilot.pause()
        assert app.results == [None]
