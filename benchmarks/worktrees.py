"""Worktrees: eight isolated runs at once, against the bare git commands run one after another.

    python benchmarks/worktrees.py [--pairs N] [--files N] [--runs N]

A repository of `--files` (default 5,000) small files in 100 folders, one commit, in a temp dir.
Each round, alternating which goes first (A: acp-tui's `acp_tui.workspace.worktrees`, B: git by hand):

- set-up: A = what `acp-tui run --worktree` does before the first spawn: `plan()`'s
  `find_origin` (rev-parse, prune, status), `Isolation.start()` (lock, sweep), then `--runs` (8)
  `add()` called at once (they take turns per repository), until every worktree is ready;
  B = `git worktree add --detach PATH HEAD` eight times in a row.
- then every worktree gets the same change (3 files edited, 2 created; not timed).
- recording: A = eight `Worktree.record()` at once (copy of the index, `git add -A` into it,
  `git diff --cached --numstat -p --binary BASE` read and capped); B = the same by hand, eight
  times in a row: `cp` of the worktree's index, `GIT_INDEX_FILE=... git add -A`, the same diff.
- removal: A = `Isolation.aclose()` (eight `git worktree remove --force` at once, folder given
  up); B = `git worktree remove --force PATH` eight times in a row.

Target: each A/B (median of the per-round ratios) <= 1.5. Afterwards the repository must list no
worktree but its own, and no process of ours may be left.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import (
    REPO,
    end_progress,
    header,
    median,
    paired,
    ratios,
    table,
    verdict,
    wait_no_marked_processes,
)

sys.path.insert(0, str(REPO))

from acp_tui.workspace.worktrees import Isolation, find_origin

TARGET = 1.5
IDENTITY = ("-c", "user.name=bench", "-c", "user.email=bench@acp-tui.invalid")


def make_repository(root: Path, files: int) -> Path:
    repo = root / "repo"
    repo.mkdir()
    for i in range(files):
        folder = repo / f"pkg{i % 100:02d}"
        folder.mkdir(exist_ok=True)
        (folder / f"module_{i}.py").write_text(f'"""Module {i}."""\n\n' + f"VALUE_{i} = {i}\n" * 20)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "a repository of many files")
    return repo


def git(cwd: Path, *args: str, env: dict[str, str] | None = None) -> bytes:
    return subprocess.run(["git", *IDENTITY, *args], cwd=cwd, check=True, capture_output=True, env=env).stdout


def change(worktree: Path, n: int) -> None:
    """The same change in every worktree: three files edited, two created."""
    for i in range(3):
        path = worktree / f"pkg{i:02d}" / f"module_{i}.py"
        path.write_text(path.read_text() + f"# edited by run {n}\n")
    for i in range(2):
        (worktree / f"new_{n}_{i}.py").write_text(f"NEW = {n}\n")


def settle() -> None:
    """Before each timed phase: the disk work the last one left (writeback, and on a filesystem
    mounted with `discard`, the trims of deleted files) is done, so neither side is billed for it."""
    os.sync()


class Round:
    def __init__(self, repo: Path, scratch: Path, runs: int) -> None:
        self.repo = repo
        self.scratch = scratch
        self.runs = runs
        self.base = git(repo, "rev-parse", "HEAD").decode().strip()
        self.times: dict[str, list[float]] = {}

    def note(self, key: str, seconds: float) -> None:
        self.times.setdefault(key, []).append(seconds)

    def ours(self) -> float:
        async def go() -> None:
            settle()
            started = time.perf_counter()
            origin = await find_origin(self.repo)
            isolation = Isolation(self.scratch / "cache")
            await isolation.start()
            worktrees = await asyncio.gather(*(isolation.add(origin, f"run{i}") for i in range(self.runs)))
            self.note("ours set-up", time.perf_counter() - started)
            for n, worktree in enumerate(worktrees):
                change(worktree.path, n)
            settle()
            started = time.perf_counter()
            changes = await asyncio.gather(*(worktree.record() for worktree in worktrees))
            self.note("ours recording", time.perf_counter() - started)
            assert all(c.stat is not None and c.stat.files == 5 for c in changes), changes[0]
            settle()
            started = time.perf_counter()
            await isolation.aclose()
            self.note("ours removal", time.perf_counter() - started)

        asyncio.run(go())
        return self.times["ours set-up"][-1]

    def bare(self) -> float:
        paths = [self.scratch / "bare" / f"run{i}" for i in range(self.runs)]
        settle()
        started = time.perf_counter()
        for path in paths:
            git(self.repo, "worktree", "add", "--quiet", "--detach", str(path), "HEAD")
        self.note("bare set-up", time.perf_counter() - started)
        for n, path in enumerate(paths):
            change(path, n)
        settle()
        started = time.perf_counter()
        for path in paths:
            index = Path(git(path, "rev-parse", "--git-path", "index").decode().strip())
            scratch_index = self.scratch / "bare-index"
            shutil.copyfile(path / index if not index.is_absolute() else index, scratch_index)
            env = {**os.environ, "GIT_INDEX_FILE": str(scratch_index)}
            git(path, "add", "-A", env=env)
            git(path, "diff", "--cached", "--numstat", "--patch", "--binary", self.base, env=env)
            scratch_index.unlink()
        self.note("bare recording", time.perf_counter() - started)
        settle()
        started = time.perf_counter()
        for path in paths:
            git(self.repo, "worktree", "remove", "--force", str(path))
        self.note("bare removal", time.perf_counter() - started)
        return self.times["bare set-up"][-1]


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--pairs", type=int, default=10)
    parser.add_argument("--files", type=int, default=5000)
    parser.add_argument("--runs", type=int, default=8)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="acp-tui-bench-worktrees-") as tmp:
        scratch = Path(tmp)
        repo = make_repository(scratch, args.files)
        bench = Round(repo, scratch, args.runs)
        paired(args.pairs, bench.ours, bench.bare, label="worktrees")
        end_progress()
        left_worktrees = git(repo, "worktree", "list", "--porcelain").decode().count("worktree ") - 1

    header(f"Worktrees: {args.runs} isolated runs at once, {args.files:,} files, {args.pairs} rounds")
    rows = []
    ok = True
    for phase in ("set-up", "recording", "removal"):
        ours, bare = bench.times[f"ours {phase}"], bench.times[f"bare {phase}"]
        ratio = median(ratios(ours, bare))
        ok = ok and ratio <= TARGET
        rows.append([phase, median(ours), median(bare), ratio, f"<= {TARGET}", verdict(ratio <= TARGET)])
    print(table(["phase", f"ours ({args.runs} at once), s", f"bare git ({args.runs} in a row), s",
                 "ratio (median of rounds)", "target", ""], rows))  # fmt: skip
    print("\n" + "\n".join(f"{k}: {[round(x, 2) for x in v]}" for k, v in bench.times.items()))
    leftovers = wait_no_marked_processes()
    print(f"\nworktrees left: {left_worktrees}; processes left: {len(leftovers)}")
    return 0 if left_worktrees == 0 and not leftovers else 1


if __name__ == "__main__":
    sys.exit(main())
