"""A tiny process that outlives us only to end our children if we die without cleaning up.

Disposal ends every child on any orderly exit. When the supervisor itself is SIGKILLed or crashes
hard, nothing of ours runs any more, so one small process (started once, lazily, in its own session
so terminal signals do not reach it) holds the read end of a pipe from us. We tell it each child's
process group as it starts and ends; when the pipe reaches end-of-file, which the kernel guarantees
on our death however it happens, it signals every group still registered: SIGTERM, then SIGKILL.

POSIX only (like the process groups it guards). Linux's parent-death signal would only reach our
direct children, not the grandchildren of wrapper launchers, which is why this is a process.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys

KILL_AFTER = 0.2  # seconds between SIGTERM and SIGKILL once we are gone


class Watchdog:
    def __init__(self) -> None:
        self._process: subprocess.Popen[bytes] | None = None
        self._failed = False

    def watch(self, pgid: int) -> None:
        self._send(f"+{pgid}\n")

    def forget(self, pgid: int) -> None:
        self._send(f"-{pgid}\n")

    def _send(self, line: str) -> None:
        if self._failed:
            return
        try:
            if self._process is None:
                self._process = self._start()
            assert self._process.stdin is not None
            self._process.stdin.write(line.encode())
            self._process.stdin.flush()
        except OSError:
            self._failed = True  # disposal still works; only the hard-crash guarantee is lost

    @staticmethod
    def _start() -> subprocess.Popen[bytes]:
        return subprocess.Popen(
            [sys.executable, "-I", "-S", __file__],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            env={"PATH": os.environ.get("PATH", "")},
        )


watchdog = Watchdog()


def _serve() -> None:
    groups: set[int] = set()
    for line in sys.stdin.buffer:
        with contextlib.suppress(ValueError):
            pgid = int(line[1:])
            if line.startswith(b"+"):
                groups.add(pgid)
            else:
                groups.discard(pgid)
    # End of file: the supervisor is gone.
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pgid in groups:
            with contextlib.suppress(OSError):
                os.killpg(pgid, sig)
        if groups and sig == signal.SIGTERM:
            import time

            time.sleep(KILL_AFTER)


if __name__ == "__main__":
    _serve()
