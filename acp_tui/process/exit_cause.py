"""Why a child failed: its start in words (`spawn_error_message`, here and in our shim on the far
side of a link), and which line of its stderr says why it failed.

The last line rarely does: a crash ends with its backtrace (`at ./misc/../sysdeps/unix/sysv/linux/
x86_64/clone3.S:81:0`), while the cause came before it (`.../.codex/config.toml: Read-only file
system`). The line named is the last error-like one that is no backtrace frame, else the last that
is no frame, else the last that is not blank.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

# A frame or the header of a backtrace: Rust, glibc, Node, Python, Go.
_FRAME = re.compile(
    r"""^\s*(
        at\s | \d+:\s | File\s" | stack\ backtrace | Traceback\ \(most | goroutine\ \d+ | \S+\.go:\d+
        | note:\ run\ with\ `RUST_BACKTRACE | \.\.\.\ \d+\ more
    )""",
    re.VERBOSE,
)
_ERROR_LIKE = re.compile(
    r"error|fatal|panic|fail|denied|exception|cannot|can't|unable|not found|no such|read-only|refused",
    re.IGNORECASE,
)


def explaining_line(stderr: Sequence[str]) -> str:
    """The line of `stderr` (oldest first) that best says why the child failed ("" if all blank)."""
    lines = [line for line in stderr if line.strip()]
    told = [line for line in lines if not _FRAME.match(line)]
    return next(
        (line for line in reversed(told) if _ERROR_LIKE.search(line)),
        told[-1] if told else lines[-1] if lines else "",
    )


def spawn_error_message(exc: OSError, command: str, cwd: str) -> str:
    if isinstance(exc, FileNotFoundError) and exc.filename == cwd:
        return f"working directory not found: {cwd}"
    if isinstance(exc, FileNotFoundError):
        return f"command not found: {command}"
    if isinstance(exc, PermissionError):
        return f"command not executable: {command}"
    return f"could not start {command}: {exc.strerror or exc}"
