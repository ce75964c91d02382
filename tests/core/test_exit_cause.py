"""The stderr line a failed run's error names: the one that explains, not the backtrace's last frame."""

from __future__ import annotations

from acp_tui.process.exit_cause import explaining_line

CODEX = [
    "2025-01-01T00:00:00Z  INFO starting",
    "Error: loading /home/u/.codex/config.toml: Read-only file system (os error 30)",
    "stack backtrace:",
    "   0: std::backtrace::Backtrace::create",
    "             at /rustc/abc/library/std/src/backtrace.rs:331:13",
    "   1: start_thread",
    "             at ./nptl/pthread_create.c:447:8",
    "   2: clone3",
    "             at ./misc/../sysdeps/unix/sysv/linux/x86_64/clone3.S:81:0",
]


def test_the_cause_before_a_backtrace_is_named_not_its_last_frame() -> None:
    assert "Read-only file system" in explaining_line(CODEX)


def test_a_python_traceback_names_its_exception() -> None:
    lines = ['Traceback (most recent call last):', '  File "agent.py", line 3, in <module>', "    boom()",
             "ValueError: no model configured"]  # fmt: skip
    assert explaining_line(lines) == "ValueError: no model configured"


def test_without_an_error_like_line_the_last_line_that_is_no_frame_and_not_blank() -> None:
    assert explaining_line(["starting", "bye", "    at main (index.js:1:1)", "  "]) == "bye"
    assert explaining_line(["    at main (index.js:1:1)"]) == "    at main (index.js:1:1)"
    assert explaining_line(["", " "]) == "" and explaining_line([]) == ""
