"""A tiny process that outlives us only to end our children if we die without cleaning up.

Disposal ends every child on any orderly exit. When the supervisor itself is SIGKILLed or crashes
hard, nothing of ours runs any more, so one small process (started before our first child, in its
own session so terminal signals do not reach it) holds the read end of a pipe from us. When the pipe
reaches end-of-file, which the kernel guarantees on our death however it happens, it ends every
process that carries our supervisor mark in its environment (Linux: found through /proc, whatever
group or session it moved to, including agents still starting), and every process group we told it
about (the only way elsewhere): SIGTERM, then SIGKILL.

Before it signals anything it reads the process table once: every process descending from a group
we told it about (by ancestry, whatever its environment says or hides) is ended with the group.
Ancestry is read before the first signal, but a leader may exit at our death (its stdin ends) before
we look, and its descendants go to init: so while a run lives, this process notes every descendant
of the groups we were told about, every WATCH_EVERY seconds. A process whose parent died earlier was
adopted by us (we are a child subreaper, see `group.become_subreaper`) and goes to init at our
death: its mark names it then, and for one that hides its environment (non-dumpable), the same note
of our children does.
(The watchdog needs no subreaper of its own: nothing descends from it.)

POSIX only (like the process groups it guards). Linux's parent-death signal would only reach our
direct children, not the grandchildren of wrapper launchers, which is why this is a process. The
process table helpers below are the standard library alone: this file runs as a script (`-I -S`)
and `group` reads the table with them too.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import signal
import subprocess
import sys
from collections.abc import Container
from typing import NamedTuple

KILL_AFTER = 0.2  # seconds between SIGTERM and SIGKILL once we are gone
WATCH_EVERY = 0.25  # seconds between two looks at what our death could hide (see `_note_ours`)
SUPERVISOR_MARK = "ACP_TUI_SUPERVISOR"  # in every child's environment: names the supervisor


class Watchdog:
    def __init__(self) -> None:
        self._process: subprocess.Popen[bytes] | None = None
        self._failed = False
        self._owner = 0
        self.token = ""

    def ensure_started(self) -> str:
        """Start the watchdog (once per process: a fork gets its own); return our supervisor mark."""
        if self._owner != os.getpid():
            self._process, self._failed, self._owner = None, False, os.getpid()
            self.token = f"{os.getpid()}-{secrets.token_hex(8)}"
            try:
                self._process = self._start(self.token)
            except OSError:
                self._failed = True  # disposal still works; only the hard-crash guarantee is lost
        return self.token

    def watch(self, pgid: int) -> None:
        self._send(f"+{pgid}\n")

    def forget(self, pgid: int) -> None:
        self._send(f"-{pgid}\n")

    def _send(self, line: str) -> None:
        if self._failed or self._process is None or self._owner != os.getpid():
            return
        try:
            assert self._process.stdin is not None
            self._process.stdin.write(line.encode())
            self._process.stdin.flush()
        except OSError:
            self._failed = True

    @staticmethod
    def _start(token: str) -> subprocess.Popen[bytes]:
        return subprocess.Popen(
            [sys.executable, "-I", "-S", __file__, token],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            env={"PATH": os.environ.get("PATH", "")},
        )


watchdog = Watchdog()


STAT_BYTES = 4096  # /proc/PID/stat: 52 numbers and a name of 64 bytes at most


class Proc(NamedTuple):
    """A process as /proc/PID/stat tells it (readable for any process of the machine)."""

    ppid: int
    group: int
    session: int
    started: int  # clock ticks since boot
    dead: bool  # a zombie (or being reaped): nothing of it runs


def read_proc(pid: int) -> Proc | None:
    # A scan reads this for every process of the machine: plain system calls, half the time of a
    # buffered file object.
    try:
        fd = os.open(f"/proc/{pid}/stat", os.O_RDONLY)
    except OSError:
        return None
    try:
        stat = os.read(fd, STAT_BYTES)
    except OSError:
        return None
    finally:
        os.close(fd)
    # "pid (comm) state ppid pgrp session ... starttime ...": comm may hold spaces and parentheses.
    fields = stat[stat.rfind(b")") + 2 :].split()
    if len(fields) < 20:
        return None
    # /proc says Z of a process whose main thread exited while its other threads run on: that one
    # is alive (it ignores what a zombie cannot), and only the thread count tells it apart.
    dead = fields[0] in (b"Z", b"X") and int(fields[17]) <= 1
    return Proc(int(fields[1]), int(fields[2]), int(fields[3]), int(fields[19]), dead)


def process_table() -> dict[int, Proc]:
    """Every process of the machine now, zombies included (`dead` says so)."""
    table = {}
    with contextlib.suppress(OSError):
        for entry in os.scandir("/proc"):
            if entry.name.isdigit() and (proc := read_proc(int(entry.name))) is not None:
                table[int(entry.name)] = proc
    return table


def read_environ(pid: int) -> list[bytes] | None:
    """Its environment entries, or None when it is not ours to read (or gone). A process whose main
    thread exited has none of its own in /proc: ESRCH, nothing, or EACCES even to its owner (so any
    failure is tried again through its other threads, which have it)."""
    data = _read(f"/proc/{pid}/environ")
    if not data:
        with contextlib.suppress(OSError):
            for task in os.scandir(f"/proc/{pid}/task"):
                data = _read(f"{task.path}/environ") or data
                if data:
                    break
    return None if data is None else data.split(b"\0")


def _read(path: str) -> bytes | None:
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError:
        return None


def real_uid(pid: int) -> int | None:
    """Its real user id (the owner of its /proc files is root once it is non-dumpable)."""
    try:
        with open(f"/proc/{pid}/status", "rb") as f:
            for line in f:
                if line.startswith(b"Uid:"):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return None


def descends(pid: int, table: dict[int, Proc], roots: Container[int]) -> bool:
    """Whether `pid` is one of `roots` or their descendant, by the parent links of `table`."""
    seen: set[int] = set()
    while pid not in roots:
        proc = table.get(pid)
        if proc is None or pid in seen or proc.ppid <= 1:
            return False
        seen.add(pid)
        pid = proc.ppid
    return True


def _ours(token: str, groups: set[int], known: dict[int, int]) -> dict[int, int]:
    """Live processes to end: of our groups or sessions, descending from their leaders or from one
    found before, or carrying our supervisor mark. pid -> start time (a reused pid is not ours)."""
    table = process_table()
    entry = f"{SUPERVISOR_MARK}={token}".encode()
    roots = groups | {pid for pid, started in known.items() if pid in table and table[pid].started == started}
    found = {}
    for pid, proc in table.items():
        if proc.dead or pid == os.getpid():
            continue
        if (
            proc.group in groups
            or proc.session in groups
            or descends(pid, table, roots)
            or entry in (read_environ(pid) or ())
        ):
            found[pid] = proc.started
    return found


def _signal(found: dict[int, int], groups: set[int], sig: signal.Signals) -> None:
    for pgid in groups:
        with contextlib.suppress(OSError):
            os.killpg(pgid, sig)
    for pid in found:
        with contextlib.suppress(OSError):
            os.kill(pid, sig)


def children(pid: int) -> list[int]:
    """Its live children, as each of its threads' /proc entry lists them (empty when it is gone)."""
    found: list[int] = []
    with contextlib.suppress(OSError):
        for task in os.scandir(f"/proc/{pid}/task"):
            with contextlib.suppress(OSError, ValueError), open(f"{task.path}/children", "rb") as f:
                found += [int(child) for child in f.read().split()]
    return found


