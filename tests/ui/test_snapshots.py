"""The layout, pinned by snapshots at 80x24 and 200x50. Timings are the only moving parts, and they
are fixed here (pane clocks, the board's times, the prompt's cursor)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from textual.pilot import Pilot

from acp_tui.settings.schema import AgentPreset
from acp_tui.ui.app import SupervisorApp
from acp_tui.ui.screens import activity_screen, board_screen, permission_log_screen
from acp_tui.ui.screens.activity_screen import ActivityScreen
from acp_tui.ui.screens.board_screen import BoardScreen
from acp_tui.ui.screens.help_screen import HelpScreen
from acp_tui.ui.screens.permission_log_screen import PermissionLogScreen
from acp_tui.ui.screens.permission_screen import PermissionScreen
from acp_tui.ui.screens.policy_screen import PolicyScreen
from acp_tui.ui.widgets.choice import Choice
from acp_tui.ui.widgets.prompt_area import PromptArea
from tests.ui.helpers import all_finished, demo_preset, panes, scripted_preset, settings, wait_until
from tests.ui.test_untrusted_text import hostile, screen_text

SIZES = {"80x24": (80, 24), "200x50": (200, 50)}


@pytest.fixture(autouse=True)
def fixed_board_times(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(board_screen, "format_seconds", lambda seconds, live=False: "1.0 s")
    monkeypatch.setattr(permission_log_screen, "at_text", lambda seconds: "0.50 s")
    monkeypatch.setattr(activity_screen, "format_seconds", lambda seconds, live=False: "0.1 s")


def freeze_clocks(app: SupervisorApp) -> None:
    """Stop what moves with time: pane clocks and the prompt's blinking cursor."""
    if app.main_screen.ticker is not None:  # the panes' clocks (there once the screen is mounted)
        app.main_screen.ticker.pause()
    for pane in panes(app).values():
        # Set, and kept when a pane's first paint reads its clock (under a dialog, maybe only now).
        pane.feed._clock = lambda: "1.0 s"  # type: ignore[method-assign]
        pane.feed.content.show_head(replace(pane.feed.content.head, clock="1.0 s"))
    app.query_one(PromptArea).cursor_blink = False


def every_ending() -> SupervisorApp:
    return SupervisorApp(
        settings(
            scripted_preset(
                "finished",
                text="## Done\n\nThe answer, with a list:\n\n- [x] one\n- [ ] two\n",
                chunks=6,
                hidden=1,
                permission="normal",
            ),
            scripted_preset("cancelled", text="A partial answer", forever=1, delay=30),
            scripted_preset("failed", text="Half an answer", exit=3, exit_at="prompt"),
            scripted_preset("cut", stop="max_tokens", text="Cut short"),
            scripted_preset("shy", stop="refusal", text="No."),
            scripted_preset("asker", policy="ask", permission="normal"),
            prompt="Compare the endings\nwith a second line",
        )
    )


async def settle_every_ending(app: SupervisorApp, pilot: Pilot[None]) -> None:
    await pilot.press("enter")
    found = panes(app)
    cancelled = found["cancelled"]
    await wait_until(pilot, lambda: cancelled.answer.text == "A partial answer")
    cancelled.action_cancel()
    # Ended, and painted so (a finished pane's clock stops once it shows its result).
    await wait_until(
        pilot, lambda: all(p.attempt.result and not p.ticking for n, p in found.items() if n != "asker")
    )
    await wait_until(pilot, lambda: found["asker"].attempt.state == "needs-you")
    found["finished"].focus()
    app.clear_notifications()
    freeze_clocks(app)
    await pilot.pause()


@pytest.mark.parametrize("size", SIZES)
def test_welcome_before_the_first_round(snap_compare: Any, size: str) -> None:
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
    assert snap_compare(app, terminal_size=SIZES[size], run_before=settle)


@pytest.mark.parametrize("size", SIZES)
def test_the_grid_with_every_ending(snap_compare: Any, size: str) -> None:
    app = every_ending()

    async def play(pilot: Pilot[None]) -> None:
        await settle_every_ending(app, pilot)

    assert snap_compare(app, terminal_size=SIZES[size], run_before=play)


@pytest.mark.parametrize("size", SIZES)
def test_the_board(snap_compare: Any, size: str) -> None:
    app = every_ending()

    async def play(pilot: Pilot[None]) -> None:
        await settle_every_ending(app, pilot)
        await pilot.press("b")
        await wait_until(pilot, lambda: isinstance(app.screen, BoardScreen))
        await pilot.pause()

    assert snap_compare(app, terminal_size=SIZES[size], run_before=play)


@pytest.mark.parametrize("size", SIZES)
def test_the_help_screen(snap_compare: Any, size: str) -> None:
    app = every_ending()

    async def play(pilot: Pilot[None]) -> None:
        await settle_every_ending(app, pilot)
        await pilot.press("question_mark")
        await wait_until(pilot, lambda: isinstance(app.screen, HelpScreen))
        await pilot.pause()

    assert snap_compare(app, terminal_size=SIZES[size], run_before=play)


