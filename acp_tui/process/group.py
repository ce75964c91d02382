"""The child process: spawned in its own process group, marked, its pipes drained, ended with every
descendant.

Why a group: agents are often launched through wrappers (`sh -c`, `npx`, `uv run`); killing only the
wrapper leaves the real agent holding our pipes. `start_new_session=True` makes the child the leader
of a fresh group, and every signal here goes to the whole group.

Why a mark: a descendant can leave the group (a double fork and `setsid`, `setpgid`, Node's
`spawn(..., {detached: true})`). Every child gets two environment variables, inherited by all its
descendants whatever their group or session: `ACP_TUI_SUPERVISOR` (this process) and `ACP_TUI_RUN`
(this run). Ending a run ends its group and every process carrying its run mark; the watchdog ends
every process carrying our supervisor mark when we die. Found through `/proc/<pid>/environ`
(Linux). Limits: a descendant that scrubs its own environment *and* leaves the group is not found
(cgroups would be the cure); on macOS (no /proc) only the group is ended.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import signal
import sys
import weakref
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from acp_tui.process.watchdog import SUPERVISOR_MARK, watchdog

READ_SIZE = 1 << 16
RUN_MARK = "ACP_TUI_RUN"
MAX_STDERR_LINE_BYTES = 1 << 16  # a longer stderr line is cut here (the run masks, then cuts more)
_run_numbers = itertools.count(1)


class _ChildProtocol(asyncio.subprocess.SubprocessStreamProtocol):
    """Notices the leader's exit as it happens. Python 3.11's `Process.wait()` also waits for the
    pipes to close, which never happens while a wrapper's grandchild still holds them."""

    def __init__(self, limit: int, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__(limit=limit, loop=loop)
        self.exited: asyncio.Future[None] = loop.create_future()

    def process_exited(self) -> None:
        super().process_exited()
        if not self.exited.done():
            self.exited.set_result(None)


@dataclass(frozen=True)
class Child:
    """A spawned agent: its pipes, the group it leads (pgid == pid), and its run mark."""

    process: asyncio.subprocess.Process
    exited: asyncio.Future[None]
    mark: str  # the value of ACP_TUI_RUN in its environment and its descendants'
    started: int  # its start time (clock ticks since boot): descendants start no earlier

    @property
    def pid(self) -> int:
        return self.process.pid

    @property
    def returncode(self) -> int | None:
        return self.process.returncode

    async def wait_exit(self, timeout: float | None = None) -> int | None:
        """The leader's return code once it has exited, or None if `timeout` passed first."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(self.exited), timeout)
        return self.process.returncode


class _OnePerTurn:
    """Lets one waiter through per turn of the event loop."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._waiting: deque[asyncio.Future[None]] = deque()
        self._releasing = False

    async def wait(self) -> None:
        waiter = self._loop.create_future()
        self._waiting.append(waiter)
        if not self._releasing:
            self._releasing = True
            self._loop.call_soon(self._release)
        await waiter

    def _release(self) -> None:
        while self._waiting:
            waiter = self._waiting.popleft()
            if not waiter.done():  # not given up (a cancelled run)
                waiter.set_result(None)
                break
        self._releasing = bool(self._waiting)
        if self._releasing:
            self._loop.call_soon(self._release)


_spawn_turns: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _OnePerTurn] = weakref.WeakKeyDictionary()


async def spawn(command: str, args: Sequence[str], *, cwd: str, env: Mapping[str, str]) -> Child:
    """Start the child with piped stdio as the leader of a new session (and process group), marked.

    One spawn per turn of the event loop: a spawn holds the loop for 10 to 25 ms (fork, exec, a
    watcher thread), and sixteen runs started together did all of theirs in one turn, freezing the
    screen for a third of a second. Taking turns, the screen and key presses go on in between.
    """
    loop = asyncio.get_running_loop()
    if loop not in _spawn_turns:
        _spawn_turns[loop] = _OnePerTurn(loop)
    await _spawn_turns[loop].wait()
    # The watchdog runs before the child exists, so that our death at any moment from here on
    # ends it: it finds the child by its mark, with nothing to register first.
    token = watchdog.ensure_started()
    mark = f"{token}.{next(_run_numbers)}"
    protocol = _ChildProtocol(limit=1 << 16, loop=loop)
    transport, _ = await loop.subprocess_exec(
        lambda: protocol,
        command,
        *args,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        cwd=cwd,
        env={**env, SUPERVISOR_MARK: token, RUN_MARK: mark},
        start_new_session=True,
    )
    process = asyncio.subprocess.Process(transport, protocol, loop)
    child = Child(process, protocol.exited, mark, start_time(process.pid))
    watchdog.watch(child.pid)
    return child


def close_pipes(child: Child) -> None:
    """Close our ends of the child's pipes, so a stray holder cannot keep our descriptors."""
    transport = getattr(child.process, "_transport", None)
    if transport is not None:
        with contextlib.suppress(Exception):
            transport.close()


