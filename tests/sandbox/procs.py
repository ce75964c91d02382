"""Processes as /proc tells them, in the standard library alone: `supervise.py` runs without pytest."""

from __future__ import annotations

import contextlib
import os


def by_command_line(tag: str) -> list[int]:
    """Live processes of the machine whose command line holds `tag` (readable even when hidden)."""
    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        with contextlib.suppress(OSError):
            with open(f"/proc/{entry.name}/cmdline", "rb") as f:
                if tag.encode() not in f.read().split(b"\0"):
                    continue
            if alive(int(entry.name)):
                found.append(int(entry.name))
    return found


def main_thread_exited(pid: int) -> bool:
    """Its main thread is a zombie: the process too, unless its other threads run (`alive`)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b") ", 1)[1][:1] == b"Z"
    except OSError:
        return False


def alive(pid: int) -> bool:
    """Not dead: a zombie is, unless it is a process whose main thread exited while others run."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return False
    fields = stat[stat.rfind(b")") + 2 :].split()
    return fields[0] not in (b"Z", b"X") or int(fields[17]) > 1  # its threads


def zombie_children() -> list[int]:
    """Our children that died and were never waited for."""
    found = []
    for entry in os.scandir("/proc"):
        with contextlib.suppress(OSError, ValueError, IndexError):
            with open(f"/proc/{entry.name}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
            if fields[0] == b"Z" and int(fields[1]) == os.getpid():
                found.append(int(entry.name))
    return found
