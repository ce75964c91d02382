"""Applying a recorded diff to a main checkout (`git apply --3way`, after a trial in a temporary index).

Both run in a git directory of ours on the repository's objects (`PrivateGitDir`), never with the
repository's own config, which any agent in one of its worktrees can write: no filter, merge driver
or hook of theirs runs. The trial works on a copy of the checkout's index, its new objects in our
scratch folder; the real apply writes the checkout's files and index, and its objects go into the
repository, as `git apply --3way` of the user's own would.
"""

from __future__ import annotations

import asyncio
import contextlib
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from acp_tui.workspace.git import IsolationError, last_line
from acp_tui.workspace.worktrees import find_origin


class ApplyRefused(Exception):
    """A diff that does not apply to the checkout; nothing was written. `conflicts`: paths."""

    def __init__(self, message: str, conflicts: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.conflicts = tuple(conflicts)


async def apply_diff(diff: str, cwd: str | Path, *, base: str | None = None) -> list[str]:
    """Apply a recorded diff to the checkout holding `cwd` (`git apply --3way`); the files touched
    (a renamed one as `old => new`).

    A trial in a temporary index comes first: a diff that would conflict raises `ApplyRefused` with
    the conflicting paths, and the checkout is not written. `IsolationError` for no usable checkout.
    """
    origin = await find_origin(cwd)
    top = origin.toplevel
    try:
        patch_bytes = diff.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        raise IsolationError("the diff holds characters no patch can carry") from None
    with origin.private_git_dir() as trial:
        if base is not None:
            code, _, _ = await trial.git("cat-file", "-e", f"{base}^{{commit}}", work_tree=top, check=False)
            if code != 0:
                raise IsolationError(f"the record's base {base[:12]} is not in the repository at {top}")
        if not diff.strip():
            return []
        patch = await asyncio.to_thread(trial.write, "change.diff", patch_bytes)
        await asyncio.to_thread(_copy_if_there, origin.git_dir / "index", trial.index)
        # The index as it was, as a tree: what the diff changed is then read off git's own diff.
        wrote, before, _ = await trial.git("write-tree", work_tree=top, check=False)
        code, _, err = await trial.git("apply", "--cached", "--3way", str(patch), work_tree=top, check=False)
        if code != 0:
            _, unmerged, _ = await trial.git("ls-files", "-u", "-z", work_tree=top, check=False)
            conflicts = sorted({entry.split("\t", 1)[1] for entry in unmerged.split("\0") if "\t" in entry})
            if conflicts:
                raise ApplyRefused(
                    f"the diff conflicts with {top} in {_count(conflicts, 'file')}: {', '.join(conflicts)}",
                    conflicts,
                )
            raise ApplyRefused(f"the diff does not apply to {top}: {last_line(err) or 'git apply failed'}")
        numstat_of: tuple[str, ...]
        if wrote == 0:
            numstat_of = ("diff", "--cached", "--numstat", "-z", "-M", "--no-ext-diff", before.strip(), "--")
        else:  # an index git cannot write as a tree (a merge under way): the names the patch gives
            numstat_of = ("apply", "--numstat", "-z", str(patch))
        _, numstat, _ = await trial.git(*numstat_of, work_tree=top, check=False)
        with origin.private_git_dir(index=origin.git_dir / "index", shared=True) as real:
            code, _, err = await real.git("apply", "--3way", str(patch), work_tree=top, check=False)
        if code != 0:
            raise ApplyRefused(f"the diff does not apply to {top}: {last_line(err) or 'git apply failed'}")
    return touched(numstat)


def touched(numstat: str) -> list[str]:
    """The files of a `--numstat -z`: `added TAB deleted TAB path NUL`, or for a rename or a copy an
    empty path followed by `old NUL new NUL`."""
    fields = iter(numstat.split("\0"))
    names = []
    for entry in fields:
        parts = entry.split("\t", 2)
        if len(parts) < 3:
            continue
        names.append(parts[2] or f"{next(fields, '')} => {next(fields, '')}")
    return names


def _copy_if_there(source: Path, target: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        shutil.copyfile(source, target)


def _count(items: Sequence[Any], noun: str) -> str:
    return f"{len(items)} {noun}" + ("" if len(items) == 1 else "s")
