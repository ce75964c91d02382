"""How a pane shows the run events of the shared contract that the core emits as its work lands
(`Stopping`, `UsageReported`, `SessionStarted`), and a run gone silent.

The run here is a stand-in at the UI's seam (the `SubagentRun` protocol), fed event by event: it
speaks no protocol; the core's own tests drive real children.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable

import pytest

from acp_tui.core.model import (
    AgentInfo,
    Cost,
    Finished,
    OutputDelta,
    SessionStarted,
    StatusChanged,
    Stopping,
    SubagentResult,
    SubagentStopReason,
    Usage,
    UsageReported,
)
from acp_tui.session.attempts import Attempt, AttemptEvent
from acp_tui.ui.app import SupervisorApp
from acp_tui.ui.summary import SILENT_AFTER
from acp_tui.ui.widgets.run_pane import RunPane
from acp_tui.ui.widgets.status_badge import STATE_COLOURS
from tests.ui.helpers import all_finished, border_colour, scripted_preset, settings, wait_until


def feeder(app: SupervisorApp, attempt: Attempt) -> Callable[[AttemptEvent], None]:
    """Events as the driver passes them on: the attempt follows each, then its pane gets it."""

    def feed(event: AttemptEvent) -> None:
        if isinstance(event, Finished):
            attempt.result, attempt.phase = event.result, "ended"
        else:
            app.driver._follow(attempt, event)
        attempt.events.push(event)
        app.driver._changed(attempt)

    return feed


async def test_stop_steps_usage_and_agent_info_show_on_the_pane() -> None:
    preset = scripted_preset("fed")
    app = SupervisorApp(settings(preset))

    async with app.run_test(size=(150, 40)) as pilot:
        [attempt] = app.session.new_round("the task", [preset], {"fed": "reject"})
        pane = RunPane(attempt, app.driver)
        await app.query_one("#runs").mount(pane)
        feed = feeder(app, attempt)

        def error_line() -> str:
            return pane.shown("error")

        feed(StatusChanged("prompting"))
        feed(SessionStarted(AgentInfo("fed-agent", "Fed Agent", "1.2.3"), {}))
        feed(UsageReported(Usage(1234, 200_000, Cost(0.031, "USD"))))
        feed(OutputDelta("partial"))
        await wait_until(
            pilot, lambda: pane.shown("state") == "prompting" and "Fed Agent" in str(pane.border_title)
        )
        pane.tick()
        assert pane.shown("usage").strip() == "0.03 USD · 1.2k/200k tok"
        assert "Fed Agent 1.2.3" in str(pane.border_title)

        pane.attempt.last_output_at = time.monotonic() - SILENT_AFTER - 30
        pane.tick()
        assert pane.shown("clock").startswith("silent 4")

        feed(Stopping("cancel-sent"))
        await wait_until(pilot, lambda: pane.shown("state") == "cancelling")
        assert error_line() == "cancelling" and border_colour(pane) == STATE_COLOURS["cancelling"]
        feed(Stopping("sigterm"))
        await wait_until(pilot, lambda: error_line() == "sent SIGTERM")
        feed(Stopping("sigkill"))
        await wait_until(pilot, lambda: error_line() == "killed (ignored cancel)")
        result = SubagentResult(SubagentStopReason.ABORTED, "partial", error="timed out", ended_by="sigkill")
        feed(Finished(result))
        await wait_until(pilot, lambda: error_line().startswith("timed out"))  # the end shown
        assert pane.shown("state") == "cancelled"  # the screen's one word for `aborted`, whoever stopped it
        assert error_line() == "timed out · killed (ignored cancel)"


async def test_a_failed_run_names_the_line_that_explains_and_offers_its_stderr() -> None:
    cause = "Error: loading /home/u/.codex/config.toml: Read-only file system (os error 30)"
    frame = "             at ./misc/../sysdeps/unix/sysv/linux/x86_64/clone3.S:81:0"
    app = SupervisorApp(
        settings(scripted_preset("codex", stderr=cause, exit=1, exit_at="prompt", exit_message=frame))
    )
    async with app.run_test(size=(120, 30)) as pilot:
        await pilot.press("enter")
        await wait_until(pilot, all_finished(app))
        [pane] = app.query(RunPane)
        assert (
            pane.attempt.result is not None
            and pane.attempt.result.error == f"agent exited with code 1: {cause}"
        )
        shown = pane.shown("error")
        assert "e: its stderr (the last 2 lines)" in shown and "Read-only file system" in shown


async def test_a_remote_agents_pane_says_where_it_runs() -> None:
    preset = dataclasses.replace(scripted_preset("far"), remote="ssh://dev@build-1:2222")
    app = SupervisorApp(settings(preset))

    async with app.run_test(size=(150, 40)) as pilot:
        [attempt] = app.session.new_round("the task", [preset], {"far": "reject"})
        pane = RunPane(attempt, app.driver)
        await app.query_one("#runs").mount(pane)
        await wait_until(pilot, lambda: str(pane.border_title) == "far @ dev@build-1")
        feeder(app, attempt)(SessionStarted(AgentInfo("far-agent", "Far Agent", "1.2.3"), {}))
        await wait_until(pilot, lambda: str(pane.border_title) == "far @ dev@build-1 · Far Agent 1.2.3")


async def test_a_tick_that_changes_nothing_asks_nothing_of_the_screen(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The screen's clock ticks every pane five times a second, and the clock shows whole seconds:
    a tick with nothing new to show does not ask whether the pane is in sight (a walk up its
    ancestors, sixteen panes at a time)."""
    from acp_tui.ui.widgets import run_pane

    preset = scripted_preset("fed")
    app = SupervisorApp(settings(preset))
    asked: list[RunPane] = []
    in_sight = RunPane.in_sight

    def counted(pane: RunPane) -> bool:
        asked.append(pane)
        return in_sight(pane)

    monkeypatch.setattr(RunPane, "in_sight", counted)
    monkeypatch.setattr(run_pane, "format_seconds", lambda seconds, live=False: "7 s")  # a clock that stays
    async with app.run_test(size=(150, 40)) as pilot:
        [attempt] = app.session.new_round("the task", [preset], {"fed": "reject"})
        pane = RunPane(attempt, app.driver)
        await app.query_one("#runs").mount(pane)
        feed = feeder(app, attempt)
        feed(StatusChanged("prompting"))
        await wait_until(pilot, lambda: pane.shown("state") == "prompting")
        pane.tick()
        assert pane.shown("clock") == "7 s"
        asked.clear()
        for _ in range(5):
            pane.tick()
        assert asked == []
        feed(UsageReported(Usage(1234, 200_000, Cost(0.031, "USD"))))
        pane.tick()  # something new: shown, as the pane is in sight
        assert (pane.shown("usage").strip(), set(asked)) == ("0.03 USD · 1.2k/200k tok", {pane})
