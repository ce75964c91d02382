"""Issue 26, items 1 and 6: a confined agent never writes what the user's git trusts.

In a worktree (`--worktree --sandbox`), the agent follows its `.git` file to the main repository
and tries to delete its objects, move `main` and plant config, hooks and other worktrees' files:
all out of reach, while its own commits land in a git directory of its own and the recorded diff
is whole. In a plain checkout (`--sandbox`, no worktree), it commits into the checkout, but its
`.git` keeps config, hooks, info, the submodules' and worktrees' git directories read-only, and
neither `commondir` nor `config.worktree` can be made to send the user's git elsewhere.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from acp_tui.process.sandbox import SandboxError, confine
from acp_tui.settings import paths
from tests.helpers import git
from tests.sandbox.support import acp_tui_run, answer, need_bwrap, outcomes, outside_tmp, tries, trying

pytestmark = pytest.mark.usefixtures("confined")

COMMIT = ("run", "git", "-c", "user.name=a", "-c", "user.email=a@b.invalid", "commit", "-qm", "inside")


@pytest.fixture
def confined() -> None:
    need_bwrap()


@contextlib.contextmanager
def repository(where: str, tmp_path: Path) -> Iterator[Path]:
    """A repository with two commits on `main`, a loose object or two, a worktree of the user's own
    (`other`) and a submodule's git directory (`.git/modules/sub`), under /var/tmp or /tmp."""
    with outside_tmp("acp-tui-repo-") if where == "/var/tmp" else contextlib.nullcontext(tmp_path) as outside:
        repo = outside / "repo"
        repo.mkdir()
        git(repo, "init", "-q", "-b", "main")
        for text in ("one", "two"):
            (repo / "README.md").write_text(f"{text}\n")
            git(repo, "add", "README.md")
            git(repo, "commit", "-qm", text)
        git(repo, "worktree", "add", "-q", str(outside / "other"))
        (repo / ".git" / "modules" / "sub").mkdir(parents=True)
        (repo / ".git" / "modules" / "sub" / "config").write_text("[core]\n")
        yield repo


def untouched(repo: Path) -> dict[str, object]:
    """What the user's git trusts in `repo`: history, refs, config, hooks, the other worktree's entry."""
    common = repo / ".git"
    return {
        "log": git(repo, "log", "--format=%H %s", "main"),
        "refs": git(repo, "for-each-ref"),
        "config": (common / "config").read_bytes(),
        "hooks": sorted(os.listdir(common / "hooks")),
        "other": sorted(os.listdir(common / "worktrees" / "other")),
        "module": (common / "modules" / "sub" / "config").read_bytes(),
    }


@pytest.mark.parametrize("where", ["/var/tmp", "/tmp"])  # under /tmp, the private /tmp hides it first
def test_a_worktree_run_cannot_touch_the_main_repositorys_history_and_still_commits(
    tmp_path: Path, where: str
) -> None:
    with repository(where, tmp_path) as repo:
        common = repo / ".git"
        before = untouched(repo)
        home = repo.parent / "home"  # acp-tui's own folders
        steps = [
            ("run", "sh", "-c", f"rm -rf {common}/objects/*"),
            ("write", f"{common}/refs/heads/main"),
            ("write", f"{common}/packed-refs"),
            ("write", f"{common}/logs/HEAD"),
            ("write", f"{common}/HEAD"),
            ("write", f"{common}/config"),
            ("write", f"{common}/hooks/post-commit"),
            ("write", f"{common}/worktrees/other/commondir"),
            ("run", "git", "--git-dir", str(common), "update-ref", "refs/heads/main", "HEAD"),
            ("write", f"{repo}/README.md"),
            ("read", f"{repo}/README.md"),
            ("write", "new.txt"),
            ("run", "git", "add", "new.txt"),
            COMMIT,
            ("run", "git", "update-ref", "refs/heads/main", "HEAD"),  # its own main
            ("run", "git", "config", "core.fsmonitor", "touch /tmp/pwned"),  # its own config
        ]
        done = subprocess.run(
            [*acp_tui_run(tries(*steps), repo), "--worktree", "--keep-worktrees", "--format", "json"],
            capture_output=True,
            text=True,
            env={**os.environ, paths.HOME_VARIABLE: str(home)},
            timeout=60,
        )
        assert done.returncode == 0, done.stderr
        record = json.loads(done.stdout)
        said = outcomes(record["output"])
        assert said[0].startswith("ok:") and not said[0].startswith("ok:0:"), said[0]  # rm failed
        # Nothing of the repository but its objects is there, nor of the main checkout (under /tmp,
        # a write lands in its private /tmp: what the host has is checked below).
        if where == "/var/tmp":
            assert all(outcome.startswith("error:") for outcome in [*said[1:8], said[9]]), said
        assert said[8].startswith("ok:") and not said[8].startswith("ok:0:"), said[8]
        assert said[10] in ("error:ENOENT", "ok:written by the agent\n")  # never the checkout's
        assert said[11:] == ["ok", "ok:0:", "ok:0:", "ok:0:", "ok:0:"]
        assert untouched(repo) == before
        for check in (["fsck", "--strict"], ["gc", "--quiet"], ["-C", str(repo.parent / "other"), "status"]):
            assert subprocess.run(["git", *check], cwd=repo, capture_output=True).returncode == 0, check
        assert record["diff_stat"] == {"files": 1, "insertions": 1, "deletions": 0}
        assert "new.txt" in record["diff"]
        admin = common / "worktrees" / Path(record["worktree"]).name
        assert git(repo, f"--git-dir={admin}/agent", "log", "-1", "--format=%s").strip() == "inside"
        assert git(Path(record["worktree"]), "log", "-1", "--format=%s").strip() == "two"  # ours: the base


