"""Running git: every call of ours goes through here, defused.

An agent writes its worktree (its `.git` file included) and, through it, the repository's shared
`.git/config`, `info/attributes` and hooks. So every git we run:

- gets a minimal environment (`git_env`: PATH, HOME, TMPDIR, `LC_ALL=C` and our GIT_* settings),
  never our credentials nor a GIT_DIR someone else chose;
- has on its command line (which wins over every config file) what a config could make it execute
  turned off: fsmonitor, hooks, pager, automatic gc and maintenance, transports, credential helpers;
- reads or writes file contents (checkout, add, diff, status, apply) only through a `PrivateGitDir`:
  a git directory of ours with our own config (no system, global or repository config is read
  there, so no filter, textconv, merge or diff driver and no include exists), the repository's
  objects reached through `objects/info/alternates`, and the work tree named.

The repository's own config is read only by the commands that cannot do without its git directory:
`rev-parse` (finding the checkout), `worktree add --no-checkout`, `worktree remove` and `worktree
prune`; none of them reads a file's content, and each names the repository (`--git-dir`).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import stat
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from acp_tui.core.files import replace_file

# On every git's command line, before the subcommand: `-c` beats every config file.
DEFUSED = (
    "--no-pager",
    "-c", "core.fsmonitor=false",
    "-c", f"core.hooksPath={os.devnull}",
    "-c", "core.pager=cat",
    "-c", "gc.auto=0",
    "-c", "maintenance.auto=false",
    "-c", "protocol.allow=never",
    "-c", "credential.helper=",
    "-c", "submodule.recurse=false",
)  # fmt: skip

# What our gits inherit: nothing else of ours (credentials, GIT_DIR, GIT_EXTERNAL_DIFF, GIT_PAGER...).
_KEPT_VARIABLES = ("PATH", "HOME", "TMPDIR")
_OUR_GIT_SETTINGS = {
    "LC_ALL": "C",  # git's messages are matched ("not a git repository")
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_ATTR_NOSYSTEM": "1",
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_OPTIONAL_LOCKS": "0",  # `git status` would otherwise rewrite the index it reads
    "GIT_NO_REPLACE_OBJECTS": "1",  # refs/replace, which an agent can write, never swaps objects
}


class IsolationError(Exception):
    """Isolation cannot be had (git missing, not a repository, bare, bad base): one line to show."""


class GitFailed(IsolationError):
    def __init__(self, message: str, returncode: int, stderr: str) -> None:
        super().__init__(message)
        self.returncode = returncode
        self.stderr = stderr


def git_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    env = {name: os.environ[name] for name in _KEPT_VARIABLES if name in os.environ}
    env.update(_OUR_GIT_SETTINGS)
    if extra:
        env.update(extra)
    return env


async def spawn_git(args: Sequence[str], cwd: Path | None, env: Mapping[str, str] | None) -> Any:
    try:
        return await asyncio.create_subprocess_exec(
            "git",
            *DEFUSED,
            *args,
            cwd=cwd,
            env=git_env(env),
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
    except FileNotFoundError:
        if shutil.which("git", path=os.environ.get("PATH")) is None:
            raise IsolationError("git not found on PATH") from None
        raise IsolationError(f"{cwd}: no such directory") from None
    except OSError as exc:
        raise IsolationError(f"git could not start: {exc.strerror or exc}") from None


async def reap(process: Any) -> None:
    """A git we started and no longer wait for (cancelled, or we read enough): gone before we go.

    Only for a git that may still run: `kill()` polls first, and a poll that reaps a git which just
    exited leaves asyncio's watcher to report 255 for it."""
    if process.returncode is None:
        with contextlib.suppress(ProcessLookupError):
            process.kill()
    await process.wait()


async def git(
    *args: str, cwd: Path | None = None, env: Mapping[str, str] | None = None, check: bool = True
) -> tuple[int, str, str]:
    """Run git; (returncode, stdout, stderr). A failure raises `GitFailed` with git's last line."""
    process = await spawn_git(args, cwd, env)
    try:
        out, err = await process.communicate()
    except BaseException:
        await asyncio.shield(reap(process))
        raise
    stdout = out.decode("utf-8", "surrogateescape")
    stderr = err.decode("utf-8", "replace")
    if check and process.returncode != 0:
        raise GitFailed(last_line(stderr) or f"git {args[0]} failed", process.returncode, stderr)
    return process.returncode, stdout, stderr


def last_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    for line in reversed(lines):
        if line.startswith(("fatal:", "error:")):
            return line.split(":", 1)[1].strip()
    return lines[-1] if lines else ""


# Our own git directory -------------------------------------------------------------------------

