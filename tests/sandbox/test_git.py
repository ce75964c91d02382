"""Issue 26, items 1 and 6: a confined agent never writes what the user's git trusts.

In a worktree (`--worktree --sandbox`), the agent follows its `.git` file to the main repository
and tries to delete its objects, move `main` and plant config, hooks and other worktrees' files:
all out of reach, while its own commits land in a git directory of its own and the recorded diff
is whole. In a plain checkout (`--sandbox`, no worktree), it commits too, on a git directory of its
own: the user's `.git` is never written, and the user's git sees the files it changed and obeys
nothing it planted.
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
async def test_a_plain_checkout_run_commits_on_a_git_directory_of_its_own_and_the_users_stays_as_it_was(
    tmp_path: Path, cwd: str
) -> None:
    """It commits, branches, configures and leaves what it likes in the `.git` it sees, which is its
    own: the user's keeps its history, refs, index, config and hooks, holds no unfinished rebase,
    and the user's git shows every file the agent changed and runs nothing of the agent's."""
    with repository("/var/tmp", tmp_path) as repo:
        common = repo / ".git"
        work = repo if cwd == "top" else repo / "sub"
        work.mkdir(exist_ok=True)
        (work / "tracked.txt").write_text("the user's\n")
        git(repo, "add", ".")
        git(repo, "commit", "-qm", "three")
        before = {**untouched(repo), "index": (common / "index").read_bytes()}
        planted = repo.parent / "pwned"  # out of the agent's sight: only a git of the user's makes it
        steps = [
            ("run", "git", "config", "alias.st", f"!touch {planted}"),
            ("run", "git", "config", "core.fsmonitor", f"touch {planted} #"),
            ("run", "sh", "-c", f"rm -rf {common}/borrowed/*"),  # the user's objects
            ("write", f"{common}/modules/sub/config"),
            ("write", "tracked.txt"),
            ("run", "git", "update-index", "--skip-worktree", "tracked.txt"),  # hidden from git status
            ("run", "git", "init", "-q", "nested"),
            ("run", "git", "-C", "nested", "config", "core.fsmonitor", f"touch {planted} #"),
            ("run", "git", "-C", "nested", *COMMIT[2:], "--allow-empty"),
            ("run", "git", "add", "nested"),  # a gitlink: the user's git status would run its fsmonitor
            ("run", "mkdir", "-p", f"{common}/rebase-merge"),
            ("put", f"{common}/rebase-merge/git-rebase-todo", f"exec touch {planted}\n"),
            ("write", "new.txt"),
            ("run", "git", "add", "new.txt"),
            COMMIT,
            ("run", "git", "checkout", "-qb", "its-own"),
            ("run", "git", "branch", "-qD", "main"),
        ]
        said = await answer(trying(), steps, work)
        assert said[:2] == ["ok:0:", "ok:0:"], said
        assert said[2].startswith("ok:") and not said[2].startswith("ok:0:"), said[2]  # read-only
        assert said[3] == "error:EROFS"
        assert all(outcome == "ok" or outcome.startswith("ok:0:") for outcome in said[4:]), said
        assert {**untouched(repo), "index": (common / "index").read_bytes()} == before
        assert not (common / "rebase-merge").exists() and not (common / "borrowed").exists()
        status = git(repo, "status", "--porcelain")  # the user's git, as the user runs it
        git(repo, "diff")
        at = "" if cwd == "top" else "sub/"
        assert status.splitlines() == [f" M {at}tracked.txt", f"?? {at}nested/", f"?? {at}new.txt"]
        assert not planted.exists()


def test_its_own_git_directory_goes_with_the_run(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    before = sorted(os.listdir(repo / ".git"))
    confinement = confine("true", [], cwd=str(repo), env=os.environ)
    (own,) = confinement.own_git_dirs
    assert os.path.isdir(own) and sorted(os.listdir(repo / ".git")) == before
    os.chmod(own, 0o500)  # what an agent may do to a folder of its own
    confinement.close()
    confinement.close()
    assert not os.path.exists(own)


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


def test_a_repositorys_objects_that_are_a_link_are_refused_and_its_submodules_left_out(
    tmp_path: Path,
) -> None:
    """Shown read-only wherever they led (an agent of another day could have left the link)."""
    repo, elsewhere = tmp_path / "repo", tmp_path / "elsewhere"
    for folder in (repo, elsewhere):
        folder.mkdir()
    git(repo, "init", "-q")
    (repo / ".git" / "modules").symlink_to(elsewhere)
    confinement = confine("true", [], cwd=str(repo), env=os.environ)
    assert str(elsewhere) not in confinement.argv
    confinement.close()
    os.rename(repo / ".git" / "objects", tmp_path / "objects")
    (repo / ".git" / "objects").symlink_to(tmp_path / "objects")
    with pytest.raises(SandboxError) as refused:
        confine("true", [], cwd=str(repo), env=os.environ)
    assert (
        str(refused.value) == f"sandbox: {repo}/.git/objects is no folder of the repository's own (a link?)"
    )
