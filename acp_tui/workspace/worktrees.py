"""Git worktrees for runs: each isolated run works in its own checkout, and what it changed is kept.

One `Isolation` per process owns a slot under the user cache dir
(`settings.paths.worktrees_dir()/slot-N/`, the first one free), held by an advisory lock for as
long as the process lives; slots are reused, so the cache holds one folder per acp-tui running at
once, never one per acp-tui that ever ran. A run's worktree is a fresh detached worktree of the
repository that holds the run's cwd, at the base commit (HEAD, or `--base REF`), and the agent's
cwd is the matching path inside it. Uncommitted changes of the main checkout are not carried
(`Origin.note` says so, for the pane).

Everything git does here is defused (see `acp_tui.workspace.git`): the repository's config, which
any agent in one of its worktrees can write, is read only to register and unregister worktrees
(`git worktree add --no-checkout`, `remove`, `prune`, all naming the repository). The files are
checked out, and the change later recorded, through a git directory of ours (`PrivateGitDir`)
naming the worktree as its work tree, so no filter, hook, fsmonitor or include of the agent's is
ever obeyed, and the new blobs of the agent's files land in our scratch folder, not the repository.

A confined agent (see `acp_tui.process.sandbox`) sees none of the repository's git directory but
its objects, read-only: its git works on a git directory of its own in the worktree's entry
(`Worktree.own_git_dir`), so its commits, branches and resets stay there, and nothing it does moves
the repository's refs or deletes its objects.

When the run ends, `Worktree.record()` checks that the worktree's `.git` still names the
repository's entry (an agent that replaced it gets nothing recorded, and a `Change.error` saying
so), stages everything (`git add -A`) into our own index, files over `max_file_bytes` left out and
listed (`skipped`), then diffs that index against the base, so new files count: `diff_stat`
(files, insertions, deletions) and `diff` (the patch, `--binary`, cut at the answers' size limit
with `diff_truncated` set). Its `timeout` bounds it. `remove()` deletes the worktree unless it is
kept (see `acp_tui.workspace.cleanup`: only what is provably ours, and a failure is said). A process
that died without cleaning up leaves its slot unlocked: the next `Isolation.start()` removes the
worktrees it left (not the kept ones).

Nothing here writes to a main checkout. Git runs with no optional locks (`git status` would
otherwise rewrite the main checkout's index). Everything is asyncio subprocesses: eight runs
record at once; their worktrees are added and removed in turn (see `Isolation.add`)."""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
import re
import secrets
import shutil
import stat
import time
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from acp_tui.core.files import private_dir, replace_file
from acp_tui.settings import paths
from acp_tui.settings.schema import MAX_FILE_BYTES
from acp_tui.workspace.cleanup import (
    AGENT_GIT_DIR,
    KEPT_SUFFIX,
    RECORD_SUFFIX,
    WORKTREE_NAME,
    gitdir_named,
    leftovers,
    names_back,
    remove_worktree,
)
from acp_tui.workspace.git import IsolationError, PrivateGitDir, git, last_line, lay_git_dir, read_small, reap

# As answers (`AcpProviderConfig.max_output_chars`): the patch kept beyond this is cut, and says so.
DIFF_LIMIT = 16_000_000

# A run that used all its time still gets this long to record its partial change.
RECORD_GRACE = 2.0

OWNER_LOCK = "owner.lock"
SLOT_NAME = re.compile(r"slot-[0-9]+")
MAX_SLOTS = 1000

REPLACED_GIT = "the agent replaced its worktree's .git: nothing of it was recorded"


