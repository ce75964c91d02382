"""Landlock's abstract unix socket scope (ABI 6, Linux 6.12): a process confined by it, and all it
starts, can connect to no abstract unix socket made outside its domain (X11's `@/tmp/.X11-unix/X0`,
a `unix:abstract=` D-Bus bus), while the network stays the host's.

It is applied to the sandbox's child between fork and exec, before bwrap: a Landlock domain that
handles file-system access forbids mounts, which stops bwrap ("Failed to make / slave: Operation not
permitted"), but one with a scope only leaves them alone, so bwrap sets the sandbox up inside it and
everything in it inherits the scope. The ruleset is made here, in our process; the child only calls
`prctl` and `landlock_restrict_self` (with the sandbox's `keyctl` before them: see
`sandbox._InChild`), where a launcher process in between would cost a Python start on every run
(15 ms in a quiet moment here, a fourth of a confined start; far more under load).

A fork of a process with threads (the app's) can leave the child waiting on a lock another thread
held at the fork. Not this one: CPython takes the import lock and the GIL across the fork and makes
its own locks new in the child (`PyOS_AfterFork_Child`); the child then runs three system calls
through functions bound beforehand, allocating nothing, logging nothing, importing nothing. Tried:
300 confined spawns while four threads logged, reloaded a module, called through ctypes and
allocated, all the time; none hung.
"""

from __future__ import annotations

import ctypes
import os
import struct
import sys

SCOPE_ABI = 6  # LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET came with it
FAILED = b"sandbox: Landlock could not scope the agent's abstract unix sockets\n"

_CREATE_RULESET, _RESTRICT_SELF = 444, 446  # the same numbers on every architecture
_CREATE_RULESET_VERSION = 1
_SCOPE_ABSTRACT_UNIX_SOCKET = 1
_PR_SET_NO_NEW_PRIVS = 38


def abi() -> int:
    """The kernel's Landlock ABI version; 0 where it has none (or is no Linux)."""
    if not sys.platform.startswith("linux"):
        return 0
    try:
        version = int(_libc().syscall(_CREATE_RULESET, None, 0, _CREATE_RULESET_VERSION))
    except (OSError, AttributeError):
        return 0
    return max(version, 0)


class AbstractSocketScope:
    """The scope's ruleset, made here (its descriptor closes on exec: the agent never holds it);
    `apply()` in the child confines it; `close()` here once the child is spawned."""

    def __init__(self) -> None:
        libc = _libc()
        # struct landlock_ruleset_attr: handled_access_fs, handled_access_net, scoped (u64 each)
        attr = ctypes.create_string_buffer(struct.pack("=QQQ", 0, 0, _SCOPE_ABSTRACT_UNIX_SOCKET))
        self._fd = int(libc.syscall(_CREATE_RULESET, attr, len(attr.raw), 0))
        if self._fd < 0:
            raise OSError(ctypes.get_errno(), "Landlock refused the abstract socket scope")
        # Bound here, so that the child does nothing but call them.
        self._prctl, self._syscall = libc.prctl, libc.syscall

    def apply(self) -> None:
        """In the child, between fork and exec. A failure says so on stderr (the run's error, see
        `sandbox.failure_message`) and ends the child: never unconfined instead."""
        confined = self._prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0
        if not confined or self._syscall(_RESTRICT_SELF, self._fd, 0) != 0:
            os.write(2, FAILED)
            os._exit(1)

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)