@pytest.mark.parametrize("cwd", ["top", "sub"])
async def test_a_plain_checkout_run_commits_but_cannot_plant_what_the_users_git_runs(
    tmp_path: Path, cwd: str
) -> None:
    with repository("/var/tmp", tmp_path) as repo:
        common = repo / ".git"
        before = untouched(repo)
        (repo / "sub").mkdir()
        steps = [
            ("write", f"{common}/config"),
            ("write", f"{common}/hooks/pre-commit"),
            ("write", f"{common}/info/exclude"),
            ("write", f"{common}/commondir"),
            ("write", f"{common}/config.worktree"),
            ("write", f"{common}/modules/sub/config"),
            ("write", f"{common}/worktrees/other/commondir"),
            ("run", "mv", str(common), f"{repo}/.git-moved"),
            ("run", "git", "config", "core.fsmonitor", "touch pwned"),
            ("run", "git", "config", "--worktree", "core.hooksPath", "planted"),
            ("write", "new.txt"),
            ("run", "git", "add", "new.txt"),
            COMMIT,
        ]
        said = await answer(trying(), steps, repo if cwd == "top" else repo / "sub")
        assert said[:7] == ["error:EROFS"] * 7
        assert all(outcome.startswith("ok:") and not outcome.startswith("ok:0:") for outcome in said[7:10]), (
            said
        )
        assert said[10:] == ["ok", "ok:0:", "ok:0:"]
        assert git(repo, "log", "-1", "--format=%s").strip() == "inside"  # its commit landed
        after = untouched(repo)
        assert after["log"] != before["log"] and after["refs"] != before["refs"]
        assert {key: after[key] for key in ("config", "hooks", "other", "module")} == {
            key: before[key] for key in ("config", "hooks", "other", "module")
        }
        assert not (common / "commondir").exists() and not (common / "config.worktree").exists()
        assert not (repo / ".git-moved").exists()
        assert git(repo, "status", "--porcelain") == ""


def test_a_stand_in_stays_while_a_run_holds_it_and_goes_with_the_last(tmp_path: Path) -> None:
    """Two runs in one checkout share `commondir`'s stand-in: the first to end leaves it to the other."""
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    stand_in = repo / ".git" / "commondir"
    first = confine("true", [], cwd=str(repo), env=os.environ)
    second = confine("true", [], cwd=str(repo), env=os.environ)
    assert stand_in.read_text() == ".\n"
    assert git(repo, "rev-parse", "--git-dir").strip() == ".git"  # git reads it as its own directory
    first.close()
    assert stand_in.exists()
    second.close()
    second.close()
    assert not stand_in.exists()


def test_a_git_folder_that_is_a_link_is_refused_in_one_line(tmp_path: Path) -> None:
    """A link the agent could replace by a `.git` of its own: no confinement could keep it."""
    repo, elsewhere = tmp_path / "repo", tmp_path / "elsewhere"
    for folder in (repo, elsewhere):
        folder.mkdir()
    git(elsewhere, "init", "-q")
    (repo / ".git").symlink_to(elsewhere / ".git")
    with pytest.raises(SandboxError) as refused:
        confine("true", [], cwd=str(repo), env=os.environ)
    assert str(refused.value) == f"sandbox: {repo}/.git is a link, which a confined agent could replace"