@dataclass(frozen=True)
class Origin:
    """Where isolated runs come from: the checkout holding a cwd, and the commit they start at."""

    toplevel: Path  # the main checkout's root
    common_dir: Path  # the repository (objects, refs, worktrees/) shared by every worktree
    prefix: str  # the cwd relative to `toplevel`, "" at the root
    base: str  # the full commit id
    dirty: bool  # the checkout has uncommitted changes, which worktrees do not carry
    git_dir: Path  # the checkout's own git directory (its HEAD and index)
    object_format: str = "sha1"

    @property
    def note(self) -> str:
        """What a pane says about where its run works."""
        text = f"in a worktree of {self.toplevel} at {self.base[:12]}"
        if self.dirty:
            text += f"; uncommitted changes of {self.toplevel} are not carried"
        return text

    def private_git_dir(self, head: str | None = None, **options: Any) -> PrivateGitDir:
        """A git directory of ours on this repository's objects (see `PrivateGitDir`)."""
        return PrivateGitDir(
            self.common_dir / "objects", head or self.base, object_format=self.object_format, **options
        )


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
    skipped: tuple[str, ...] = ()  # files over `max_file_bytes`, not recorded (relative paths)


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
    _, out, _ = await git(
        "rev-parse", "--show-toplevel", "--absolute-git-dir", "--git-common-dir", "--show-object-format",
        "--show-prefix", cwd=where,
    )  # fmt: skip
    toplevel, git_dir, common, object_format, prefix = [*out.splitlines(), "", "", "", "", ""][:5]
    top, own_dir = Path(toplevel), Path(git_dir)
    if not await asyncio.to_thread(
        _leads_to, top / ".git", own_dir
    ):  # a `core.worktree` (shared config) pointing elsewhere
        raise IsolationError(f"{top} is not the checkout of {own_dir}: its .git leads elsewhere")
    head = await _commit(where, "HEAD")
    commit = head if base is None else await _commit(where, base)
    if commit is None:
        if base is None:
            raise IsolationError(f"{toplevel} has no commit yet: a worktree needs one to start from")
        raise IsolationError(f'--base "{base}": no such commit in {toplevel}')
    origin = Origin(
        toplevel=top,
        common_dir=(where / common).resolve(),
        prefix=prefix.rstrip("/"),
        base=commit,
        dirty=True,
        git_dir=own_dir,
        object_format=object_format or "sha1",
    )
    # `git worktree prune` here too: entries whose folder someone deleted by hand.
    _, dirty = await asyncio.gather(
        git(f"--git-dir={origin.common_dir}", "worktree", "prune", check=False),
        _dirty(origin, head),
    )
    return replace(origin, dirty=dirty)


async def _commit(where: Path, ref: str) -> str | None:
    code, out, _ = await git(
        "rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}", cwd=where, check=False
    )
    return out.strip() if code == 0 else None


def _leads_to(dot_git: Path, git_dir: Path) -> bool:
    """The checkout's `.git` is `git_dir`, or a file naming it (a linked worktree, `--separate-git-dir`)."""
    try:
        if stat.S_ISDIR(os.lstat(dot_git).st_mode):
            return dot_git.resolve() == git_dir.resolve()
    except OSError:
        return False
    return gitdir_named(dot_git) == git_dir.resolve()


async def _dirty(origin: Origin, head: str | None) -> bool:
    """The checkout differs from its HEAD (untracked files count), read by a git of ours: the
    repository's config, which an agent can write, is not read. Unknown counts as dirty."""
    if head is None:
        return True
    excludes = read_small(origin.common_dir / "info" / "exclude") or ""
    try:
        with origin.private_git_dir(head, index=origin.git_dir / "index", excludes=excludes) as ours:
            code, out, _ = await ours.git(
                "status", "--porcelain", "-z", "--ignore-submodules", work_tree=origin.toplevel, check=False
            )
    except IsolationError:
        return True
    return code != 0 or bool(out)


def time_left(started: float, *timeouts: float | None) -> float | None:
    """What the tightest of a run's timeouts (from `started`, `time.monotonic()`) leaves for recording
    its change (None: no timeout); at least RECORD_GRACE, so a run that used all its time still
    records its partial change."""
    given = [timeout for timeout in timeouts if timeout is not None]
    if not given:
        return None
    return max(RECORD_GRACE, started + min(given) - time.monotonic())


