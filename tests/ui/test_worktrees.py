"""Isolated rounds in the app: real git in temporary repositories, the real demo agents that edit.

The app runs in a checkout (the test's cwd); the worktrees live under a temporary user cache dir.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import Button, Static

from acp_tui.settings import paths
from acp_tui.ui.app import SupervisorApp
from acp_tui.ui.screens.compare_screen import ApplyConfirmScreen, CompareScreen
from acp_tui.ui.widgets.prompt_area import PromptArea
from acp_tui.ui.widgets.run_pane import RunPane
from acp_tui.ui.widgets.toggle import Toggle
from acp_tui.workspace.worktrees import Isolation, find_origin
from tests.helpers import git, our_live_processes
from tests.ui.helpers import all_finished, click_cancel, demo_preset, panes, settings, wait_until

SIZE = (160, 40)
PROMPT = "edit README.md, create new.txt"


@pytest.fixture
def cache_home() -> Path:
    """Where our worktrees go (the test's own folders: tests/conftest.py)."""
    return paths.worktrees_dir()


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The app's cwd: a checkout with a committed README and one uncommitted change of the user's."""
    root = tmp_path / "checkout"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    (root / "README.md").write_text("# Project\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "first")
    (root / "scratch.txt").write_text("the user's own, not committed\n")
    monkeypatch.chdir(root)
    return root


def worktrees_of(repo: Path) -> list[str]:
    listing = git(repo, "worktree", "list", "--porcelain")
    return [line.split(" ", 1)[1] for line in listing.splitlines() if line.startswith("worktree ")]


def checkout_files(repo: Path) -> dict[str, str]:
    return {
        str(p.relative_to(repo)): p.read_text()
        for p in sorted(repo.rglob("*"))
        if p.is_file() and ".git" not in p.parts
    }


def two_editors(prompt: str = PROMPT) -> SupervisorApp:
    return SupervisorApp(
        settings(demo_preset("editor", "edit"), demo_preset("creator", "create"), prompt=prompt)
    )


def worktree_line(pane: RunPane) -> str:
    return pane.shown("worktree").splitlines()[0]


async def isolated_round(pilot: Pilot[None], app: SupervisorApp) -> dict[str, RunPane]:
    await pilot.press("ctrl+g")
    assert app.query_one("#worktree", Toggle).value
    await pilot.press("enter")
    await wait_until(pilot, all_finished(app))
    return panes(app)


async def test_an_isolated_round_ends_with_each_runs_own_diff_and_an_untouched_checkout(repo: Path) -> None:
    before = checkout_files(repo)
    app = two_editors()
    async with app.run_test(size=SIZE) as pilot:
        found = await isolated_round(pilot, app)
        editor, creator = found["editor"], found["creator"]
        assert editor.attempt.state == creator.attempt.state == "completed"
        assert editor.attempt.worktree is not None and creator.attempt.worktree is not None
        assert editor.attempt.worktree.path != creator.attempt.worktree.path
        edited = editor.attempt.worktree.change
        created = creator.attempt.worktree.change
        assert edited is not None and edited.stat is not None and created is not None and created.stat
        assert (edited.stat.files, edited.stat.insertions, edited.stat.deletions) == (1, 5, 0)
        assert "README.md" in (edited.diff or "") and "new.txt" not in (edited.diff or "")
        assert "new.txt" in (created.diff or "") and "README.md" not in (created.diff or "")
        assert "scratch.txt" not in (edited.diff or "")  # uncommitted: not carried
        assert "changed 1 file +5 -0" in worktree_line(editor)
        assert "changed 1 file +1 -0" in worktree_line(creator)
        assert checkout_files(repo) == before
        assert len(worktrees_of(repo)) == 3  # the checkout and the two runs'

        records = {r.name: r.model_dump(mode="json") for r in app.session.records()}
        assert records["editor"]["diff_stat"] == {"files": 1, "insertions": 5, "deletions": 0}
        assert records["editor"]["base"] == git(repo, "rev-parse", "HEAD").strip()
        assert records["creator"]["worktree"] == str(creator.attempt.worktree.path)
        assert isinstance(records["creator"]["first_chunk_s"], float)

        app.export_dir = repo.parent
        await pilot.press("ctrl+s")
        await pilot.pause()
        exported = [json.loads(line) for line in next(repo.parent.glob("*.jsonl")).read_text().splitlines()]
        assert [r["diff_stat"]["files"] for r in exported] == [1, 1]
        assert "new.txt" in exported[1]["diff"]
        report = next(repo.parent.glob("*-compare.md")).read_text()
        assert "| Files changed |" in report and "```diff" in report and "1 (+5 -0)" in report

        await app.action_quit()
    assert worktrees_of(repo) == [str(repo)]
    assert not our_live_processes()


async def test_the_pane_says_where_it_works_and_what_it_leaves_behind(repo: Path) -> None:
    app = SupervisorApp(
        settings(demo_preset("slow", "edit", "--delay", "0.2", "--chunks", "50"), prompt="edit a.txt")
    )
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("ctrl+g", "enter")
        pane = panes(app)["slow"]
        await wait_until(pilot, lambda: pane.attempt.worktree is not None and pane.attempt.run is not None)
        line = worktree_line(pane)
        assert line.startswith("fresh worktree at HEAD ") and line.endswith(
            ", uncommitted changes not carried"
        )
        assert "are not carried" in pane.shown("worktree").splitlines()[1]  # where, and Origin.note
        await wait_until(pilot, lambda: (Path(pane.attempt.worktree.cwd) / "a.txt").exists())  # type: ignore[union-attr]
        await click_cancel(pilot, pane)  # cancelled mid-edit: the partial diff
        await wait_until(pilot, all_finished(app))
        change = pane.attempt.worktree.change  # type: ignore[union-attr]
        assert change is not None and change.stat is not None and change.stat.files == 1
        assert not (repo / "a.txt").exists()


async def test_v_shows_the_rounds_compare_view_and_a_applies_the_chosen_diff(repo: Path) -> None:
    app = two_editors()
    async with app.run_test(size=SIZE) as pilot:
        found = await isolated_round(pilot, app)
        found["creator"].focus()
        await pilot.press("v")
        await wait_until(pilot, lambda: isinstance(app.screen, CompareScreen))
        screen = app.screen
        assert isinstance(screen, CompareScreen)
        assert [r.name for r in screen.records] == ["editor", "creator"]
        assert screen.chosen == 1  # the pane's own row
        assert "new.txt" in screen.query_one("#diff-view", Static).content.code  # type: ignore[union-attr]

        await pilot.press("a")  # never at once: a confirm, its focus on Cancel
        await wait_until(pilot, lambda: isinstance(app.screen, ApplyConfirmScreen))
        assert app.screen.focused is app.screen.query_one("#no", Button)
        await pilot.press("enter")  # the focused answer: Cancel
        await wait_until(pilot, lambda: not isinstance(app.screen, ApplyConfirmScreen))
        assert not (repo / "new.txt").exists()

        await pilot.press("v", "a")
        await wait_until(pilot, lambda: isinstance(app.screen, ApplyConfirmScreen))
        await pilot.press("y")
        await wait_until(pilot, lambda: (repo / "new.txt").exists())
        assert (repo / "README.md").read_text() == "# Project\n"  # only the chosen run's change


async def test_a_conflicting_diff_is_refused_with_the_file_listed(repo: Path) -> None:
    app = two_editors()
    async with app.run_test(size=SIZE) as pilot:
        found = await isolated_round(pilot, app)
        (repo / "README.md").write_text("# Another project\n")  # the user changed the same line
        git(repo, "commit", "-qam", "theirs")
        before = checkout_files(repo)
        found["editor"].focus()
        await pilot.press("A")
        await wait_until(pilot, lambda: isinstance(app.screen, ApplyConfirmScreen))
        await pilot.press("y")
        await wait_until(pilot, lambda: any("Not applied" in n.message for n in app._notifications))
        refusal = next(n.message for n in app._notifications if "Not applied" in n.message)
        assert "conflicts" in refusal and "README.md" in refusal
        assert checkout_files(repo) == before


async def test_closing_a_pane_removes_its_worktree_and_k_keeps_one(repo: Path, cache_home: Path) -> None:
    app = two_editors()
    async with app.run_test(size=SIZE) as pilot:
        found = await isolated_round(pilot, app)
        editor, creator = found["editor"], found["creator"]
        closed = editor.attempt.worktree
        kept = creator.attempt.worktree
        assert closed is not None and kept is not None
        editor.focus()
        await pilot.press("x")
        await wait_until(pilot, lambda: closed.removed and not closed.path.exists())
        assert str(closed.path) not in worktrees_of(repo)

        creator.focus()
        await pilot.press("k")
        assert kept.kept and "worktree kept" in worktree_line(creator)
        await app.action_quit()
    assert kept.path.is_dir() and str(kept.path) in worktrees_of(repo)
    kept.keep(False)
    git(repo, "worktree", "remove", "--force", str(kept.path))


async def test_a_cwd_outside_git_is_one_line_and_nothing_is_spawned(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    outside = tmp_path / "not-a-repo"
    outside.mkdir()
    monkeypatch.chdir(outside)
    app = two_editors()
    async with app.run_test(size=SIZE) as pilot:
        app.query_one(PromptArea).text = "edit x.txt"
        await isolated_round(pilot, app)
        for pane in panes(app).values():
            assert pane.attempt.state == "error"
            assert pane.attempt.run is None  # nothing spawned
            assert (
                pane.attempt.result is not None
                and pane.attempt.result.error == f"no worktree: {outside} is not in a git repository"
            )
        assert any("is not in a git repository" in n.message for n in app._notifications)
        assert not list(outside.iterdir())


async def test_a_live_isolated_run_closed_or_quit_leaves_no_worktree_and_no_process(repo: Path) -> None:
    app = SupervisorApp(
        settings(
            demo_preset("closed", "edit", "--delay", "0.2", "--chunks", "50"),
            demo_preset("quit", "edit", "--delay", "0.2", "--chunks", "50"),
            prompt="edit a.txt",
        )
    )
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("ctrl+g", "enter")
        closed, quit_ = panes(app)["closed"], panes(app)["quit"]
        await wait_until(
            pilot,
            lambda: all(
                p.attempt.worktree is not None and (p.attempt.worktree.cwd / "a.txt").exists()
                for p in (closed, quit_)
            ),
        )
        worktree = closed.attempt.worktree
        assert worktree is not None
        closed.focus()
        await pilot.press("x")  # live: disposed, its partial change recorded, its worktree removed
        await wait_until(pilot, lambda: len(worktrees_of(repo)) == 2)  # in the background
        assert worktree.removed and not worktree.path.exists()
        assert worktree.change is not None and worktree.change.stat is not None
        assert worktree.change.stat.files == 1
        await app.action_quit()
    assert worktrees_of(repo) == [str(repo)]
    assert not (repo / "a.txt").exists()
    assert not our_live_processes()


async def test_the_first_isolated_round_prunes_what_a_crash_left_and_r_stays_isolated(
    repo: Path, cache_home: Path
) -> None:
    crashed = Isolation()  # another acp-tui that died without cleaning up: its lock is gone
    left = await crashed.add(await find_origin(repo), "left")
    assert crashed._lock is not None
    os.close(crashed._lock)
    assert str(left.path) in worktrees_of(repo)

    app = SupervisorApp(settings(demo_preset("editor", "edit"), prompt="edit a.txt"))
    async with app.run_test(size=SIZE) as pilot:
        found = await isolated_round(pilot, app)
        assert not left.path.exists() and str(left.path) not in worktrees_of(repo)
        first = found["editor"]
        first.focus()
        await pilot.press("ctrl+g", "r")  # the box off: a re-run stays isolated as its attempt was
        await wait_until(pilot, lambda: len(app.query(RunPane)) == 2 and all_finished(app)())
        again = next(p for p in app.query(RunPane) if p is not first)
        assert again.attempt.worktree is not None and again.attempt.worktree.change is not None
        assert again.attempt.worktree.path != first.attempt.worktree.path  # type: ignore[union-attr]
        await app.action_quit()
    assert worktrees_of(repo) == [str(repo)]
