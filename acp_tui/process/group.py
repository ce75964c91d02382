"""The child process: spawned in its own process group, marked, its pipes drained, ended with every
descendant.

Why a group: agents are often launched through wrappers (`sh -c`, `npx`, `uv run`); killing only the
wrapper leaves the real agent holding our pipes. `start_new_session=True` makes the child the leader
of a fresh group, and every signal here goes to the whole group.

Why more than a group: a descendant can leave it (a double fork and `setsid`, `setpgid`, Node's
`spawn(..., {detached: true})`). So a run's processes are also found (Linux, through /proc):
- by ancestry: we are a child subreaper (`become_subreaper`), so a descendant whose parent dies is
  adopted by us, not by init, and stays in our tree whatever its environment says or hides;
- by mark: every child gets two environment variables, inherited by all its descendants whatever
  their group or session: `ACP_TUI_SUPERVISOR` (this process) and `ACP_TUI_RUN` (this run);
- by what it hides: a process of our tree started since the run's child, of our user, whose
  environment we may not read (it made itself non-dumpable) counts as a stray of that run.
Ending a run ends its group and all of these; the watchdog ends every process of ours when we die.
Those we adopted are ours to wait() for: we reap the ones we ended, and only them (asyncio waits for
the children it spawned). Limits: a descendant that scrubs its own environment, leaves the group and
session *and* whose parent died is not found (the sandbox's PID namespace is the cure); on macOS (no
/proc) only the group is ended.
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
from dataclasses import dataclass, field
from typing import Protocol

from acp_tui.compat import ExitNoticingProtocol, process_of
from acp_tui.process.watchdog import (
    SUPERVISOR_MARK,
    Proc,
    children,
    process_table,
    read_environ,
    read_proc,
    real_uid,
    watchdog,
)

READ_SIZE = 1 << 16
RUN_MARK = "ACP_TUI_RUN"
MAX_STDERR_LINE_BYTES = 1 << 16  # a longer stderr line is cut here (the run masks, then cuts more)
PR_SET_CHILD_SUBREAPER = 36
_run_numbers = itertools.count(1)
_leaders: set[int] = set()  # the children of live runs: ancestry stops at the first one met


class Holding(Protocol):
    """What a child holds until its processes are gone (a confined one's: `process.confined`)."""

    on_refused: Callable[[str, int], None]  # a connection its sandbox refused: (host, port)

    async def serve(self) -> None: ...  # while the child lives (cancelled at its end)
    async def aclose(self) -> None: ...  # once its processes are gone


class Stdin(Protocol):
    """What writes an agent's stdin: a pipe's StreamWriter, or a link's (`process.link`)."""

    def write(self, data: bytes) -> None: ...
    async def drain(self) -> None: ...
    def close(self) -> None: ...


class FarEnd(Protocol):
    """An agent on the far side of a link (`process.link.Link`), whose carrier's client is the
    child here: the agent's stdin and stderr as the run sees them, its exit code and cwd as the
    far side says them, its end there, and why the link failed."""

    @property
    def stdin(self) -> Stdin: ...
    @property
    def stderr(self) -> asyncio.StreamReader: ...
    @property
    def returncode(self) -> int | None: ...

    async def serve(self) -> None: ...  # while the client lives: the heartbeats, the far side's words
    async def ready(self) -> str: ...  # the agent runs there, in this cwd (LinkFailed: it never will)
    async def end(self, *, term_grace: float, exit_grace: float, on_step: Callable[[str], None]) -> str: ...
    def failure(self) -> str | None: ...
    def unreached(self, timeout: float) -> str | None: ...


@dataclass(frozen=True)
class Child:
    """A spawned agent: its pipes, the group it leads (pgid == pid), and its run mark. With `far`,
    the process here is a carrier's client (ssh, docker, kubectl) and the agent runs over there."""

    process: asyncio.subprocess.Process
    exited: asyncio.Future[None]
    transport: asyncio.SubprocessTransport = field(compare=False, repr=False)  # its pipes, to close
    mark: str  # the value of ACP_TUI_RUN in its environment and its descendants'
    started: int  # its start time (clock ticks since boot): descendants start no earlier
    # Every process found of this run (pid -> start time): still its own once it lost its parent.
    found: dict[int, int] = field(default_factory=dict, compare=False, repr=False)
    holding: Holding | None = field(default=None, compare=False, repr=False)
    far: FarEnd | None = field(default=None, compare=False, repr=False)

    @property
    def pid(self) -> int:
        return self.process.pid

    @property
    def stdin(self) -> Stdin:
        stdin = self.far.stdin if self.far is not None else self.process.stdin
        assert stdin is not None
        return stdin

    @property
    def stdout(self) -> asyncio.StreamReader:
        assert self.process.stdout is not None
        return self.process.stdout

    @property
    def stderr(self) -> asyncio.StreamReader:
        stderr = self.far.stderr if self.far is not None else self.process.stderr
        assert stderr is not None
        return stderr

    @property
    def returncode(self) -> int | None:
        """The agent's exit code (None while it runs; with `far`, also when a lost link never
        said it)."""
        return self.far.returncode if self.far is not None else self.process.returncode

    async def wait_exit(self, timeout: float | None = None) -> int | None:
        """The leader's return code once it has exited, or None if `timeout` passed first (with
        `far`: the carrier's client's)."""
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


async def spawn(
    command: str,
    args: Sequence[str],
    *,
    cwd: str,
    env: Mapping[str, str],
    pass_fds: Sequence[int] = (),
    preexec: Callable[[], None] | None = None,
    holding: Holding | None = None,
) -> Child:
    """Start the child with piped stdio as the leader of a new session (and process group), marked;
    of our descriptors it inherits `pass_fds` only. `preexec` runs in the child before its exec: a
    few system calls at most (see `landlock`), since our other threads' locks are not its own.

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
    become_subreaper()
    mark = f"{token}.{next(_run_numbers)}"
    protocol = ExitNoticingProtocol(limit=1 << 16, loop=loop)
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
        pass_fds=pass_fds,
        preexec_fn=preexec,
    )
    process = process_of(transport, protocol, loop)
    child = Child(process, protocol.exited, transport, mark, start_time(process.pid), holding=holding)
    _leaders.add(child.pid)
    watchdog.watch(child.pid)
    return child


_subreaper = False


def become_subreaper() -> None:
    """Make orphans of our descendants ours (Linux, once per process; not inherited by children):
    reparented to us instead of init, they stay in our tree, where ancestry finds them."""
    global _subreaper
    if _subreaper or not sys.platform.startswith("linux"):
        return
    _subreaper = True
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    except (OSError, AttributeError):  # then marks and groups still find them, as before
        pass


def close_pipes(child: Child) -> None:
    """Close our ends of the child's pipes, so a stray holder cannot keep our descriptors."""
    with contextlib.suppress(Exception):
        child.transport.close()


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


def start_time(pid: int) -> int:
    """When `pid` started (clock ticks since boot; 0 where unknown): its descendants start later."""
    proc = read_proc(pid) if sys.platform.startswith("linux") else None
    return proc.started if proc else 0


def survivors(child: Child) -> list[int]:
    """Every live process of the run (Linux; elsewhere its group): of the child's group or session,
    descending from it, carrying its run mark, or a stray of ours that hides its environment.

    Only processes started since the child can be its descendants: the environments of the others
    are never read, so a scan costs little on a busy machine.
    """
    if not sys.platform.startswith("linux"):
        return [child.pid] if _group_signalable(child.pid) else []
    table = process_table()
    # What an earlier scan found stays the run's, and so does what descends from it.
    owners: dict[int, int | None] = {
        pid: child.pid
        for pid, started in child.found.items()
        if pid in table and table[pid].started == started
    }
    me = os.getpid()
    entry = f"{RUN_MARK}={child.mark}".encode()
    found = []
    for pid, proc in table.items():
        if proc.dead or pid == me or not _of_the_run(child, pid, proc, table, owners, entry):
            continue
        found.append(pid)
        child.found[pid] = proc.started
    return found


def _of_the_run(
    child: Child, pid: int, proc: Proc, table: dict[int, Proc], owners: dict[int, int | None], entry: bytes
) -> bool:
    if proc.group == child.pid or proc.session == child.pid:
        return True
    if proc.started < child.started:
        return False
    owner = _owner(pid, table, owners)
    if owner == child.pid:
        return True
    if owner in _leaders:  # another run's
        return False
    environ = read_environ(pid)
    if environ is not None:
        return entry in environ
    # Hidden from us (non-dumpable): ours if we adopted it, started since the child, of our user.
    return owner == os.getpid() and real_uid(pid) == os.getuid()


def _owner(pid: int, table: dict[int, Proc], owners: dict[int, int | None]) -> int | None:
    """The first run child (or, for a process we adopted or spawned, us) among `pid` and its
    ancestors; None outside our tree. `owners` remembers the answers of one scan."""
    me = os.getpid()
    path: list[int] = []
    owner: int | None = None
    while True:
        if pid in owners:
            owner = owners[pid]
            break
        if pid in _leaders or pid == me:
            owner = pid
            break
        proc = table.get(pid)
        if proc is None or proc.ppid <= 1 or pid in path:
            break
        path.append(pid)
        pid = proc.ppid
    for step in path:
        owners[step] = owner
    return owner


def _reap_adopted(child: Child) -> None:
    """wait() for the processes of the run we adopted and that are dead: found by a scan (checked
    by start time: a reused pid is not theirs), or of its group or session. Never for the child
    itself, nor for any process we did not adopt: asyncio waits for those."""
    if not sys.platform.startswith("linux"):
        return
    for pid in children(os.getpid()):  # ours alone, not every process of the machine
        if pid == child.pid or pid in _leaders:  # runs' children: asyncio waits for them
            continue
        proc = read_proc(pid)
        if proc is None or not proc.dead:
            continue
        ours = child.found.get(pid) == proc.started or child.pid in (proc.group, proc.session)
        if ours:
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, os.WNOHANG)


