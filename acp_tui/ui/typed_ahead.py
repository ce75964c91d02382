"""Keys typed before the app holds the terminal reach it as typed.

Until the app's driver sets its own terminal mode, the terminal is in the shell's cooked mode: the
kernel turns an Enter (CR) into a newline (LF), which the app then reads as ctrl+j (a new line in
the prompt), and echoes what is typed. On a loaded machine the driver starts seconds after
`acp-tui` does: an Enter sent 4 s after the start made a new line instead of sending. So `acp-tui`
takes the terminal first thing (no line editing, no echo, CR kept as CR, as the driver will have
it; ctrl+c still interrupts the start), reads what was already typed in cooked mode (its LFs were
Enters) and hands it to the driver, which feeds it to the app before anything it reads itself. The
terminal's own mode comes back when the driver ends, or at exit if it never started.

Standard library only: it runs before the UI is imported.
"""

from __future__ import annotations

import array
import atexit
import contextlib
import fcntl
import os
import termios
import tty
from typing import Any

_saved: list[Any] | None = None  # the terminal's mode before ours
_typed: list[str] = []  # read before the driver reads, for it to feed first


def take_terminal(fd: int = 0) -> None:
    """Put the terminal `fd` (if it is one) in the app's input mode now, keeping what was typed."""
    global _saved
    if _saved is not None or not os.isatty(fd):
        return
    try:
        saved = termios.tcgetattr(fd)
        mode = termios.tcgetattr(fd)
        mode[tty.LFLAG] &= ~(termios.ECHO | termios.ICANON | termios.IEXTEN)
        mode[tty.IFLAG] &= ~(termios.ICRNL | termios.INLCR | termios.IGNCR | termios.IXON | termios.IXOFF)
        mode[tty.CC][termios.VMIN] = 1
        mode[tty.CC][termios.VTIME] = 0
        termios.tcsetattr(fd, termios.TCSANOW, mode)
    except termios.error:  # not ours to change (a background job): the driver will say
        return
    _saved = saved
    atexit.register(give_back_terminal, fd)
    # Typed in cooked mode: readable now that lines are no longer held for editing.
    waiting = array.array("i", [0])
    with contextlib.suppress(OSError):
        fcntl.ioctl(fd, termios.FIONREAD, waiting)
        if waiting[0]:
            cooked = os.read(fd, waiting[0]).decode("utf-8", "replace")
            _typed.append(cooked.replace("\n", "\r"))  # each LF was an Enter (ICRNL)


def saved_mode() -> list[Any] | None:
    """The terminal's mode from before `take_terminal` (None: not taken), for the driver to restore."""
    return _saved


def typed() -> str:
    """What was typed before the app read anything (once: the driver feeds it)."""
    text = "".join(_typed)
    _typed.clear()
    return text


def give_back_terminal(fd: int = 0) -> None:
    if _saved is not None:
        with contextlib.suppress(termios.error, OSError):
            termios.tcsetattr(fd, termios.TCSANOW, _saved)
