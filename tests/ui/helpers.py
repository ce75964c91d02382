"""Driving the app in tests: settings from scripted/demo agents, and waiting on conditions."""

from __future__ import annotations

import sys
from collections.abc import Callable

from textual.pilot import Pilot

from acp_tui.settings.schema import AgentPreset, Settings
from acp_tui.ui.app import SupervisorApp
from acp_tui.ui.widgets.run_pane import RunPane
from tests.helpers import SCRIPTED_AGENT


def scripted_preset(name: str, policy: str = "reject", **options: object) -> AgentPreset:
    args = (SCRIPTED_AGENT, *(f"{key}={value}" for key, value in options.items()))
    return AgentPreset(name, sys.executable, args, policy=policy)


def demo_preset(name: str, persona: str, *extra: str, policy: str = "reject") -> AgentPreset:
    args = ("-m", "acp_tui.demo.agent", "--persona", persona, *extra)
    return AgentPreset(name, sys.executable, args, policy=policy)


def settings(*presets: AgentPreset, prompt: str = "hello", warm: bool = False) -> Settings:
    """The app's settings for these presets; no spares (warm starts) unless a test is about them,
    so that the processes a test counts are its runs'."""
    return Settings(presets=presets, prompt=prompt, warm=warm)


async def wait_until(pilot: Pilot[None], condition: Callable[[], bool]) -> None:
    """Let the app run until `condition` holds. No deadline of its own: the test's timeout is the
    only clock (a loaded machine is slow, not wrong)."""
    while not condition():
        await pilot.pause(0.02)


def border_colour(pane: RunPane) -> str:
    """The colour of the pane's border (its state's), as `#rrggbb`."""
    return pane.styles.border_top[1].hex.lower()


async def click_cancel(pilot: Pilot[None], pane: RunPane) -> None:
    """Click the pane's Cancel, at the right end of its header row (inside the border and padding)."""
    await pilot.click(pane, offset=(pane.region.width - 6, 1))


def pane_lines(pane: RunPane) -> list[str]:
    """The pane's rows as painted (inside its border)."""
    return [pane.render_line(y).text for y in range(pane.content_region.height)]


def panes(app: SupervisorApp) -> dict[str, RunPane]:
    return {pane.agent: pane for pane in app.query(RunPane)}


def ended(pane: RunPane) -> bool:
    """The pane has shown its run's end (the run's result is set before the pane's worker takes it)."""
    return pane.attempt.result is not None and not pane.ticking


def all_finished(app: SupervisorApp) -> Callable[[], bool]:
    return lambda: bool(app.query(RunPane)) and all(ended(p) for p in app.query(RunPane))