@pytest.mark.parametrize("size", SIZES)
def test_each_dialog_after_the_others_keeps_its_own_style(snap_compare: Any, size: str) -> None:
    """The ask dialog, then the permission log, the policies, the board and the help, then the ask
    dialog again: the last looks as the first did (no dialog's CSS reaches another)."""
    app = every_ending()

    async def play(pilot: Pilot[None]) -> None:
        await settle_every_ending(app, pilot)
        for key, screen in (
            ("a", PermissionScreen),
            ("l", PermissionLogScreen),
            ("f2", PolicyScreen),
            ("b", BoardScreen),
            ("question_mark", HelpScreen),
        ):
            await pilot.press(key)
            await wait_until(pilot, lambda screen=screen: isinstance(app.screen, screen))  # type: ignore[misc]
            await pilot.press("escape")
            await wait_until(pilot, lambda screen=screen: not isinstance(app.screen, screen))  # type: ignore[misc]
        await pilot.press("a")
        await wait_until(pilot, lambda: isinstance(app.screen, PermissionScreen))
        await pilot.pause()

    assert snap_compare(app, terminal_size=SIZES[size], run_before=play)


@pytest.mark.parametrize("size", SIZES)
def test_f2_with_a_choice_open(snap_compare: Any, size: str) -> None:
    """F2 after a round: each agent's policy, sandbox and the options its session offered, the mode
    of the first agent open (its menu under its line, on the current value)."""
    app = SupervisorApp(settings(demo_preset("pong", "pong"), scripted_preset("plain"), prompt="hi"))

    async def play(pilot: Pilot[None]) -> None:
        await pilot.press("enter")
        await wait_until(pilot, all_finished(app))
        freeze_clocks(app)
        await pilot.press("f2")
        await wait_until(pilot, lambda: isinstance(app.screen, PolicyScreen))
        next(choice for choice in app.screen.query(Choice) if choice.name == "option-0-0").focus()
        await pilot.press("space")
        await pilot.pause()

    assert snap_compare(app, terminal_size=SIZES[size], run_before=play)


@pytest.mark.parametrize("size", SIZES)
def test_the_permission_log_after_the_ask_dialog(snap_compare: Any, size: str) -> None:
    app = every_ending()

    async def play(pilot: Pilot[None]) -> None:
        await settle_every_ending(app, pilot)
        await pilot.press("a")
        await wait_until(pilot, lambda: isinstance(app.screen, PermissionScreen))
        await pilot.press("escape")
        await pilot.press("l")
        await wait_until(pilot, lambda: isinstance(app.screen, PermissionLogScreen))
        await pilot.pause()

    assert snap_compare(app, terminal_size=SIZES[size], run_before=play)


@pytest.mark.parametrize("size", SIZES)
def test_seven_agents_in_sight_before_the_first_round(snap_compare: Any, size: str) -> None:
    """Every send-to box on screen, checked (`X`) or not (blank); the intro's keys act in the prompt."""
    names = ("claude", "codex", "gemini", "vibe", "opencode", "kimi", "ts")
    app = SupervisorApp(settings(*(AgentPreset(name, f"{name}-acp", policy="ask") for name in names)))

    async def settle(pilot: Pilot[None]) -> None:
        await pilot.press("tab", "tab", "tab", "tab", "space")  # claude unchecked, its box focused
        freeze_clocks(app)
        await pilot.pause()

    assert snap_compare(app, terminal_size=SIZES[size], run_before=settle)


@pytest.mark.parametrize("size", SIZES)
def test_the_ask_dialog_opens_at_its_top(snap_compare: Any, size: str) -> None:
    raw = '{"file_path": "proof.txt", "content": "' + "a line of the new file\\n" * 40 + '"}'
    app = SupervisorApp(
        settings(
            scripted_preset("claude", policy="ask", permission="allow_always_first", permission_raw=raw),
            prompt="Write proof.txt",
        )
    )

    async def play(pilot: Pilot[None]) -> None:
        await pilot.press("enter")
        await wait_until(pilot, lambda: bool(app.asks))
        # Before the dialog: under it is the grid's last frame (dimmed once), its clock as it was then.
        freeze_clocks(app)
        await wait_until(pilot, lambda: "1.0 s" in screen_text(app))
        await pilot.press("a")
        await wait_until(pilot, lambda: isinstance(app.screen, PermissionScreen))
        app.clear_notifications()
        await pilot.pause()

    assert snap_compare(app, terminal_size=SIZES[size], run_before=play)


@pytest.mark.parametrize("size", SIZES)
def test_a_failed_tool_call_and_the_runs_activity(snap_compare: Any, size: str) -> None:
    app = SupervisorApp(
        settings(
            scripted_preset("gemini", failed_tool="Write out.txt", hidden=1, text="I wrote the file."),
            scripted_preset("other", text="fine"),
            prompt="Write out.txt",
        )
    )

    async def play(pilot: Pilot[None]) -> None:
        await pilot.press("enter")
        await wait_until(pilot, lambda: all(p.attempt.result is not None for p in panes(app).values()))
        freeze_clocks(app)
        await pilot.press("o")
        await wait_until(pilot, lambda: isinstance(app.screen, ActivityScreen))
        await pilot.pause()

    assert snap_compare(app, terminal_size=SIZES[size], run_before=play)


def test_a_hostile_agent_is_shown_literally(snap_compare: Any) -> None:
    app = SupervisorApp(settings(hostile("error", policy="allow")))

    async def play(pilot: Pilot[None]) -> None:
        await pilot.press("enter")
        await wait_until(pilot, lambda: all(p.attempt.result is not None for p in panes(app).values()))
        await pilot.press("e")
        app.clear_notifications()
        freeze_clocks(app)
        await pilot.pause()

    assert snap_compare(app, terminal_size=(120, 36), run_before=play)
