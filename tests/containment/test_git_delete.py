"""Nothing we delete follows a link or is anything but ours: planted links in our cache, folders that
are not our worktrees, a rewritten `.git` file, `chmod 555`, and a removal that cannot succeed.

Permissions mean nothing to root, so the `chmod` cases also run as an unprivileged user the test
creates (skipped, saying why, when the tests do not run as root)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from acp_tui.workspace.git import IsolationError
from acp_tui.workspace.worktrees import Isolation, find_origin
from tests.containment.support import User, committed_repo, home_of, run_python, worktree_paths
from tests.helpers import git

SOURCES = {"README.md": "# Project\n", "src/app.py": "print('hello')\n"}


def tree(root: Path) -> dict[str, str]:
    """Every entry under `root` and what it is (a file's text): what must not change."""
    found = {}
    for path in sorted(root.rglob("*")):
        key = str(path.relative_to(root))
        found[key] = "link" if path.is_symlink() else "dir" if path.is_dir() else path.read_text()
    return found


@pytest.fixture
def target(tmp_path: Path) -> Path:
    """Someone's precious folders, which a link of the agent's points at."""
    root = tmp_path / "home-of-the-user"
    (root / ".ssh").mkdir(parents=True)
    (root / ".ssh" / "id_ed25519").write_text("private key\n")
    (root / "projects" / "thesis").mkdir(parents=True)
    (root / "projects" / "thesis" / "chapter1.tex").write_text("years of work\n")
    return root


async def test_a_link_planted_at_a_slot_never_makes_us_delete_anything_of_its_target(
    repo: Path, cache_home: Path, target: Path
) -> None:
    before = tree(target)
    cache_home.mkdir(parents=True)
    (cache_home / "slot-9").symlink_to(target)
    isolation = Isolation()
    await isolation.start()
    assert tree(target) == before  # nothing deleted, no lock file made there
    worktree = await isolation.add(await find_origin(repo), "a")
    assert worktree.path.parent == cache_home / "slot-0"
    assert await isolation.aclose() == []
    assert await Isolation().start() == []
    assert tree(target) == before  # nothing deleted, no lock file made there
    assert any("slot-9" in line for line in isolation.left), isolation.left


async def test_a_link_at_our_worktrees_folder_is_refused(repo: Path, cache_home: Path, target: Path) -> None:
    before = tree(target)
    cache_home.parent.mkdir(parents=True)
    cache_home.symlink_to(target)
    with pytest.raises(IsolationError, match="not a folder"):
        await Isolation().add(await find_origin(repo), "a")
    assert tree(target) == before


async def test_a_link_at_a_slots_lock_is_not_followed(repo: Path, cache_home: Path, tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    (cache_home / "slot-0").mkdir(parents=True)
    (cache_home / "slot-0" / "owner.lock").symlink_to(victim)
    isolation = Isolation()
    worktree = await isolation.add(await find_origin(repo), "a")
    await isolation.aclose()
    assert not victim.exists() and not victim.is_symlink()
    assert worktree.path.parent == cache_home / "slot-1"


CRASHING_OWNER = """
import asyncio, os, signal, sys
from pathlib import Path
from acp_tui.workspace.worktrees import Isolation, find_origin

async def main():
    isolation = Isolation(Path(sys.argv[2]))
    worktree = await isolation.add(await find_origin(sys.argv[1]), "doomed")
    (worktree.path / "half-done.txt").write_text("partial")
    if len(sys.argv) > 3:  # the agent rewrites the worktree's .git file
        (worktree.path / ".git").write_text(f"gitdir: {sys.argv[3]}\\n")
    print(worktree.path, flush=True)
    os.kill(os.getpid(), signal.SIGKILL)

asyncio.run(main())
"""


def crash_with_a_worktree(repo: Path, cache_home: Path, *rewrite: str) -> Path:
    done = subprocess.run(
        [sys.executable, "-c", CRASHING_OWNER, str(repo), str(cache_home), *rewrite],
        capture_output=True, text=True, env={**os.environ, "PYTHONPATH": os.getcwd()},
    )  # fmt: skip
    assert done.returncode == -signal.SIGKILL, done.stderr
    return Path(done.stdout.strip())


async def test_the_sweep_of_a_dead_slot_deletes_only_our_worktrees(repo: Path, cache_home: Path) -> None:
    left = crash_with_a_worktree(repo, cache_home)
    slot = left.parent
    (slot / "notes").mkdir()
    (slot / "notes" / "todo.txt").write_text("mine, not a worktree\n")
    lookalike = slot / "doomed-abcdef1"  # our name pattern, but no worktree of ours
    lookalike.mkdir()
    (lookalike / "data.txt").write_text("keep me\n")

    isolation = Isolation()
    assert await isolation.start() == [left]
    assert not left.exists() and worktree_paths(repo) == [str(repo)]
    assert (slot / "notes" / "todo.txt").read_text() == "mine, not a worktree\n"
    assert (lookalike / "data.txt").read_text() == "keep me\n"
    assert any(str(lookalike) in line for line in isolation.left), isolation.left
    await isolation.aclose()


@pytest.fixture
def other_repo(tmp_path: Path) -> Path:
    """Another repository with a prunable worktree entry (its folder deleted by hand)."""
    other = committed_repo(tmp_path / "other", {"f": "x\n"})
    git(other, "worktree", "add", "-q", "--detach", str(tmp_path / "stale"))
    subprocess.run(["rm", "-rf", str(tmp_path / "stale")], check=True)
    assert (other / ".git" / "worktrees" / "stale").is_dir()
    return other


async def test_a_rewritten_git_file_never_points_our_prune_at_another_repository(
    repo: Path, cache_home: Path, other_repo: Path
) -> None:
    stale = other_repo / ".git" / "worktrees" / "stale"
    left = crash_with_a_worktree(repo, cache_home, str(stale))
    isolation = Isolation()
    await isolation.start()
    assert stale.is_dir()  # another repository's entry: not ours to prune
    assert left.is_dir() and any(str(left) in line for line in isolation.left), isolation.left

    # In the same process, we know the worktree: it is removed, from its own repository.
    worktree = await isolation.add(await find_origin(repo), "live")
    (worktree.path / ".git").write_text(f"gitdir: {stale}\n")
    assert await worktree.remove() is None
    assert not worktree.path.exists() and stale.is_dir()
    assert str(worktree.path) not in worktree_paths(repo)
    await isolation.aclose()


async def test_a_kept_marker_replaces_a_planted_link_never_writes_through_it(
    repo: Path, tmp_path: Path
) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("the user's file\n")
    isolation = Isolation()
    worktree = await isolation.add(await find_origin(repo), "kept")
    marker = worktree.path.with_name(worktree.path.name + ".kept")
    marker.symlink_to(victim)
    worktree.keep()
    assert victim.read_text() == "the user's file\n"
    assert marker.is_file() and not marker.is_symlink()
    worktree.keep(False)  # its marker goes with it, at its removal
    assert marker.is_file() and victim.exists()
    await isolation.aclose()
    assert not marker.exists() and not worktree.path.exists() and victim.exists()


# Permissions: as root and as an unprivileged user --------------------------------------------------

CHMODDED = """
import asyncio, json, os, sys, tempfile
from pathlib import Path
from acp_tui.workspace.worktrees import Isolation, find_origin

async def main():
    repo, cache = Path(sys.argv[1]), Path(sys.argv[2])
    tempfile.tempdir = str(cache.parent)  # what the "crashed" one leaves stays in the test's folder
    cache.parent.mkdir()
    origin = await find_origin(repo)
    live, crashed = Isolation(cache), Isolation(cache)
    removed_live = await live.add(origin, "live")
    left = await crashed.add(origin, "left")
    for worktree in (removed_live, left):  # what the agent does to its worktree
        sub = worktree.path / "src" / "deep"
        sub.mkdir()
        (sub / "file.txt").write_text("x")
        os.chmod(sub, 0o555)
        os.chmod(worktree.path / "src", 0o555)
        os.chmod(worktree.path, 0o555)
        os.chmod(worktree.path.parent, 0o555)  # the slot: two levels above the agent's cwd
    os.close(crashed._lock)  # the other process died without cleaning up
    message = await removed_live.remove()
    swept = Isolation(cache)
    stale = await swept.start()
    await swept.aclose()
    print(json.dumps({
        "message": message, "live": removed_live.path.exists(), "stale": [str(p) for p in stale],
        "left": str(left.path), "left_exists": left.path.exists(), "problems": swept.left,
    }))

asyncio.run(main())
"""


@pytest.mark.parametrize("as_user", ["root", "unprivileged"])
def test_a_chmod_555_worktree_is_removed_in_process_and_by_the_sweep(
    as_user: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    user: User | None = request.getfixturevalue("unprivileged") if as_user == "unprivileged" else None
    with home_of(user, tmp_path) as home:
        repo = committed_repo(home / "checkout", SOURCES, user)
        done = run_python(user, CHMODDED, str(repo), str(home / "cache" / "wt"), home=home)
        assert done.returncode == 0, done.stderr
        outcome = json.loads(done.stdout)
        assert outcome["message"] is None and not outcome["live"]
        assert outcome["stale"] == [outcome["left"]] and not outcome["left_exists"], outcome
        assert outcome["problems"] == []
        assert worktree_paths(repo, user) == [str(repo)]


FAILING_REMOVAL = """
import asyncio, json, sys
from pathlib import Path
from acp_tui.workspace.worktrees import Isolation, find_origin

async def main():
    isolation = Isolation(Path(sys.argv[2]))
    worktree = await isolation.add(await find_origin(sys.argv[1]), "stuck")
    print(worktree.path, flush=True)
    sys.stdin.readline()  # the test plants what cannot be removed
    message = await worktree.remove()
    print(json.dumps({"message": message, "exists": worktree.path.exists()}), flush=True)
    await isolation.aclose()

asyncio.run(main())
"""


def test_a_removal_that_cannot_succeed_is_reported(unprivileged: User, tmp_path: Path) -> None:
    user = unprivileged
    with home_of(user, tmp_path) as home:
        repo = committed_repo(home / "checkout", SOURCES, user)
        env = {"PATH": os.environ["PATH"], "HOME": str(home), "PYTHONPATH": os.getcwd()}
        proc = subprocess.Popen(
            [user.python, "-c", FAILING_REMOVAL, str(repo), str(home / "cache" / "wt")],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            env=env, cwd=home, user=user.uid, group=user.gid, extra_groups=[],
        )  # fmt: skip
        try:
            assert proc.stdout is not None and proc.stdin is not None
            path = Path(proc.stdout.readline().strip())
            (path / "roots").mkdir()  # a folder of root's inside: the user cannot empty it
            (path / "roots" / "file").write_text("x")
            out, err = proc.communicate("go\n", timeout=30)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        assert proc.returncode == 0, err
        outcome = json.loads(out)
        assert outcome["exists"]
        assert outcome["message"] and str(path) in outcome["message"], outcome
