"""A program on a pseudo-terminal, as a person runs it: keys written to the pty, the screen read back.

`PtyApp` spawns a program on the slave side of a pty and reads the master side. What it painted is
kept two ways: `text`, everything written with the escape sequences stripped (to wait for a word to
appear), and `grid`, the screen as a terminal shows it (rows of cells, from the cursor moves and the
text; styles dropped), to wait for a state of the screen: a box's border heavy, a title gone.

Reading is the caller's loop (`pump`), one thread: a key is written, then the output is read and
fed to the grid until the expected state is there; the time of the read that made it so is when
the key was painted.
"""

from __future__ import annotations

import codecs
import contextlib
import fcntl
import os
import re
import select
import struct
import subprocess
import sys
import termios
import time
from collections.abc import Callable
from dataclasses import dataclass

from rich.cells import get_character_cell_size

ANSI = re.compile(
    r"\x1b\[[0-9;?<>=!]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[()*+][0-9A-Za-z]|\x1b[=>78NOPc]"
)
# A token of the output: a CSI sequence (parameters, final byte), another escape sequence, a
# control character, or a run of text.
TOKEN = re.compile(
    r"\x1b\[([0-9;?<>=!]*)[ -/]*([@-~])"
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[()*+][0-9A-Za-z]|\x1b[=>78NOPc\\]"
    r"|([\r\n\b])|[\x00-\x1a\x1c-\x1f\x7f]"
    r"|([^\x00-\x1f\x7f]+)"
)
QUIT_QUESTION = "Quit (y)"  # acp-tui asks before quitting with runs live
KEYS = {  # what a terminal sends for each key
    "enter": b"\r",
    "tab": b"\t",
    "escape": b"\x1b",
    "home": b"\x1b[H",
    "pagedown": b"\x1b[6~",
    "pageup": b"\x1b[5~",
    "f2": b"\x1bOQ",
    "ctrl+c": b"\x03",
}


class Grid:
    """The screen's cells, from the cursor moves (CUP), erases and text a Textual app writes."""

    def __init__(self, columns: int, rows: int) -> None:
        self.columns, self.rows = columns, rows
        self.cells = [[" "] * columns for _ in range(rows)]
        self.x = self.y = 0

    def feed(self, text: str) -> None:
        for match in TOKEN.finditer(text):
            run = match.group(4)
            if run is not None:
                self._write(run)
                continue
            final = match.group(2)
            if final is not None:
                self._csi(match.group(1), final)
            elif match.group(3) == "\r":
                self.x = 0
            elif match.group(3) == "\n":
                self.y = min(self.rows - 1, self.y + 1)
            elif match.group(3) == "\b":
                self.x = max(0, self.x - 1)

    def _csi(self, params: str, final: str) -> None:
        if params.startswith(("?", ">", "<", "=")):
            return  # modes and queries: nothing on the screen
        numbers = [int(p) if p.isdigit() else 0 for p in params.split(";")] if params else []
        if final in "Hf":
            row = numbers[0] if numbers else 1
            column = numbers[1] if len(numbers) > 1 else 1
            self.y = min(self.rows - 1, max(0, row - 1))
            self.x = min(self.columns - 1, max(0, column - 1))
        elif final == "J":
            if (numbers[0] if numbers else 0) == 2:
                self.cells = [[" "] * self.columns for _ in range(self.rows)]
        elif final == "K":
            mode = numbers[0] if numbers else 0
            row = self.cells[self.y]
            if mode == 0:
                row[self.x :] = [" "] * (self.columns - self.x)
            elif mode == 2:
                row[:] = [" "] * self.columns
        elif final in "ABCD":
            step = max(1, numbers[0] if numbers else 1)
            if final == "A":
                self.y = max(0, self.y - step)
            elif final == "B":
                self.y = min(self.rows - 1, self.y + step)
            elif final == "C":
                self.x = min(self.columns - 1, self.x + step)
            else:
                self.x = max(0, self.x - step)

    def _write(self, run: str) -> None:
        row = self.cells[self.y]
        x = self.x
        if run.isascii():
            end = min(self.columns, x + len(run))
            row[x:end] = run[: end - x]
            self.x = end
            return
        for character in run:
            width = get_character_cell_size(character)
            if x + width > self.columns:
                break
            row[x] = character
            if width == 2:
                row[x + 1] = ""
            x += width
        self.x = x

    def lines(self) -> list[str]:
        return ["".join(row) for row in self.cells]


@dataclass
class Box:
    """A bordered widget on the grid: its corners' rows and columns, and whether its border is heavy."""

    top: int
    left: int
    bottom: int
    right: int
    heavy: bool

    @property
    def width(self) -> int:
        return self.right - self.left + 1

    def inside(self, lines: list[str]) -> list[str]:
        return [line[self.left + 1 : self.right] for line in lines[self.top + 1 : self.bottom]]


