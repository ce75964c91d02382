"""Untrusted text is text, in the app (in the style of Harlequin's `test_rich_markup`).

A hostile agent whose every string is markup-like (`[/]`, `[@click=...]`, `[bold red]`),
escape-laden (OSC title and clipboard, clear screen, device status report, bidi override) and
surrogate-bearing, under a hostile name from the config: the app keeps running, and shows every
string literally, with control characters as visible escapes, in every place it shows one.
"""

from __future__ import annotations

import sys
from pathlib import Path

from textual.widgets import Button

from acp_tui.settings.schema import AgentPreset
from acp_tui.ui.app import SupervisorApp
from acp_tui.ui.screens.board_screen import BoardScreen
from acp_tui.ui.screens.permission_log_screen import PermissionLogScreen
from acp_tui.ui.screens.permission_screen import PermissionScreen
from acp_tui.ui.screens.policy_screen import PolicyScreen
from acp_tui.ui.widgets.run_pane import RunPane
from tests.ui.helpers import all_finished, pane_lines, panes, settings, wait_until

HOSTILE_AGENT = str(Path(__file__).with_name("hostile_agent.py"))
NAME = "[b]evil[/] [@click=app.quit]x \x1b]0;t\x07"
SIZE = (160, 50)
RAW = ("\x1b", "\x07", "\u202e", "\ud800")  # what must never reach the screen as it is


def hostile(stage: str = "error", policy: str = "ask") -> AgentPreset:
    return AgentPreset(NAME, sys.executable, (HOSTILE_AGENT, f"stage={stage}"), policy=policy)


def screen_text(app: SupervisorApp) -> str:
    """Every character on the screen, as the terminal would receive it (before styling)."""
    return "\n".join(strip.text for strip in app.screen._compositor.render_strips())


def assert_literal(shown: str) -> None:
    for raw in RAW:
        assert raw not in shown, f"{raw!r} reached the screen raw"


async def test_a_hostile_agent_is_shown_literally_everywhere(tmp_path: Path) -> None:
    app = SupervisorApp(settings(hostile()))
    app.export_dir = tmp_path
    async with app.run_test(size=SIZE) as pilot:
        welcome = screen_text(app)
        assert "[b]evil[/] [@click=app.quit]x \\x1b]0;t\\x07" in welcome
        assert_literal(welcome)
        await pilot.press("enter")
        pane = next(iter(panes(app).values()))
        await wait_until(pilot, lambda: pane.attempt.state == "needs-you")
        assert pane.has_focus  # the request took no key and no focus
        assert "1 request needs you (a)" in app.sub_title
        link = "[@click=app.screenshot('f','/tmp/x')]click me[/]"
        await wait_until(pilot, lambda: link in screen_text(app))  # the answer is drawn at the next paint
        shown = screen_text(app)
        assert "\\x1b]52;c;cHduZWQ=\\x07" in shown and "\\u202eevil" in shown and "surrogate" in shown
        assert_literal(shown)

        await pilot.press("a")
        await wait_until(pilot, lambda: isinstance(app.screen, PermissionScreen))
        dialog = screen_text(app)
        assert "title [/] [@click=app.screenshot('f','/tmp/x')]click me[/] [bold red]red[/]" in dialog
        # The lone surrogate: as a visible escape, or as U+FFFD where the core replaced it already.
        assert "lone\\ud800surrogate" in dialog or "lone\ufffdsurrogate" in dialog
        assert (
            "content [/]" in dialog and "1. allow [/] [@click=" in dialog and "2. reject \\x1b]0;" in dialog
        )
        assert_literal(dialog)
        focused = app.focused
        assert isinstance(focused, Button) and focused.name == "r1"  # nothing approving preselected
        await pilot.press("enter")
        await wait_until(pilot, all_finished(app))

        assert pane.attempt.state == "error"
        error = pane.shown("error")
        assert "error [/] [@click=app.screenshot('f','/tmp/x')]click me[/]" in error
        # A click on the error line runs nothing (markup off: no action in its style).
        row = next(y for y, line in enumerate(pane_lines(pane)) if "click me" in line)
        await pilot.click(pane, offset=(4, 1 + row))
        assert not Path("/tmp/x").exists() or not any(Path("/tmp/x").glob("f*"))
        await pilot.press("e")
        stderr = pane.shown("stderr")
        assert "stderr: [/] [@click=" in stderr and "\\x1b[2J \\x1b[6n" in stderr
        assert_literal(stderr)
        final = screen_text(app)
        assert "got " in final and "reject" in final
        assert_literal(final)

        await pilot.press("l")
        await wait_until(pilot, lambda: isinstance(app.screen, PermissionLogScreen))
        log = screen_text(app)
        assert "reject_once (r1)" in log and "title [/] [@click=" in log
        assert_literal(log)
        await pilot.press("escape")

        await pilot.press("b")
        await wait_until(pilot, lambda: isinstance(app.screen, BoardScreen))
        board = screen_text(app)
        assert "[b]evil[/]" in board and " error " in board
        assert_literal(board)
        await pilot.press("escape")

        await pilot.press("f2")
        await wait_until(pilot, lambda: isinstance(app.screen, PolicyScreen))
        policies = screen_text(app)
        assert "[b]evil[/] [@click=app.quit]x \\x1b]0;t\\x07" in policies
        assert_literal(policies)
        await pilot.press("escape")

        await pilot.press("ctrl+s")  # a lone surrogate in every field: written, not raised
        await pilot.pause()
        md = next(tmp_path.glob("*[0-9].md")).read_text(encoding="utf-8")
        jsonl = next(tmp_path.glob("*.jsonl")).read_text(encoding="utf-8")
        # The permission title's lone surrogate (or the core's U+FFFD for it): written, not raised.
        assert "lone\\ud800surrogate" in md or "lone\ufffdsurrogate" in md
        assert "lone\\ud800surrogate" in jsonl or "lone\ufffdsurrogate" in jsonl
        assert app.is_running and isinstance(app.screen.query_one("#runs"), object)
        assert [p for p in app.query(RunPane)] == [pane]


async def test_a_hostile_agent_in_an_allow_policy_run_completes_literally() -> None:
    app = SupervisorApp(settings(hostile("complete", policy="allow")))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("enter")
        await wait_until(pilot, all_finished(app))
        pane = next(iter(panes(app).values()))
        assert pane.attempt.state == "completed"
        shown = screen_text(app)
        assert "allow_once by allow: title [/] [@click=" in shown  # the decision and rule first
        assert_literal(shown)