_OUR_CONFIG = """\
[core]
\trepositoryformatversion = {version}
\tbare = false
\tfsmonitor = false
\thooksPath = {devnull}
\tlogAllRefUpdates = false
[advice]
\taddEmbeddedRepo = false
\tdetachedHead = false
{extensions}"""


class PrivateGitDir:
    """A git directory of ours, in a fresh temporary folder: HEAD (a commit id), our config, and the
    repository's objects through `objects/info/alternates` (new objects land here, not there), or,
    `shared`, written straight into the repository's (what `git apply` of the user's asks for).

    `index` is the index file git works on (default: one of ours in here). Use it as a context
    manager, or `close()` it."""

    def __init__(
        self,
        objects: Path,
        head: str,
        *,
        object_format: str = "sha1",
        index: Path | None = None,
        shared: bool = False,
        excludes: str = "",
    ) -> None:
        self.objects = objects
        self.head = head
        self.object_format = object_format
        self.shared = shared
        self.excludes = excludes
        try:
            self.path = Path(tempfile.mkdtemp(prefix="acp-tui-git-"))
        except OSError as exc:
            raise IsolationError(f"no folder for our git directory: {exc.strerror or exc}") from None
        self.index = index if index is not None else self.path / "index"
        self._ours = {"HEAD", "config", "refs", "objects", self.index.name}
        try:
            self.refresh()
        except BaseException as exc:
            self.close()
            if isinstance(exc, OSError):
                raise IsolationError(f"{self.path}: {exc.strerror or exc}") from None
            raise

    def refresh(self) -> None:
        """Make this directory ours again: whatever was written here since (a `commondir` naming
        another repository's config, `info/attributes`, ...) is gone before git reads it."""
        for entry in os.scandir(self.path):
            if entry.name in ("info", "objects") or entry.name not in self._ours:
                _delete(Path(entry.path) / "info" if entry.name == "objects" else Path(entry.path))
        lay_git_dir(self.path, self.head, self.objects, self.object_format, self.excludes)

    def write(self, name: str, data: bytes) -> Path:
        """A new file of ours in this directory (an older one of that name replaced), through no link."""
        path = self.path / name
        self._ours.add(name)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        with os.fdopen(fd, "wb") as file:
            file.write(data)
        return path

    def env(self) -> dict[str, str]:
        env = {"GIT_INDEX_FILE": str(self.index), "GIT_CONFIG_GLOBAL": os.devnull}
        if self.shared:
            env["GIT_OBJECT_DIRECTORY"] = str(self.objects)
        return env

    async def git(self, *args: str, work_tree: Path, check: bool = True) -> tuple[int, str, str]:
        """git on `work_tree` with this directory, from the work tree's root."""
        return await git(
            f"--git-dir={self.path}", f"--work-tree={work_tree}", *args,
            cwd=work_tree, env=self.env(), check=check,
        )  # fmt: skip

    async def spawn(self, *args: str, work_tree: Path) -> Any:
        return await spawn_git(
            (f"--git-dir={self.path}", f"--work-tree={work_tree}", *args), work_tree, self.env()
        )

    def close(self) -> None:
        shutil.rmtree(self.path, ignore_errors=True)

    def __enter__(self) -> PrivateGitDir:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def lay_git_dir(path: Path, head: str, objects: Path, object_format: str, excludes: str = "") -> None:
    """A git directory of ours in the folder `path`: our config, HEAD (a commit id), refs, and new
    objects in its own `objects`, the repository's `objects` reached through its alternates."""
    (path / "refs").mkdir(exist_ok=True)
    (path / "info").mkdir(exist_ok=True)
    (path / "objects" / "info").mkdir(parents=True, exist_ok=True)
    extensions = f"[extensions]\n\tobjectFormat = {object_format}\n" if object_format != "sha1" else ""
    config = _OUR_CONFIG.format(version=1 if extensions else 0, devnull=os.devnull, extensions=extensions)
    replace_file(path / "config", config)
    replace_file(path / "HEAD", f"{head}\n")
    replace_file(path / "objects" / "info" / "alternates", f"{objects}\n")
    replace_file(path / "info" / "exclude", excludes)


def _delete(path: Path) -> None:
    """Delete a file, a link or a folder of ours (the fd-based rmtree follows no link inside)."""
    with contextlib.suppress(FileNotFoundError):
        if stat.S_ISDIR(os.lstat(path).st_mode):
            shutil.rmtree(path)
        else:
            os.unlink(path)


def read_small(path: Path, limit: int = 1 << 20) -> str | None:
    """A small regular file's text, never through a link nor blocking on a FIFO; None otherwise."""
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > limit:
            return None
        return os.read(fd, limit + 1).decode("utf-8", "surrogateescape")
    except OSError:
        return None
    finally:
        os.close(fd)