def spawn_error_message(exc: OSError, command: str, cwd: str) -> str:
    if isinstance(exc, FileNotFoundError) and exc.filename == cwd:
        return f"working directory not found: {cwd}"
    if isinstance(exc, FileNotFoundError):
        return f"command not found: {command}"
    if isinstance(exc, PermissionError):
        return f"command not executable: {command}"
    return f"could not start {command}: {exc.strerror or exc}"


async def drain_lines(source: asyncio.StreamReader, on_line: Callable[[str], None]) -> None:
    """Read the child's stderr to its end, so a chatty child never blocks on a full pipe. Lines come
    whole up to MAX_STDERR_LINE_BYTES: the caller masks secrets before it cuts them shorter."""
    partial = b""
    limit = MAX_STDERR_LINE_BYTES
    while chunk := await source.read(READ_SIZE):
        lines = (partial + chunk).split(b"\n")
        partial = lines.pop()[:limit]
        for line in lines:
            on_line(line[:limit].decode("utf-8", "replace").rstrip("\r"))
        await asyncio.sleep(0)
    if partial:
        on_line(partial.decode("utf-8", "replace").rstrip("\r"))


def signal_group(pgid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


def _proc_pids() -> Iterable[int]:
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            yield int(entry.name)


def _stat(pid: int) -> tuple[int, int] | None:
    """(process group, start time in clock ticks since boot) of `pid` if it runs, else None
    (zombies are dead)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return None
    # "pid (comm) state ppid pgrp ... starttime ...": comm may hold spaces and parentheses.
    fields = stat[stat.rfind(b")") + 2 :].split()
    if len(fields) < 20 or fields[0] in (b"Z", b"X"):
        return None
    return int(fields[2]), int(fields[19])


def start_time(pid: int) -> int:
    """When `pid` started (clock ticks since boot; 0 where unknown): its descendants start later."""
    stat = _stat(pid) if sys.platform.startswith("linux") else None
    return stat[1] if stat else 0


def _carries(pid: int, entry: bytes) -> bool:
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            return entry in f.read().split(b"\0")
    except OSError:  # gone, or not ours to read
        return False


def survivors(child: Child) -> list[int]:
    """Every live process of the child's group, and (Linux) every live one carrying its run mark.

    Only processes started since the child can be its descendants: the environments of the others
    are never read, so a scan costs little on a busy machine.
    """
    pgid = child.pid
    if not sys.platform.startswith("linux"):
        return [pgid] if _group_signalable(pgid) else []
    entry = f"{RUN_MARK}={child.mark}".encode()
    found = []
    for pid in _proc_pids():
        stat = _stat(pid)
        if stat is None:
            continue
        group, started = stat
        if group == pgid or (started >= child.started and _carries(pid, entry)):
            found.append(pid)
    return found


def group_alive(pgid: int) -> bool:
    """Whether any process of the group still runs (zombies do not count: they are dead)."""
    if not sys.platform.startswith("linux"):
        return _group_signalable(pgid)
    return any((stat := _stat(pid)) is not None and stat[0] == pgid for pid in _proc_pids())


def _group_signalable(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    return True


def signal_all(pgid: int, pids: Iterable[int], sig: signal.Signals) -> None:
    """Signal the group and each of `pids` (the marked ones that left it)."""
    signal_group(pgid, sig)
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, sig)


async def wait_all_gone(child: Child, timeout: float) -> bool:
    """Poll until nothing of the group and nothing marked runs. Only strays make this loop at all."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    delay = 0.002
    while survivors(child):
        if loop.time() >= deadline:
            return False
        await asyncio.sleep(delay)
        delay = min(delay * 2, 0.05)
    return True


async def terminate_group(
    child: Child,
    *,
    term_grace: float,
    exit_grace: float = 0.0,
    on_step: Callable[[str], None] = lambda step: None,
) -> str:
    """End the child's group and every marked descendant: let them exit by themselves for
    `exit_grace` (the child has seen stdin EOF), then SIGTERM, then SIGKILL what is left after
    `term_grace`. Returns once all is gone, saying how it ended: `exit`, `sigterm` or `sigkill`.
    `on_step` hears `sigterm` and `sigkill` as they are sent."""
    try:
        return await _terminate(child, term_grace=term_grace, exit_grace=exit_grace, on_step=on_step)
    finally:
        watchdog.forget(child.pid)


async def _terminate(
    child: Child, *, term_grace: float, exit_grace: float, on_step: Callable[[str], None]
) -> str:
    pgid = child.pid
    if exit_grace > 0:
        await child.wait_exit(exit_grace)
    left = survivors(child)
    if child.returncode is not None and not left:
        return "exit"
    loop = asyncio.get_running_loop()
    deadline = loop.time() + term_grace
    on_step("sigterm")
    signal_all(pgid, left, signal.SIGTERM)
    if await child.wait_exit(term_grace) is not None and await wait_all_gone(child, deadline - loop.time()):
        return "sigterm"
    on_step("sigkill")
    signal_all(pgid, survivors(child), signal.SIGKILL)
    await child.wait_exit()
    if not await wait_all_gone(child, 1.0):  # a marked one forked while we killed: once more
        signal_all(pgid, survivors(child), signal.SIGKILL)
        await wait_all_gone(child, 4.0)
    return "sigkill"
