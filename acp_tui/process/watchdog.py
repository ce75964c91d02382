"""A tiny process that outlives us only to end our children if we die without cleaning up.

Disposal ends every child on any orderly exit. When the supervisor itself is SIGKILLed or crashes
hard, nothing of ours runs any more, so one small process (started before our first child, in its
own session so terminal signals do not reach it) holds the read end of a pipe from us. When the pipe
reaches end-of-file, which the kernel guarantees on our death however it happens, it ends every
process that carries our supervisor mark in its environment (Linux: found through /proc, whatever
group or session it moved to, including agents still starting), and every process group we told it
about (the only way elsewhere): SIGTERM, then SIGKILL.

POSIX only (like the process groups it guards). Linux's parent-death signal would only reach our
direct children, not the grandchildren of wrapper launchers, which is why this is a process.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import signal
import subprocess
import sys

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


def _marked(token: str) -> list[int]:
    """Live processes carrying our supervisor mark (Linux)."""
    entry = f"{SUPERVISOR_MARK}={token}".encode()
    found = []
    with contextlib.suppress(OSError):
        for name in os.listdir("/proc"):
            if not name.isdigit() or int(name) == os.getpid():
                continue
            try:
                with open(f"/proc/{name}/environ", "rb") as f:
                    if entry in f.read().split(b"\0"):
                        found.append(int(name))
            except OSError:
                continue
    return found


def _serve(token: str) -> None:
    groups: set[int] = set()
    for line in sys.stdin.buffer:
        with contextlib.suppress(ValueError):
            pgid = int(line[1:])
            if line.startswith(b"+"):
                groups.add(pgid)
            else:
                groups.discard(pgid)
    # End of file: the supervisor is gone.
    import time

    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pgid in groups:
            with contextlib.suppress(OSError):
                os.killpg(pgid, sig)
        for pid in _marked(token):
            with contextlib.suppress(OSError):
                os.kill(pid, sig)
        if sig == signal.SIGTERM:
            time.sleep(KILL_AFTER)
    # What forked while we signalled: until nothing marked is left (bounded).
    for _ in range(50):
        left = _marked(token)
        if not left:
            break
        for pid in left:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.02)


if __name__ == "__main__":
    _serve(sys.argv[1] if len(sys.argv) > 1 else "")
