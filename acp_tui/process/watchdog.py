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
Ancestry is read before the first signal, while the leaders still hold their descendants; a process
whose parent died earlier was adopted by us (see `group.become_subreaper`) and, at our death, by
init: only its mark can name it then.

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


class Proc(NamedTuple):
    """A process as /proc/PID/stat tells it (readable for any process of the machine)."""

    ppid: int
    group: int
    session: int
    started: int  # clock ticks since boot
    zombie: bool


def read_proc(pid: int) -> Proc | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return None
    # "pid (comm) state ppid pgrp session ... starttime ...": comm may hold spaces and parentheses.
    fields = stat[stat.rfind(b")") + 2 :].split()
    if len(fields) < 20:
        return None
    zombie = fields[0] in (b"Z", b"X")
    return Proc(int(fields[1]), int(fields[2]), int(fields[3]), int(fields[19]), zombie)


def process_table() -> dict[int, Proc]:
    """Every process of the machine now, zombies included (they are dead: `zombie` says so)."""
    table = {}
    with contextlib.suppress(OSError):
        for entry in os.scandir("/proc"):
            if entry.name.isdigit() and (proc := read_proc(int(entry.name))) is not None:
                table[int(entry.name)] = proc
    return table


def read_environ(pid: int) -> list[bytes] | None:
    """Its environment entries, or None when it is not ours to read (or gone)."""
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            return f.read().split(b"\0")
    except OSError:
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
        if proc.zombie or pid == os.getpid():
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


def _serve(token: str) -> None:
    groups: set[int] = set()
    for line in sys.stdin.buffer:
        with contextlib.suppress(ValueError):
            pgid = int(line[1:])
            if line.startswith(b"+"):
                groups.add(pgid)
            else:
                groups.discard(pgid)
    # End of file: the supervisor is gone. Ancestry first, while the leaders still hold it.
    import time

    found = _ours(token, groups, {})
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
