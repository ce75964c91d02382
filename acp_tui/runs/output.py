"""What a run keeps of what its agent said: every string cleaned at one choke point, the answer
streamed under a cap, and the tail of the child's stderr.

`TextGuard` is the one place text from an agent or its process is made safe to keep: the preset's
secrets masked (before any cut) and lone surrogates, which no file, pipe or screen can encode,
replaced. `OutputBuffer` keeps the answer: the streaming mask holds back a tail that may be the
start of a secret until the next chunk (or the end) settles it, and text beyond the cap is dropped
and marked. `StderrTail` keeps the last lines of stderr and our own notes about the child.
"""

from __future__ import annotations

import dataclasses
from collections import deque
from collections.abc import Callable, Iterable
from typing import Any

from acp_tui.core.masking import SecretMask
from acp_tui.core.text import without_surrogates

STDERR_TAIL_LINES = 200
STDERR_LINE_CHARS = 2000  # a longer stderr line is cut (after masking) to this
NOTE_SAMPLE_CHARS = 60  # how much of a dropped line our note quotes


class TextGuard:
    def __init__(self, secrets: Iterable[str]) -> None:
        self.secrets = list(secrets)
        self._mask = SecretMask(self.secrets)

    def __call__(self, text: str) -> str:
        return self._mask(without_surrogates(text))

    def json(self, value: Any) -> Any:
        """The guard on every string of a JSON-shaped value (keys included), or of a dataclass."""
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            cleaned = {f.name: self.json(getattr(value, f.name)) for f in dataclasses.fields(value)}
            return dataclasses.replace(value, **cleaned)
        if isinstance(value, str):
            return self(value)
        if isinstance(value, dict):
            return {self(str(k)): self.json(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return type(value)(self.json(v) for v in value)
        return value


class OutputBuffer:
    """The answer, in order, up to `cap` characters; `on_text` hears each piece kept."""

    def __init__(self, secrets: Iterable[str], cap: int, on_text: Callable[[str], None]) -> None:
        self.cap = cap
        self.truncated = False
        self._stream_mask = SecretMask(secrets)
        self._pieces: list[str] = []
        self._chars = 0
        self._on_text = on_text
        self._part: object = None  # what the text so far belongs to (see `append`)
        self._line_open = False  # the text so far does not end with a newline

    def append(self, text: str, *, part: object = None) -> None:
        """`text` at the end of the answer. `part` says what it belongs to, where a protocol sends
        its answer in parts (a message, an artifact, a content block): text of a new part starts
        on a new line, a chunk of the same part goes on where the last one ended."""
        if not text:
            return
        if part != self._part and self._line_open:
            text = "\n" + text
        self._part, self._line_open = part, not text.endswith("\n")
        self._keep(self._stream_mask.feed(without_surrogates(text)))

    def lost(self) -> None:
        """A part of the answer could not be read (a message too large): the answer says so."""
        self.truncated = True

    def close(self) -> str:
        """The whole answer, the held-back tail settled."""
        self._keep(self._stream_mask.flush())
        return "".join(self._pieces)

    def _keep(self, text: str) -> None:
        if not text:
            return
        room = self.cap - self._chars
        if room <= 0:
            self.truncated = True
            return
        if len(text) > room:
            text, self.truncated = text[:room], True
        self._pieces.append(text)
        self._chars += len(text)
        self._on_text(text)


class StderrTail:
    """The child's stderr lines (guarded, cut) and our notes about it, the last ones kept. `on_line`
    hears each; the one a spare was made with is pointed at the run that takes it."""

    def __init__(self, guard: TextGuard, on_line: Callable[[str], None] = lambda line: None) -> None:
        self.lines: deque[str] = deque(maxlen=STDERR_TAIL_LINES)
        self.on_line = on_line
        self.guard = guard

    def line(self, text: str) -> None:
        line = self.guard(text)[:STDERR_LINE_CHARS]
        self.lines.append(line)
        self.on_line(line)

    def note(self, message: str) -> None:
        """Our own diagnostics about the child, shown with its stderr."""
        self.line(f"[acp-tui] {message}")

    def dropped(self, what: str, line: bytes | bytearray) -> None:
        """Something the child sent that we dropped, said with a sample of it (guarded, then cut)."""
        sample = self.guard(bytes(line[:4096]).decode("utf-8", "replace"))[:NOTE_SAMPLE_CHARS]
        self.note(f"{what}: {sample!r}" if sample else what)