def find_box(lines: list[str], title: str) -> Box | None:
    """The box whose top border carries `title` (a Textual border title), if it is on the screen."""
    pattern = re.compile(r"([╭┏])[─━]*\s?" + re.escape(title) + r"\b")
    for y, line in enumerate(lines):
        match = pattern.search(line)
        if match is None:
            continue
        left = match.start(1)
        heavy = match.group(1) == "┏"
        corner, bottom_corner = ("┓", "┗") if heavy else ("╮", "╰")
        right = line.find(corner, match.end())
        if right == -1:
            continue
        bottom = next((b for b in range(y + 1, len(lines)) if lines[b][left : left + 1] == bottom_corner), y)
        return Box(y, left, bottom, right, heavy)
    return None


class PtyApp:
    """A program on a pseudo-terminal, whose painted output we read."""

    def __init__(
        self,
        argv: list[str],
        env: dict[str, str],
        columns: int = 160,
        rows: int = 45,
        *,
        keep_text: bool = True,
    ) -> None:
        master, slave = os.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))
        self.master = master
        self.started = time.perf_counter()
        self.proc = subprocess.Popen(
            argv,
            stdin=slave,
            stdout=slave,
            stderr=slave,
            env=env,
            start_new_session=True,
            preexec_fn=lambda: fcntl.ioctl(0, termios.TIOCSCTTY, 0),
        )
        os.close(slave)
        self.text = ""  # everything painted so far, escape sequences stripped (unless not kept)
        self.keep_text = keep_text
        self.grid = Grid(columns, rows)
        self.bytes_read = 0
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self._pending = ""  # the start of an escape sequence not yet whole

    def pump(self, timeout: float) -> float | None:
        """Read what is there (waiting up to `timeout` for it); perf_counter() of the last read, or None.

        Everything the program has written is read before any of it is parsed, so that parsing a
        frame that came in pieces does not delay reading its end.
        """
        ready, _, _ = select.select([self.master], [], [], max(0.0, timeout))
        if not ready:
            return None
        pieces = []
        while ready:
            try:
                data = os.read(self.master, 1 << 20)
            except OSError:
                data = b""
            if not data:
                if pieces:
                    break
                raise EOFError("the program closed its terminal")
            now = time.perf_counter()
            pieces.append(data)
            ready, _, _ = select.select([self.master], [], [], 0)
        data = b"".join(pieces)
        self.bytes_read += len(data)
        chunk = self._pending + self._decoder.decode(data)
        cut = chunk.rfind("\x1b")
        if cut != -1 and len(chunk) - cut < 64 and not ANSI.match(chunk, cut):
            chunk, self._pending = chunk[:cut], chunk[cut:]
        else:
            self._pending = ""
        if self.keep_text:
            self.text += ANSI.sub("", chunk)
        self.grid.feed(chunk)
        return now

    def wait_until(self, condition: Callable[[], bool], timeout: float = 60.0) -> float:
        """perf_counter() of the read after which `condition()` held (now, if it holds already)."""
        deadline = time.perf_counter() + timeout
        if condition():
            return time.perf_counter()
        while True:
            left = deadline - time.perf_counter()
            if left <= 0:
                raise TimeoutError("the expected screen was not painted in time")
            at = self.pump(min(left, 0.5))
            if at is not None and condition():
                return at

    def wait_for(self, text: str, since: int = 0, timeout: float = 60.0) -> float:
        """perf_counter() when `text` was first painted after offset `since` of `text`."""
        return self.wait_until(lambda: text in self.text[since:], timeout)

    def idle(self, seconds: float) -> None:
        """Keep reading (the program must never block on a full terminal) for `seconds`."""
        deadline = time.perf_counter() + seconds
        while (left := deadline - time.perf_counter()) > 0:
            self.pump(left)

    def send(self, data: bytes) -> float:
        now = time.perf_counter()
        os.write(self.master, data)
        return now

    def cpu_seconds(self) -> float:
        """The program's CPU time so far (every thread of it; not its children)."""
        with open(f"/proc/{self.proc.pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def close(self, quit_key: bytes = b"\x03", timeout: float = 20.0) -> None:
        """Quit the way a person does (and say yes when acp-tui asks, runs being live); wait for the
        process; force it only if it hangs."""
        with contextlib.suppress(OSError):
            self.send(quit_key)
        deadline = time.perf_counter() + timeout
        confirmed = False
        while self.proc.poll() is None and time.perf_counter() < deadline:
            try:
                self.pump(0.05)
            except EOFError:
                break
            if not confirmed and any(QUIT_QUESTION in line for line in self.grid.lines()):
                confirmed = True
                with contextlib.suppress(OSError):
                    self.send(b"y")
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=max(0.0, deadline - time.perf_counter()))
        if self.proc.poll() is None:
            print(f"warning: {self.proc.args[0]} did not quit within {timeout} s; killed", file=sys.stderr)
            self.proc.kill()
            self.proc.wait()
        os.close(self.master)
