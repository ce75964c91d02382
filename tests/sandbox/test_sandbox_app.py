"""The sandbox in the app: the prompt bar's box (ctrl+b), the choice per agent in F2, the pane and
the record saying so, and quitting ending a daemon left inside."""

from __future__ import annotations

import sys
import uuid
from pathlib import Path

import pytest

from acp_tui.settings.schema import AgentPreset
from acp_tui.ui import keys
from acp_tui.ui.app import SupervisorApp
from acp_tui.ui.screens.policy_screen import PolicyScreen
from acp_tui.ui.widgets.prompt_bar import PromptBar
from acp_tui.ui.widgets.toggle import Toggle
from tests.helpers import git
from tests.sandbox.procs import alive, by_command_line
from tests.sandbox.support import TRYING_AGENT, need_bwrap, outcomes, tries
from tests.ui.helpers import all_finished, panes, settings, wait_until

pytestmark = pytest.mark.usefixtures("confined")


@pytest.fixture
def confined() -> None:
    need_bwrap()


def agent(name: str, cwd: Path) -> AgentPreset:
    return AgentPreset(name, sys.executable, (TRYING_AGENT,), cwd=str(cwd))


async def test_ctrl_b_confines_every_agent_of_the_next_round_and_the_pane_and_record_say_so(
    tmp_path: Path,
) -> None:
    app = SupervisorApp(settings(agent("one", tmp_path), agent("two", tmp_path), prompt=tries(["procs"])))
    rows = [row for _, section in keys.help_sections() for row in section]
    assert ("ctrl+b", "sandbox on / off: every agent of the next rounds confined by bubblewrap") in rows
    async with app.run_test(size=(160, 40)) as pilot:
        await pilot.press("ctrl+b")
        assert app.query_one("#sandbox", Toggle).value
        await pilot.press("enter")
        await wait_until(pilot, all_finished(app))
        for pane in panes(app).values():
            assert outcomes(pane.attempt.result.output) == ["ok:2"]  # type: ignore[union-attr]
            assert "sandbox" in str(pane.border_subtitle)
        assert [record.sandbox for record in app.session.records()] == ["workspace", "workspace"]
        await pilot.press("ctrl+b")  # off: the presets' own word again
        await pilot.press("slash", "enter")
        await wait_until(pilot, lambda: len(app.session.records()) == 4)
        assert [record.sandbox for record in app.session.records()][2:] == ["none", "none"]


async def test_f2_confines_one_agent_and_not_the_other(tmp_path: Path) -> None:
    app = SupervisorApp(settings(agent("one", tmp_path), agent("two", tmp_path), prompt=tries(["procs"])))
    async with app.run_test(size=(160, 40)) as pilot:
        await pilot.press("f2")
        await wait_until(pilot, lambda: isinstance(app.screen, PolicyScreen))
        app.screen.query_one("#sandbox-1", Toggle).value = True
        app.screen.query_one("#apply").press()
        await wait_until(pilot, lambda: not isinstance(app.screen, PolicyScreen))
        app.main_screen.query_one(PromptBar).focus_prompt()
        await pilot.press("enter")
        await wait_until(pilot, all_finished(app))
        said = {pane.agent: outcomes(pane.attempt.result.output)[0] for pane in panes(app).values()}  # type: ignore[union-attr]
        assert said["two"] == "ok:2" and said["one"] != "ok:2"
        assert {r.name: r.sandbox for r in app.session.records()} == {"one": "none", "two": "workspace"}


async def test_quitting_the_app_ends_a_daemon_left_inside(tmp_path: Path) -> None:
    tag = f"acp-tui-daemon-{uuid.uuid4().hex}"
    prompt = tries(["daemon", tag, str(tmp_path / "ready"), ["orphan", "hidden"]], ["hold"])
    app = SupervisorApp(settings(agent("one", tmp_path), prompt=prompt))
    async with app.run_test(size=(160, 40)) as pilot:
        await pilot.press("ctrl+b", "enter")
        await wait_until(pilot, lambda: len(by_command_line(tag)) == 1)
        (daemon,) = by_command_line(tag)
        await app.action_quit()
    assert not alive(daemon)


async def test_a_confined_run_in_a_worktree_commits_in_its_own_git_and_never_sees_the_main_config(
    tmp_path: Path,
) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    (repo / "README.md").write_text("main\n")
    git(repo, "add", "README.md")
    git(repo, "commit", "-qm", "base")
    config = (repo / ".git" / "config").read_bytes()
    steps = [
        ("write", f"{repo}/.git/config"),
        ("write", "new.txt"),
        ("run", "git", "add", "new.txt"),
        ("run", "git", "-c", "user.name=a", "-c", "user.email=a@b.invalid", "commit", "-qm", "inside"),
    ]
    app = SupervisorApp(settings(agent("one", repo), prompt=tries(*steps)))
    async with app.run_test(size=(160, 40)) as pilot:
        await pilot.press("ctrl+g", "ctrl+b", "enter")
        await wait_until(pilot, all_finished(app))
        (pane,) = panes(app).values()
        # (Its write of the config lands in its private /tmp, where tmp_path lies.)
        assert outcomes(pane.attempt.result.output)[1:] == ["ok", "ok:0:", "ok:0:"]  # type: ignore[union-attr]
        worktree = pane.attempt.worktree
        assert worktree is not None
        assert (
            git(repo, f"--git-dir={worktree.own_git_dir()}", "log", "-1", "--format=%s").strip() == "inside"
        )
        await app.action_quit()
    assert (repo / ".git" / "config").read_bytes() == config


async def test_a_rerun_of_a_confined_attempt_is_confined_too(tmp_path: Path) -> None:
    app = SupervisorApp(settings(agent("one", tmp_path), prompt=tries(["procs"])))
    async with app.run_test(size=(160, 40)) as pilot:
        await pilot.press("ctrl+b", "enter")
        await wait_until(pilot, all_finished(app))
        await pilot.press("ctrl+b")  # off: for the next rounds, not for a re-run of this one
        await pilot.press("r")
        await wait_until(pilot, lambda: len(app.session.records()) == 2)
        assert [record.sandbox for record in app.session.records()] == ["workspace", "workspace"]
        assert [outcomes(record.output) for record in app.session.records()] == [["ok:2"], ["ok:2"]]
