"""Applying a recorded diff to a main checkout (`git apply --3way`, after a trial in a temporary index)."""

from __future__ import annotations

import contextlib
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from acp_tui.workspace.git import HOOKS_OFF, IsolationError, git, last_line
from acp_tui.workspace.worktrees import find_origin


class ApplyRefused(Exception):
    """A diff that does not apply to the checkout; nothing was written. `conflicts`: paths."""

    def __init__(self, message: str, conflicts: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.conflicts = tuple(conflicts)


async def apply_diff(diff: str, cwd: str | Path, *, base: str | None = None) -> list[str]:
    """Apply a recorded diff to the checkout holding `cwd` (`git apply --3way`); the paths touched.

    A trial in a temporary index comes first: a diff that would conflict raises `ApplyRefused` with
    the conflicting paths, and the checkout is not written. `IsolationError` for no usable checkout.
    """
    origin = await find_origin(cwd)
    top = origin.toplevel
    if base is not None:
        code, _, _ = await git("cat-file", "-e", f"{base}^{{commit}}", cwd=top, check=False)
        if code != 0:
            raise IsolationError(f"the record's base {base[:12]} is not in the repository at {top}")
    if not diff.strip():
        return []
    _, out, _ = await git("rev-parse", "--git-path", "index", cwd=top)
    index = (top / out.strip()).resolve()
    with tempfile.TemporaryDirectory(prefix="acp-tui-apply-") as scratch:
        patch = Path(scratch) / "change.diff"
        try:
            patch.write_bytes(diff.encode("utf-8", "surrogateescape"))
        except UnicodeEncodeError:
            raise IsolationError("the diff holds characters no patch can carry") from None
        trial = {"GIT_INDEX_FILE": str(Path(scratch) / "index")}
        with contextlib.suppress(FileNotFoundError):
            shutil.copyfile(index, trial["GIT_INDEX_FILE"])
        code, _, err = await git("apply", "--cached", "--3way", str(patch), cwd=top, env=trial, check=False)
        if code != 0:
            _, unmerged, _ = await git("ls-files", "-u", "-z", cwd=top, env=trial, check=False)
            conflicts = sorted({entry.split("\t", 1)[1] for entry in unmerged.split("\0") if "\t" in entry})
            if conflicts:
                raise ApplyRefused(
                    f"the diff conflicts with {top} in {_count(conflicts, 'file')}: {', '.join(conflicts)}",
                    conflicts,
                )
            raise ApplyRefused(f"the diff does not apply to {top}: {last_line(err) or 'git apply failed'}")
        _, names, _ = await git("apply", "--numstat", "-z", str(patch), cwd=top, check=False)
        code, _, err = await git(*HOOKS_OFF, "apply", "--3way", str(patch), cwd=top, check=False)
        if code != 0:
            raise ApplyRefused(f"the diff does not apply to {top}: {last_line(err) or 'git apply failed'}")
    return [entry.split("\t", 2)[2] for entry in names.split("\0") if entry.count("\t") >= 2]


def _count(items: Sequence[Any], noun: str) -> str:
    return f"{len(items)} {noun}" + ("" if len(items) == 1 else "s")
