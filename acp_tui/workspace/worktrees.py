"""Git worktrees for runs: each isolated run works in its own checkout, and what it changed is kept.

One `Isolation` per process owns a slot under the user cache dir
(`user_cache_path("acp-tui")/worktrees/slot-N/`, the first one free), held by an advisory lock for as
long as the process lives; slots are reused, so the cache holds one folder per acp-tui running at
once, never one per acp-tui that ever ran. A run's worktree is a fresh `git worktree add --detach` of
the repository that holds the run's cwd, at the base commit (HEAD, or `--base REF`), and the agent's
cwd is the matching path inside it. Uncommitted changes of the main checkout are not carried
(`Origin.note` says so, for the pane).

When the run ends, `Worktree.record()` stages everything (`git add -A`) into a temporary index (the
worktree's own index is left as the agent left it), then diffs that index against the base, so new
files count: `diff_stat` (files, insertions, deletions) and `diff` (the patch, `--binary`, cut at
the answers' size limit with `diff_truncated` set). `remove()` deletes the worktree unless it is
kept. A process that died without cleaning up leaves its slot unlocked: the next
`Isolation.start()` removes the worktrees left in any free slot (not the kept ones) and runs
`git worktree prune` in their repositories.

`apply_diff()` applies a recorded diff to a main checkout with `git apply --3way`, after a trial in a
temporary index: when it would conflict, nothing is written and the conflicting paths are listed.

Nothing here writes to a main checkout, except `apply_diff` which the user asks for. Git runs with
hooks off (a repository's hook could write anywhere) and no optional locks (`git status` would
otherwise rewrite the main checkout's index). Everything is asyncio subprocesses: eight runs record
and are removed at once; their worktrees are added in turn (see `Isolation.add`)."""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import itertools
import os
import re
import secrets
import shutil
import tempfile
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from acp_tui.workspace.git import HOOKS_OFF, IsolationError, git, last_line, reap, spawn_git

# As answers (`AcpProviderConfig.max_output_chars`): the patch kept beyond this is cut, and says so.
DIFF_LIMIT = 16_000_000


OWNER_LOCK = "owner.lock"


KEPT_SUFFIX = ".kept"


@dataclass(frozen=True)
class Origin:
    """Where isolated runs come from: the checkout holding a cwd, and the commit they start at."""

    toplevel: Path  # the main checkout's root
    common_dir: Path  # the repository (objects, refs, worktrees/) shared by every worktree
    prefix: str  # the cwd relative to `toplevel`, "" at the root
    base: str  # the full commit id
    dirty: bool  # the checkout has uncommitted changes, which worktrees do not carry

    @property
    def note(self) -> str:
        """What a pane says about where its run works."""
        text = f"in a worktree of {self.toplevel} at {self.base[:12]}"
        if self.dirty:
            text += f"; uncommitted changes of {self.toplevel} are not carried"
        return text


@dataclass(frozen=True)
class DiffStat:
    files: int
    insertions: int
    deletions: int

    def to_json(self) -> dict[str, int]:
        return {"files": self.files, "insertions": self.insertions, "deletions": self.deletions}

    def __str__(self) -> str:
        noun = "file" if self.files == 1 else "files"
        return f"{self.files} {noun} +{self.insertions} -{self.deletions}"


@dataclass(frozen=True)
class Change:
    """What a run changed in its worktree, against the base. `error`: it could not be read."""

    stat: DiffStat | None
    diff: str | None  # bytes that are not UTF-8 come as surrogate escapes, so the patch round-trips
    truncated: bool = False
    error: str | None = None


