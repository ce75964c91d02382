"""In the app: a secret the agent wrote into a file is masked in every view and export of the
record, and applying from the app still writes the exact change (from the live worktree)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from textual.widgets import Static

from acp_tui.settings.schema import AgentPreset
from acp_tui.ui.app import SupervisorApp
from acp_tui.ui.screens.compare_screen import ApplyConfirmScreen, CompareScreen
from tests.containment.support import GIT_AGENT
from tests.helpers import git, our_live_processes
from tests.ui.helpers import all_finished, panes, settings, wait_until

TOKEN = "tok-5e8d1b07-never-on-screen"


@pytest.fixture
def checkout(repo: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    git(repo, "stash", "-q")  # a clean checkout at HEAD: the run's change applies as it is
    monkeypatch.chdir(repo)
    return repo


async def test_a_secret_in_a_diff_is_masked_in_views_and_exports_but_applied_exactly(checkout: Path) -> None:
    script = 'echo "token = $SERVICE_TOKEN" > settings.ini'
    preset = AgentPreset(
        "leaker", sys.executable, (GIT_AGENT, script), env={"SERVICE_TOKEN": TOKEN}, isolation="worktree"
    )
    app = SupervisorApp(settings(preset, prompt="configure it"))
    async with app.run_test(size=(160, 40)) as pilot:
        await pilot.press("enter")
        await wait_until(pilot, all_finished(app))
        pane = panes(app)["leaker"]
        change = pane.attempt.worktree.change  # type: ignore[union-attr]
        assert change is not None and TOKEN in (change.diff or "")  # the live worktree's, never shown

        [record] = app.session.records()
        assert record.diff_masked is True and record.diff is not None and TOKEN not in record.diff
        assert "+token = ***" in record.diff

        app.export_dir = checkout.parent
        await pilot.press("ctrl+s")
        await pilot.pause()
        exported = [p for p in checkout.parent.iterdir() if p.is_file() and p.suffix in (".jsonl", ".md")]
        assert len(exported) == 3
        for path in exported:
            assert TOKEN not in path.read_text(), path

        pane.focus()
        await pilot.press("v")
        await wait_until(pilot, lambda: isinstance(app.screen, CompareScreen))
        shown = app.screen.query_one("#diff-view", Static).content.code  # type: ignore[union-attr]
        assert TOKEN not in shown and "***" in shown
        await pilot.press("a")
        await wait_until(pilot, lambda: isinstance(app.screen, ApplyConfirmScreen))
        await pilot.press("y")
        await wait_until(pilot, lambda: (checkout / "settings.ini").exists())
        assert (checkout / "settings.ini").read_text() == f"token = {TOKEN}\n"
        await app.action_quit()
    assert not our_live_processes()
