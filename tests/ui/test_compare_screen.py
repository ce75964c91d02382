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
        assert first[-1] == "1 (+1 -0)" and first[-2] == "1/1/0"
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


async def test_escape_closes_with_nothing_chosen() -> None:
    app = Host()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("escape")
        await pilot.pause()
        assert app.results == [None]