def group_alive(pgid: int) -> bool:
    """Whether any process of the group still runs (zombies do not count)."""
    if not sys.platform.startswith("linux"):
        return _group_signalable(pgid)
    return any(proc.group == pgid and not proc.dead for proc in process_table().values())


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
    `on_step` hears `sigterm` and `sigkill` as they are sent. With `far`, the far side ends the
    agent's group first (said the same way), then the client here is ended like any child."""
    try:
        if child.far is not None:
            how = await child.far.end(term_grace=term_grace, exit_grace=exit_grace, on_step=on_step)
            await _terminate(child, term_grace=term_grace, exit_grace=0.0, on_step=lambda step: None)
            return how
        return await _terminate(child, term_grace=term_grace, exit_grace=exit_grace, on_step=on_step)
    finally:
        _reap_adopted(child)
        _leaders.discard(child.pid)
        watchdog.forget(child.pid)


async def _terminate(
    child: Child, *, term_grace: float, exit_grace: float, on_step: Callable[[str], None]
) -> str:
    pgid = child.pid
    loop = asyncio.get_running_loop()
    if exit_grace > 0:
        # What outlives the leader may be going by itself (a sandbox's init reports the agent's exit
        # before its own): the same grace for all.
        deadline = loop.time() + exit_grace
        exited = await child.wait_exit(exit_grace) is not None
        if exited and await wait_all_gone(child, deadline - loop.time()):
            return "exit"  # (its last scan found nothing: no second one)
    left = survivors(child)
    if child.process.returncode is not None and not left:
        return "exit"
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
