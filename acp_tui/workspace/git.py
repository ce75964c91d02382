"""Running git: every call of ours goes through here."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

# Variables that would point git at another repository, index or work tree than the one we name.
_GIT_LOCATION_VARS = (
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_COMMON_DIR",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_NAMESPACE",
    "GIT_CEILING_DIRECTORIES",
)


HOOKS_OFF = ("-c", f"core.hooksPath={os.devnull}")


class IsolationError(Exception):
    """Isolation cannot be had (git missing, not a repository, bare, bad base): one line to show."""


class GitFailed(IsolationError):
    def __init__(self, message: str, returncode: int, stderr: str) -> None:
        super().__init__(message)
        self.returncode = returncode
        self.stderr = stderr


def git_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in _GIT_LOCATION_VARS}
    env.update(GIT_TERMINAL_PROMPT="0", GIT_OPTIONAL_LOCKS="0", LC_ALL="C")
    if extra:
        env.update(extra)
    return env


async def spawn_git(args: Sequence[str], cwd: Path | None, env: Mapping[str, str] | None) -> Any:
    try:
        return await asyncio.create_subprocess_exec(
            "git",
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