async def find_origin(cwd: str | Path, base: str | None = None) -> Origin:
    """The checkout holding `cwd` and the commit its worktrees start at; `IsolationError` if none."""
    where = Path(cwd)
    code, out, err = await git(
        "rev-parse", "--is-bare-repository", "--is-inside-git-dir", cwd=where, check=False
    )
    if code != 0:
        if "not a git repository" in err:
            raise IsolationError(f"{where} is not in a git repository")
        raise IsolationError(f"{where}: {last_line(err) or 'git rev-parse failed'}")
    bare, inside_git_dir = out.split()
    if bare == "true":
        raise IsolationError(f"{where} is in a bare repository, which has no checkout")
    if inside_git_dir == "true":
        raise IsolationError(f"{where} is inside a repository's git directory, not its checkout")
    _, out, _ = await git("rev-parse", "--show-toplevel", "--git-common-dir", "--show-prefix", cwd=where)
    toplevel, common, prefix = [*out.splitlines(), ""][:3]
    ref = base or "HEAD"
    code, out, err = await git(
        "rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}", cwd=where, check=False
    )
    if code != 0:
        if base is None:
            raise IsolationError(f"{toplevel} has no commit yet: a worktree needs one to start from")
        raise IsolationError(f'--base "{base}": no such commit in {toplevel}')
    commit = out.strip()
    # `git worktree prune` here too: entries whose folder someone deleted by hand.
    _, status = await asyncio.gather(
        git("worktree", "prune", cwd=where, check=False),
        git("status", "--porcelain", "-z", "--ignore-submodules", cwd=where, check=False),
    )
    return Origin(
        toplevel=Path(toplevel),
        common_dir=(where / common).resolve(),
        prefix=prefix.rstrip("/"),
        base=commit,
        dirty=bool(status[1]),
    )


@dataclass(frozen=True)
class IsolationPlan:
    """`acp-tui run --worktree`: each job's origin (in job order), found before anything spawns."""

    origins: tuple[Origin | None, ...]  # None: that job is not isolated
    keep: bool = False

    @property
    def notes(self) -> list[str]:
        """One line per checkout the runs come from, for the operator."""
        distinct = dict.fromkeys(origin for origin in self.origins if origin is not None)
        return [f"each isolated run works {origin.note}" for origin in distinct]


def plan(cwds: Sequence[str | Path | None], *, base: str | None = None, keep: bool = False) -> IsolationPlan:
    """The command line's check of every job's cwd (None: not isolated) in one pass, before anything
    is spawned; raises `IsolationError`."""

    async def find_all() -> IsolationPlan:
        distinct = list(dict.fromkeys(str(cwd) for cwd in cwds if cwd is not None))
        origins = await asyncio.gather(*(find_origin(cwd, base) for cwd in distinct))
        found = dict(zip(distinct, origins, strict=True))
        return IsolationPlan(tuple(found[str(cwd)] if cwd is not None else None for cwd in cwds), keep)

    return asyncio.run(find_all())


class Worktree:
    """One run's checkout. `cwd` is where the agent works; `change` is set by `record()`."""

    def __init__(self, origin: Origin, path: Path, turn: asyncio.Lock) -> None:
        self.origin = origin
        self.path = path
        self._turn = turn  # held while git's list of worktrees changes (see `Isolation.add`)
        self.cwd = path / origin.prefix if origin.prefix else path
        self.change: Change | None = None
        self.kept = False
        self.removed = False

    @property
    def base(self) -> str:
        return self.origin.base

    def keep(self, kept: bool = True) -> None:
        """Keep (or no longer keep) this worktree past `remove()`, and past the next start's prune."""
        self.kept = kept
        marker = self.path.with_name(self.path.name + KEPT_SUFFIX)
        if kept:
            marker.write_text(f"{self.origin.toplevel}\n", encoding="utf-8")
        else:
            marker.unlink(missing_ok=True)

    async def record(self, limit: int = DIFF_LIMIT) -> Change:
        """Diff everything in the worktree (new files too) against the base; never raises."""
        try:
            self.change = await self._record(limit)
        except IsolationError as exc:
            self.change = Change(None, None, error=f"could not record the change: {exc}")
        return self.change

    async def _record(self, limit: int) -> Change:
        if self.removed or not self.path.is_dir():
            raise IsolationError(f"{self.path} is gone")
        _, out, _ = await git("rev-parse", "--git-path", "index", cwd=self.path)
        own_index = (self.path / out.strip()).resolve()
        handle, scratch = tempfile.mkstemp(prefix="acp-tui-index-", dir=own_index.parent)
        os.close(handle)
        try:
            # A copy of the worktree's index: its stat data spares `add -A` rehashing every file.
            with contextlib.suppress(FileNotFoundError):
                shutil.copyfile(own_index, scratch)
            env = {"GIT_INDEX_FILE": scratch}
            await git("add", "-A", "--ignore-errors", cwd=self.path, env=env)
            return await _diff_against(self.base, self.path, env, limit)
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(scratch)

    async def remove(self) -> None:
        """Delete the worktree and git's entry for it, unless kept. Idempotent; never raises."""
        if self.kept or self.removed:
            return
        self.removed = True
        # `git worktree remove`, in two steps: the files at once with the other runs' (the slow
        # part), then git's entry for it in turn. The folder may hold anything its agent left.
        await asyncio.to_thread(shutil.rmtree, self.path, True)
        async with self._turn:
            await git("worktree", "prune", cwd=self.origin.toplevel, check=False)

    def fields(self) -> dict[str, Any]:
        """The keys a run's JSON record gains: `worktree`, `base`, `diff_stat`, `diff`, `diff_truncated`."""
        change = self.change
        return {
            "worktree": str(self.path),
            "base": self.base,
            "diff_stat": change.stat.to_json() if change and change.stat else None,
            "diff": change.diff if change else None,
            "diff_truncated": bool(change and change.truncated),
        }