@dataclass(frozen=True)
class IsolationPlan:
    """`acp-tui run --worktree`: each job's origin (in job order), found before anything spawns."""

    origins: tuple[Origin | None, ...]  # None: that job is not isolated here
    keep: bool = False
    far: frozenset[int] = frozenset()  # the jobs isolated on the far side of a link (at `base`)
    base: str | None = None

    @property
    def notes(self) -> list[str]:
        """One line per checkout the runs come from, for the operator."""
        distinct = dict.fromkeys(origin for origin in self.origins if origin is not None)
        return [f"each isolated run works {origin.note}" for origin in distinct]


def plan(
    cwds: Sequence[str | Path | None],
    *,
    base: str | None = None,
    keep: bool = False,
    far: frozenset[int] = frozenset(),
) -> IsolationPlan:
    """The command line's check of every job's cwd (None: not isolated here) in one pass, before
    anything is spawned; raises `IsolationError`. The `far` jobs' checkouts are found over there,
    when their runs start."""

    async def find_all() -> IsolationPlan:
        distinct = list(dict.fromkeys(str(cwd) for cwd in cwds if cwd is not None))
        found = dict(
            zip(distinct, await asyncio.gather(*(find_origin(c, base) for c in distinct)), strict=True)
        )
        return IsolationPlan(tuple(found[str(c)] if c is not None else None for c in cwds), keep, far, base)

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
        # The repository's entry for it, as git made it before any agent ran (`<repo>/worktrees/<name>`).
        self.admin = origin.common_dir / "worktrees" / path.name
        self._ours: PrivateGitDir | None = None  # our git dir on it: the index of its checkout

    @property
    def base(self) -> str:
        return self.origin.base

    def keep(self, kept: bool = True) -> None:
        """Keep (or no longer keep) this worktree past `remove()`, and past the next start's prune.
        No longer kept, its marker stays until `remove()` deletes it: a reopened worktree sits in a
        dead process's slot, which anyone's start sweeps, and it is in use until then."""
        self.kept = kept
        if kept:
            replace_file(self._marker, f"{self.origin.toplevel}\n")

    def own_git_dir(self) -> Path:
        """The git directory a confined agent works on in this worktree (made the first time): its
        own HEAD (the base), index (the checkout's), refs and new objects, the repository's objects
        borrowed read-only. So its commits never write the repository, whose HEAD and index for
        this worktree stay ours (see `process.sandbox.worktree_view`)."""
        own = self.admin / AGENT_GIT_DIR
        if not os.path.lexists(own):
            made = own.with_name(f"{AGENT_GIT_DIR}.{secrets.token_hex(4)}")  # whole, or not at all
            made.mkdir()
            excludes = read_small(self.origin.common_dir / "info" / "exclude") or ""
            objects = self.origin.common_dir / "objects"
            lay_git_dir(made, self.base, objects, self.origin.object_format, excludes)
            with contextlib.suppress(FileNotFoundError):  # none yet: git makes one
                source = os.open(self.admin / "index", os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
                with os.fdopen(source, "rb") as index, open(made / "index", "xb") as copy:
                    shutil.copyfileobj(index, copy)
            os.rename(made, own)
        return own

    @property
    def _marker(self) -> Path:
        return self.path.with_name(self.path.name + KEPT_SUFFIX)

    async def _add(self) -> None:
        """Register the worktree (git's only part here) and check its files out through our git dir."""
        common = self.origin.common_dir
        async with self._turn:
            # The record first: a crash right after git registers it still leaves what vouches for it.
            replace_file(self.path.with_name(self.path.name + RECORD_SUFFIX), f"{self.admin}\n")
            await git(
                f"--git-dir={common}", "worktree", "add", "--quiet", "--no-checkout", "--detach",
                str(self.path), self.base,
            )  # fmt: skip
        made = gitdir_named(self.path / ".git")
        if made != self.admin.resolve() or not names_back(self.admin, self.path):
            raise IsolationError(f"git registered {self.path} as {made}, not as {self.admin}")
        self._ours = self.origin.private_git_dir()
        await self._ours.git("read-tree", "--reset", "-u", self.base, work_tree=self.path)
        # Git then sees a clean checkout there (its index is the one we just wrote), and so does a
        # confined agent's own git, whose index starts as a copy of it.
        await asyncio.to_thread(shutil.copyfile, self._ours.index, self.admin / "index")
        await asyncio.to_thread(self.own_git_dir)
        if self.origin.prefix:  # a directory that holds no tracked file is not checked out
            self.cwd.mkdir(parents=True, exist_ok=True)

    async def record(
        self, limit: int = DIFF_LIMIT, *, timeout: float | None = None, max_file_bytes: int = MAX_FILE_BYTES
    ) -> Change:
        """Diff everything in the worktree (new files too) against the base, within `timeout`
        seconds; never raises."""
        try:
            async with asyncio.timeout(timeout):
                self.change = await self._record(limit, max_file_bytes)
        except TimeoutError:
            why = f"the run's time ran out while recording ({timeout or 0:.1f} s were left)"
            self.change = Change(None, None, error=f"could not record the change: {why}")
        except IsolationError as exc:
            self.change = Change(None, None, error=f"could not record the change: {exc}")
        except OSError as exc:
            self.change = Change(None, None, error=f"could not record the change: {exc.strerror or exc}")
        return self.change

    async def _record(self, limit: int, max_file_bytes: int) -> Change:
        if self.removed or not self.path.is_dir():
            raise IsolationError(f"{self.path} is gone")
        if gitdir_named(self.path / ".git") != self.admin.resolve():
            return Change(None, None, error=REPLACED_GIT)
        ours = self._ours
        if ours is None:  # ours went with an earlier removal (kept): a fresh index, every file hashed
            ours = self._ours = self.origin.private_git_dir()
            await ours.git("read-tree", self.base, work_tree=self.path)
        ours.refresh()
        # What `add -A` would take: untracked files not ignored, and tracked ones that changed.
        _, listing, _ = await ours.git(
            "ls-files", "-z", "--others", "--modified", "--exclude-standard", work_tree=self.path
        )
        skipped = await asyncio.to_thread(_too_large, self.path, listing.split("\0"), max_file_bytes)
        specs = [".", *(f":(exclude,literal){name}" for name in skipped)]
        pathspec = await asyncio.to_thread(
            ours.write, "pathspec", b"".join(os.fsencode(s) + b"\0" for s in specs)
        )
        await ours.git(
            "add", "-A", "--ignore-errors", f"--pathspec-from-file={pathspec}", "--pathspec-file-nul",
            work_tree=self.path,
        )  # fmt: skip
        change = await _diff_against(ours, self.base, self.path, limit)
        return replace(change, skipped=tuple(skipped))

    async def remove(self) -> str | None:
        """Delete the worktree and git's entry for it, unless kept; None, or one line saying what
        could not be removed. Idempotent; never raises."""
        self._drop_ours()
        if self.kept or self.removed:
            return None
        self.removed = True
        left = await remove_worktree(self.path, self.admin, known=True, turn=self._turn)
        with contextlib.suppress(OSError):  # gone (or left, and said): a later sweep may retry
            self._marker.unlink(missing_ok=True)
        return left

    def _drop_ours(self) -> None:
        if self._ours is not None:
            self._ours.close()
            self._ours = None

    def fields(self, change: Change | None = None) -> dict[str, Any]:
        """The keys a run's JSON record gains: `worktree`, `base`, `diff_stat`, `diff`,
        `diff_truncated`, `skipped` (see `acp_tui.reports.records`, which masks the diff). `change`:
        the one recorded at the end of a given turn (default: the latest)."""
        change = change or self.change
        return {
            "worktree": str(self.path),
            "base": self.base,
            "diff_stat": change.stat.to_json() if change and change.stat else None,
            "diff": change.diff if change else None,
            "diff_truncated": bool(change and change.truncated),
            "skipped": list(change.skipped) if change else [],
        }


def _too_large(root: Path, names: Sequence[str], limit: int) -> list[str]:
    """The regular files among `names` (relative to `root`) larger than `limit` bytes, sorted."""
    found = set()
    for name in names:
        with contextlib.suppress(OSError):
            info = os.lstat(root / name)
            if name and stat.S_ISREG(info.st_mode) and info.st_size > limit:
                found.add(name)
    return sorted(found)


async def _diff_against(ours: PrivateGitDir, base: str, work_tree: Path, limit: int) -> Change:
    """`git diff --cached --numstat -p --binary BASE`: the numstat lines, a blank line, the patch."""
    process = await ours.spawn(
        "diff", "--cached", "--numstat", "--patch", "--binary", "--no-color", "--no-ext-diff",
        "--no-textconv", base, "--", work_tree=work_tree,
    )  # fmt: skip
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
    worktree; `aclose()` removes every worktree not kept and lets the folder go. `left` holds a line
    for each thing of the cache that was left alone or could not be removed.
    """

    def __init__(self, root: Path | None = None) -> None:
        self.root = root if root is not None else paths.worktrees_dir()
        self.token = secrets.token_hex(3)  # worktree names never repeat, whoever had the slot before
        self.folder = self.root / "slot-?"  # the first free slot, taken by `start()`
        self.worktrees: list[Worktree] = []
        self.left: list[str] = []
        self._lock: int | None = None
        self._starting: asyncio.Future[list[Path]] | None = None
        self._count = 0
        self._turns: dict[Path, asyncio.Lock] = {}  # per repository

    async def start(self) -> list[Path]:
        """Take our folder, and remove what dead processes left: the worktrees removed (to the first
        caller; the others, eight runs setting up at once, wait for the same start)."""
        first = self._starting is None
        if self._starting is None:
            self._starting = asyncio.ensure_future(self._start())
        starting = self._starting
        try:
            removed = await asyncio.shield(starting)
        except IsolationError:
            if self._starting is starting:
                self._starting = None  # a failed start is not kept: the next isolated round tries again
            raise
        return removed if first else []

    async def _start(self) -> list[Path]:
        try:
            stale = await asyncio.to_thread(self._claim_and_sweep)
        except OSError as exc:
            raise IsolationError(f"{self.root}: {exc.strerror or exc}") from None
        existed = await asyncio.to_thread(lambda: {path for path, _ in stale if os.path.lexists(path)})
        problems = await asyncio.gather(
            *(
                remove_worktree(path, admin, known=False, turn=self._turn(admin.parent.parent))
                for path, admin in stale
            )
        )
        self.left.extend(problem for problem in problems if problem)
        return [
            path
            for (path, _), problem in zip(stale, problems, strict=True)
            if problem is None and path in existed
        ]

    def _turn(self, repository: Path) -> asyncio.Lock:
        return self._turns.setdefault(repository.resolve(), asyncio.Lock())

    def _claim_and_sweep(self) -> list[tuple[Path, Path]]:
        root = private_dir(self.root)  # a link planted there is refused, never followed
        # One claimer or sweeper at a time: a slot is never swept while someone is taking it.
        with _flocked(root / ".sweep.lock", fcntl.LOCK_EX):
            for number in range(MAX_SLOTS):
                folder = root / f"slot-{number}"
                try:
                    private_dir(folder)
                    fd = _open_lock(folder / OWNER_LOCK)
                except OSError:  # a link, a file, someone else's folder: not ours to use
                    continue
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:  # a live process's slot
                    os.close(fd)
                    continue
                self.folder, self._lock = folder, fd
                break
            else:
                raise OSError(f"no free slot among {MAX_SLOTS}")
            stale: list[tuple[Path, Path]] = []
            for entry in sorted(os.scandir(root), key=lambda e: e.name):
                folder = root / entry.name
                if not SLOT_NAME.fullmatch(entry.name):
                    continue
                if (
                    not entry.is_dir(follow_symlinks=False)
                    or entry.stat(follow_symlinks=False).st_uid != os.geteuid()
                ):
                    self.left.append(f"left {folder} alone: not a folder of ours (a link?)")
                    continue
                try:
                    if folder == self.folder:  # what the last owner of our slot left
                        found, unvouched = leftovers(folder)
                    else:
                        with _flocked(folder / OWNER_LOCK, fcntl.LOCK_EX | fcntl.LOCK_NB):
                            found, unvouched = leftovers(folder)
                except BlockingIOError:
                    continue  # its process is alive
                except OSError:
                    continue  # not ours to judge (permissions, vanished): leave it
                stale.extend(found)
                self.left.extend(unvouched)
        return stale

    async def add(self, origin: Origin, name: str) -> Worktree:
        """A fresh detached worktree of `origin` at its base, for a run called `name`."""
        await self.start()
        self._count += 1
        path = self.folder / f"{_safe(name)}-{self.token}{self._count}"
        # Two gits changing one repository's list of worktrees at once can fail (`worktree add`
        # reads the other's half-written entry), so adds and removals take turns, per repository.
        # The checkout goes with it: eight at once were never faster here (2 cores, ext4) than
        # eight in a row, and up to four times slower. Recordings do run at once.
        worktree = Worktree(origin, path, self._turn(origin.common_dir))
        try:
            await worktree._add()
        except BaseException as exc:
            await asyncio.shield(worktree.remove())
            if isinstance(exc, OSError):
                raise IsolationError(f"{worktree.cwd}: {exc.strerror or exc}") from None
            raise
        self.worktrees.append(worktree)
        return worktree

    def reopen(self, path: str | Path, base: str, cwd: str | None = None) -> Worktree:
        """A worktree a record names, to continue its conversation: ours, still there, and holding
        the recorded `cwd`, else an IsolationError naming it. It is kept as it was (kept or not)
        until `remove`."""
        path = Path(path)
        record = read_small(path.with_name(path.name + RECORD_SUFFIX), limit=4096)
        if record is None or not os.path.lexists(path):
            raise IsolationError(f"its worktree is gone: {path}")
        admin = Path(record.strip())
        info = os.lstat(path)
        if (
            not path.is_absolute()
            or not stat.S_ISDIR(info.st_mode)
            or info.st_uid != os.geteuid()
            or not WORKTREE_NAME.fullmatch(path.name)
        ):
            raise IsolationError(f"{path} is not a worktree of ours")
        if gitdir_named(path / ".git") != admin.resolve() or not names_back(admin, path):
            raise IsolationError(f"{path} no longer names its repository: its agent replaced its .git")
        common = admin.parent.parent
        origin = Origin(
            toplevel=common.parent,
            common_dir=common,
            prefix=_inside(path, cwd) if cwd else "",
            base=base,
            dirty=False,
            git_dir=common,
        )
        worktree = Worktree(origin, path, self._turn(common))
        worktree.kept = path.with_name(path.name + KEPT_SUFFIX).exists()
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

    async def aclose(self) -> list[str]:
        """Remove every worktree not kept, and give our slot up (its empty folder stays for the
        next); a line for each that could not be removed."""
        problems = await asyncio.gather(*(worktree.remove() for worktree in self.worktrees))
        if self._lock is not None:
            os.close(self._lock)
            self._lock = None
            self._starting = None
        return [problem for problem in problems if problem]


def _inside(worktree: Path, cwd: str) -> str:
    """The recorded `cwd` relative to its `worktree` ("" at its root): an absolute path under it,
    without `..`, whose links (as they stand now) lead nowhere else; else an IsolationError."""
    where = Path(cwd)
    if not where.is_absolute() or ".." in where.parts or not where.is_relative_to(worktree):
        raise IsolationError(f"its cwd {cwd} is not inside its worktree {worktree}")
    try:
        escapes = not where.resolve().is_relative_to(worktree.resolve())
    except (OSError, RuntimeError):  # a loop of links (RuntimeError before Python 3.13)
        escapes = True
    if escapes:
        raise IsolationError(f"its cwd {cwd} leads out of its worktree {worktree} (through a link)")
    relative = where.relative_to(worktree).as_posix()
    return "" if relative == "." else relative


_LOCK_FLAGS = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC


def _open_lock(path: Path) -> int:
    """Our lock file (made if missing), never through a link planted at its name."""
    return os.open(path, _LOCK_FLAGS, 0o600)


@contextlib.contextmanager
def _flocked(path: Path, mode: int) -> Any:
    fd = _open_lock(path)
    try:
        fcntl.flock(fd, mode)
        yield
    finally:
        os.close(fd)


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip(".-")[:40] or "run"
