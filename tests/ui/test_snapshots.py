"""The layout, pinned by snapshots. Timings are the only moving parts, and they are fixed here."""

from __future__ import annotations

from typing import Any

from textual.pilot import Pilot
from textual.widgets import Input, Static

from acp_tui.config import AgentPreset
from acp_tui.ui.app import SupervisorApp
from acp_tui.ui.screens.permission_screen import PermissionScreen
from acp_tui.ui.widgets.answer_view import AnswerView
from tests.ui.helpers import all_finished, panes, scripted_preset, settings, wait_until

SIZE = (150, 36)


def freeze_clocks(app: SupervisorApp) -> None:
    """Stop what moves with time: pane clocks and the prompt's blinking cursor."""
    for pane in panes(app).values():
        pane.ticker.pause()
        pane.query_one("#elapsed", Static).update("1.0 s")
    app.query_one("#prompt", Input).cursor_blink = False


def three_endings() -> SupervisorApp:
    return SupervisorApp(
        settings(
            scripted_preset(
                "finished",
                text="## Done\n\nThe answer, with a list:\n\n- one\n- two\n",
                chunks=6,
                hidden=1,
                permission="normal",
            ),
            scripted_preset("aborted", text="A partial answer", forever=1, delay=30),
            scripted_preset("failed", text="Half an answer", exit=3, exit_at="prompt"),
            prompt="Compare three endings",
        )
    )


def test_welcome_before_the_first_round(snap_compare: Any) -> None:
    async def settle(pilot: Pilot[None]) -> None:
        freeze_clocks(app)
        await pilot.pause()

    # Nothing is spawned before Enter; commands without local paths keep the picture portable.
    app = SupervisorApp(
        settings(
            AgentPreset("alpha", "alpha-agent", ("--acp",)),
            AgentPreset("beta", "npx", ("some-acp-agent",), policy="allow"),
        )
    )
    assert snap_compare(app, terminal_size=SIZE, run_before=settle)


def test_finished_aborted_and_failed_panes(snap_compare: Any) -> None:
    app = three_endings()

    async def play(pilot: Pilot[None]) -> None:
        await pilot.press("enter")
        aborted = panes(app)["aborted"]
        await wait_until(pilot, lambda: aborted.query_one(AnswerView).text == "A partial answer")
        await aborted.action_cancel()
        await wait_until(pilot, all_finished(app))
        freeze_clocks(app)
        await pilot.pause()

    assert snap_compare(app, terminal_size=SIZE, run_before=play)


def test_the_ask_modal(snap_compare: Any) -> None:
    app = SupervisorApp(settings(scripted_preset("asker", policy="ask", permission="allow_always_first")))

    async def ask(pilot: Pilot[None]) -> None:
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, PermissionScreen))
        freeze_clocks(app)
        await pilot.pause()

    assert snap_compare(app, terminal_size=SIZE, run_before=ask)