async def _diff_against(base: str, cwd: Path, env: Mapping[str, str], limit: int) -> Change:
    """`git diff --cached --numstat -p --binary BASE`: the numstat lines, a blank line, the patch."""
    args = (
        "diff", "--cached", "--numstat", "--patch", "--binary", "--no-color", "--no-ext-diff",
        "--no-textconv", base, "--",
    )  # fmt: skip
    process = await spawn_git(args, cwd, env)
    truncated = False
    err = b""
    errors = asyncio.ensure_future(process.stderr.read())  # read alongside: a full pipe would stall git
    finished = False
    try:
        files = insertions = deletions = 0
        while line := await process.stdout.readline():
            if line == b"\n":
                break
            added, removed, _ = line.split(b"\t", 2)
            files += 1
            insertions += int(added) if added.isdigit() else 0  # binary files count as "-"
            deletions += int(removed) if removed.isdigit() else 0
        chunks: list[bytes] = []
        size = 0
        while size <= limit and (chunk := await process.stdout.read(1 << 20)):
            chunks.append(chunk)
            size += len(chunk)
        patch = b"".join(chunks)
        if size > limit:
            truncated = True
            patch = patch[: patch.rfind(b"\n", 0, limit) + 1]
        else:
            err = await errors
            await process.wait()
            finished = True
    finally:
        errors.cancel()
        if not finished:
            await asyncio.shield(reap(process))
    if not truncated and process.returncode != 0:
        raise IsolationError(last_line(err.decode("utf-8", "replace")) or "git diff failed")
    return Change(DiffStat(files, insertions, deletions), patch.decode("utf-8", "surrogateescape"), truncated)


