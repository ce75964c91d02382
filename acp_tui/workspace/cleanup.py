"""Deleting worktrees: only ours, never through a link, never silently failing.

Our cache folder sits two levels above an isolated agent's cwd, so the agent can plant anything
there: links, folders with our names, a `.git` file naming another repository. A slot entry is
deleted only when it is provably ours: a real folder (lstat), owned by us, with our name pattern,
recorded by us (`<name>.gitdir`, written when it was added: the repository's entry for it, its
"admin" directory), its `.git` file naming that admin directory and the admin directory's `gitdir`
naming it back (a worktree this process added is known without its `.git`, which is put back if its
agent replaced it). Removal goes through `git worktree remove --force` of that recorded repository,
after giving back the write bits an agent may have taken (`chmod 555`, in the worktree and in its
own git directory), then `git worktree prune` of the same repository; what still stands is said in
a message, never dropped.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import shutil
import stat
from pathlib import Path

from acp_tui.core.files import give_owner_rwx, restore_owner_bits, write_new
from acp_tui.workspace.git import git, last_line, read_small

WORKTREE_NAME = re.compile(r"[A-Za-z0-9._-]{1,40}-[0-9a-f]{6}[0-9]+")
RECORD_SUFFIX = ".gitdir"  # beside a worktree: the repository's entry for it, as we added it
KEPT_SUFFIX = ".kept"
# In a worktree's entry in its repository: the git directory its confined agent works on (its own
# HEAD, index, refs and objects). Deleted with the entry.
AGENT_GIT_DIR = "agent"


def gitdir_named(dot_git: Path) -> Path | None:
    """The git directory a worktree's `.git` file names (`gitdir: <path>`); None for anything else."""
    text = read_small(dot_git, limit=4096)
    if text is None or not text.startswith("gitdir: "):
        return None
    named = Path(text[len("gitdir: ") :].strip())
    return (dot_git.parent / named).resolve() if not named.is_absolute() else named.resolve()


def names_back(admin: Path, worktree: Path) -> bool:
    """The repository's entry `admin` is the one of the worktree at `worktree` (its `gitdir` file)."""
    text = read_small(admin / "gitdir", limit=4096)
    return text is not None and Path(text.strip()) == worktree.resolve() / ".git"


def _not_removable(path: Path, admin: Path, *, known: bool) -> str | None:
    """Why `path` is not provably our worktree of `admin` (None: it is, or it is gone), after
    making it removable. `known`: this process added it, so a `.git` its agent replaced is put back."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return None
    if not stat.S_ISDIR(info.st_mode):
        return "not a folder (a link or a file is there)"
    if hasattr(os, "geteuid") and info.st_uid != os.geteuid():
        return f"not ours (owned by uid {info.st_uid})"
    if not WORKTREE_NAME.fullmatch(path.name):
        return "not one of our names"
    give_owner_rwx(str(path.parent))  # our slot: its entries are deleted too
    give_owner_rwx(str(path))
    if not known and not names_back(admin, path):
        return f"its repository's entry {admin} does not name it"
    if gitdir_named(path / ".git") != admin.resolve():
        if not known:
            return "its .git file no longer names its repository"
        _put_back_git_file(path, admin)
    restore_owner_bits(path)
    if os.path.isdir(admin / AGENT_GIT_DIR) and not os.path.islink(admin / AGENT_GIT_DIR):
        restore_owner_bits(admin / AGENT_GIT_DIR)
    return None


def _put_back_git_file(path: Path, admin: Path) -> None:
    dot_git = path / ".git"
    with contextlib.suppress(FileNotFoundError):
        if stat.S_ISDIR(os.lstat(dot_git).st_mode):
            restore_owner_bits(dot_git)
            shutil.rmtree(dot_git)  # the fd-based rmtree: no link inside is followed
        else:
            os.unlink(dot_git)
    write_new(dot_git, f"gitdir: {admin}\n", mode=0o644)


async def remove_worktree(
    path: Path, admin: Path, *, known: bool, turn: asyncio.Lock | None = None
) -> str | None:
    """Remove our worktree at `path` and its repository's entry `admin` (`<repo>/worktrees/<name>`);
    None, or one line saying what was left and why. `turn`: held while git changes the repository's
    list of worktrees. Never raises for what is on disk."""
    repository = admin.parent.parent
    lock = turn or asyncio.Lock()
    try:
        why = await asyncio.to_thread(_not_removable, path, admin, known=known)
    except (OSError, RecursionError) as exc:
        why = f"could not be made removable ({exc})"
    if why is not None:
        return f"left {path}: {why}"
    failure = ""
    for _ in range(2):  # once more after giving the bits back again: something may have raced us
        async with lock:
            code, _, err = await git(
                f"--git-dir={repository}", "worktree", "remove", "--force", "--force", str(path), check=False
            )
        failure = last_line(err) if code != 0 else ""
        if not await asyncio.to_thread(_still_there, path):
            break
    if known and await asyncio.to_thread(_still_there, path):  # git lost its entry: ours still
        await asyncio.to_thread(shutil.rmtree, path, True)
    async with lock:
        await git(f"--git-dir={repository}", "worktree", "prune", check=False)
    if await asyncio.to_thread(os.path.lexists, path):
        return f"could not remove the worktree {path}: {failure or 'some of it could not be deleted'}"
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path.with_name(path.name + RECORD_SUFFIX))
    return None


def _still_there(path: Path) -> bool:
    """Whether `path` still stands; if it does, its owner bits are given back for another try."""
    if not os.path.lexists(path):
        return False
    with contextlib.suppress(OSError, RecursionError):
        restore_owner_bits(path)
    return True


def leftovers(slot: Path) -> tuple[list[tuple[Path, Path]], list[str]]:
    """What a dead owner left in `slot`: (worktree, its recorded admin directory) for each of ours
    not kept, and a line for each folder with our name that no record of ours vouches for."""
    found: list[tuple[Path, Path]] = []
    unvouched: list[str] = []
    for entry in sorted(os.scandir(slot), key=lambda e: e.name):
        stem = entry.name.removesuffix(RECORD_SUFFIX)
        kept = os.path.lexists(slot / (stem + KEPT_SUFFIX))
        if stem != entry.name and WORKTREE_NAME.fullmatch(stem):
            text = read_small(slot / entry.name, limit=4096)
            admin = Path(text.strip()) if text else None
            if admin is None or not admin.is_absolute() or admin.parent.name != "worktrees":
                unvouched.append(f"left {slot / stem}: its record {entry.name} is not ours")
            elif not kept:
                found.append((slot / stem, admin))
        elif (
            WORKTREE_NAME.fullmatch(entry.name)
            and entry.is_dir(follow_symlinks=False)
            and not kept
            and not os.path.lexists(slot / (entry.name + RECORD_SUFFIX))
        ):
            unvouched.append(f"left {slot / entry.name}: no record of ours names its repository")
    return found, unvouched