def _note_ours(supervisor: int, noted: dict[int, int], groups: set[int]) -> None:
    """Note what is ours that our death could hide: every descendant of a run's leader (the leader
    may exit before we look, taking the ancestry with it), and the supervisor's children that hide
    their environment (orphans it adopted, as a subreaper, from a run: at its death they go to init,
    and only this note names them then). pid -> start time, so a reused pid is not ours."""
    for pid, started in list(noted.items()):
        if (proc := read_proc(pid)) is None or proc.started != started:
            del noted[pid]
    uid = os.getuid()
    for pid in children(supervisor):
        hidden = pid not in noted and pid not in groups and read_environ(pid) is None
        if hidden and real_uid(pid) == uid and (proc := read_proc(pid)) is not None:
            noted[pid] = proc.started
    below, seen = list(groups), set(groups)
    while below:
        for pid in children(below.pop()):
            if pid not in seen and (proc := read_proc(pid)) is not None:
                seen.add(pid)
                below.append(pid)
                noted.setdefault(pid, proc.started)


def _serve(token: str) -> None:
    import select
    import time

    supervisor = os.getppid()
    groups: set[int] = set()
    noted: dict[int, int] = {}
    pending = b""
    looked = time.monotonic()
    while True:
        # Orphans come from runs: with none live there is nothing to look at, and no wake-up.
        readable, _, _ = select.select([sys.stdin.buffer], [], [], WATCH_EVERY if groups else None)
        if readable:
            data = os.read(sys.stdin.fileno(), 4096)
            if not data:
                break
            *lines, pending = (pending + data).split(b"\n")
            for line in lines:
                with contextlib.suppress(ValueError):
                    pgid = int(line[1:])
                    if line.startswith(b"+"):
                        groups.add(pgid)
                    else:
                        groups.discard(pgid)
        if groups and time.monotonic() - looked >= WATCH_EVERY:
            _note_ours(supervisor, noted, groups)
            looked = time.monotonic()
    # End of file: the supervisor is gone. Ancestry first, while the leaders may still hold it.
    found = _ours(token, groups, noted)
    _signal(found, groups, signal.SIGTERM)
    time.sleep(KILL_AFTER)
    found |= _ours(token, groups, found)
    _signal(found, groups, signal.SIGKILL)
    # What forked while we signalled: until nothing of ours is left (bounded).
    for _ in range(50):
        left = _ours(token, groups, found)
        if not left:
            break
        found |= left
        _signal(left, set(), signal.SIGKILL)
        time.sleep(0.02)


if __name__ == "__main__":
    _serve(sys.argv[1] if len(sys.argv) > 1 else "")