class Isolation:
    """This process's worktrees, in its own folder under the user cache dir.

    `start()` takes the folder's lock and removes what crashed processes left; `add()` makes a
    worktree; `aclose()` removes every worktree not kept and lets the folder go.
    """

    def __init__(self, root: Path | None = None) -> None:
        self.root = root if root is not None else default_root()
        self.token = secrets.token_hex(3)  # worktree names never repeat, whoever had the slot before
        self.folder = self.root / "slot-?"  # the first free slot, taken by `start()`
        self.worktrees: list[Worktree] = []
        self._lock: int | None = None
        self._starting: asyncio.Future[list[Path]] | None = None
        self._count = 0
        self._turns: dict[Path, asyncio.Lock] = {}  # per repository

    async def start(self) -> list[Path]:
        """Take our folder, and prune what dead processes left: the worktrees removed (to the first
        caller; the others, eight runs setting up at once, wait for the same start)."""
        if self._starting is None:
            self._starting = asyncio.ensure_future(self._start())
            return await asyncio.shield(self._starting)
        await asyncio.shield(self._starting)
        return []

    async def _start(self) -> list[Path]:
        try:
            stale, repositories = await asyncio.to_thread(self._claim_and_sweep)
        except OSError as exc:
            raise IsolationError(f"{self.root}: {exc.strerror or exc}") from None
        await asyncio.gather(
            *(git("--git-dir", str(repo), "worktree", "prune", check=False) for repo in repositories)
        )
        return stale

    def _claim_and_sweep(self) -> tuple[list[Path], set[Path]]:
        self.root.mkdir(parents=True, exist_ok=True)
        # One claimer or sweeper at a time: a slot is never swept while someone is taking it.
        with _flocked(self.root / ".sweep.lock", fcntl.LOCK_EX):
            for number in itertools.count():
                folder = self.root / f"slot-{number}"
                folder.mkdir(exist_ok=True)
                fd = os.open(folder / OWNER_LOCK, os.O_RDWR | os.O_CREAT, 0o600)
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:  # a live process's slot
                    os.close(fd)
                    continue
                self.folder, self._lock = folder, fd
                break
            stale: list[Path] = []
            repositories: set[Path] = set()
            for folder in sorted(self.root.iterdir()):
                if not folder.is_dir():
                    continue
                if folder == self.folder:  # what the last owner of our slot left
                    _sweep(folder, stale, repositories)
                    continue
                try:
                    with _flocked(folder / OWNER_LOCK, fcntl.LOCK_EX | fcntl.LOCK_NB):
                        _sweep(folder, stale, repositories)
                except BlockingIOError:
                    continue  # its process is alive
                except OSError:
                    continue  # not ours to judge (permissions, vanished): leave it
        return stale, repositories

    async def add(self, origin: Origin, name: str) -> Worktree:
        """A fresh detached worktree of `origin` at its base, for a run called `name`."""
        await self.start()
        self._count += 1
        path = self.folder / f"{_safe(name)}-{self.token}{self._count}"
        # Two gits changing one repository's list of worktrees at once can fail (`worktree add`
        # reads the other's half-written entry), so adds take turns, per repository. The checkout
        # goes with it: eight at once were never faster here (2 cores, ext4) than eight in a row,
        # and up to four times slower. Removals and recordings do run at once.
        turn = self._turns.setdefault(origin.common_dir, asyncio.Lock())
        worktree = Worktree(origin, path, turn)
        try:
            async with turn:
                await git(
                    *HOOKS_OFF, "worktree", "add", "--quiet", "--detach", str(path), origin.base,
                    cwd=origin.toplevel,
                )  # fmt: skip
            if origin.prefix:  # a directory that holds no tracked file is not checked out
                worktree.cwd.mkdir(parents=True, exist_ok=True)
        except BaseException as exc:
            await asyncio.shield(worktree.remove())
            if isinstance(exc, OSError):
                raise IsolationError(f"{worktree.cwd}: {exc.strerror or exc}") from None
            raise
        self.worktrees.append(worktree)
        return worktree

    @contextlib.asynccontextmanager
    async def isolated(self, origin: Origin, name: str, *, keep: bool = False) -> AsyncIterator[Worktree]:
        """A worktree for one run: recorded when the block ends (if not yet), then removed unless kept."""
        worktree = await self.add(origin, name)
        if keep:
            worktree.keep()
        try:
            yield worktree
        finally:
            if worktree.change is None:
                await asyncio.shield(worktree.record())
            await asyncio.shield(worktree.remove())

    async def aclose(self) -> None:
        """Remove every worktree not kept, and give our slot up (its empty folder stays for the next)."""
        await asyncio.gather(*(worktree.remove() for worktree in self.worktrees))
        if self._lock is None:
            return
        os.close(self._lock)
        self._lock = None
        self._starting = None


def default_root() -> Path:
    import platformdirs

    return platformdirs.user_cache_path("acp-tui", appauthor=False) / "worktrees"


@contextlib.contextmanager
def _flocked(path: Path, mode: int) -> Any:
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, mode)
        yield
    finally:
        os.close(fd)


def _sweep(folder: Path, stale: list[Path], repositories: set[Path]) -> None:
    """Remove the worktrees of a dead owner's folder, except kept ones; note their repositories."""
    for entry in folder.iterdir():
        if not entry.is_dir() or entry.with_name(entry.name + KEPT_SUFFIX).exists():
            continue
        repository = _repository_of(entry)
        shutil.rmtree(entry, ignore_errors=True)
        stale.append(entry)
        if repository is not None:
            repositories.add(repository)


def _repository_of(worktree: Path) -> Path | None:
    """The repository a worktree belongs to, from its `.git` file (`gitdir: <repo>/worktrees/<name>`)."""
    try:
        text = (worktree / ".git").read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    if not text.startswith("gitdir:"):
        return None
    admin = Path(text.split(":", 1)[1].strip())
    return admin.parent.parent if admin.parent.name == "worktrees" else None


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip(".-")[:40] or "run"
