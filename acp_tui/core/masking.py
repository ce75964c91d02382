"""Keep the values a preset passed in `env` (its credentials) off screens, exports, logs and traces.

An agent may echo its own key in an answer, a stderr line or an error. Answers stream in pieces, and
a value can be split across two of them, so the streaming mask holds back a short tail that might be
the start of a value until the next piece (or the end) settles it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable

MASK = "***"
MIN_MASKED_LENGTH = 4  # shorter values (flags, "1") would blank out ordinary text
FRAGMENT = 8  # with `fragments`: any run of this many characters of a value is masked too
_WORD_END = frozenset(" \t\r\n'\"")


class SecretMask:
    """Masks every spelling of the given values. With `fragments` (for logs, where others quote
    inputs shortened, as pydantic's `first…last`), a word holding any FRAGMENT characters of a value
    is masked whole."""

    def __init__(self, values: Iterable[str], *, fragments: bool = False) -> None:
        # Traces and logs hold values as JSON or repr() spells them (quotes, backslashes and
        # non-ASCII escaped): each spelling is masked.
        spellings = {
            spelling
            for value in values
            if len(value) >= MIN_MASKED_LENGTH
            for spelling in (
                value,
                json.dumps(value)[1:-1],
                json.dumps(value, ensure_ascii=False)[1:-1],
                repr(value)[1:-1],
            )
        }
        if fragments:
            spellings |= {
                spelling[i : i + FRAGMENT]
                for spelling in list(spellings)
                for i in range(len(spelling) - FRAGMENT + 1)
            }
        secrets = sorted(spellings, key=len, reverse=True)
        self._values = tuple(secrets)
        self._pattern = re.compile("|".join(map(re.escape, secrets))) if secrets else None
        self._fragments = fragments
        self._hold = max((len(s) for s in secrets), default=1) - 1
        self._tail = ""

    def __bool__(self) -> bool:
        return self._pattern is not None

    def __call__(self, text: str) -> str:
        if self._pattern is None:
            return text
        if not self._fragments:
            return self._pattern.sub(MASK, text)
        # Each match widened to the word around it (up to white space or a quote), then masked.
        parts, shown = [], 0
        for match in self._pattern.finditer(text):
            start, end = match.span()
            if start < shown:  # inside a word already masked
                continue
            while start > shown and text[start - 1] not in _WORD_END:
                start -= 1
            while end < len(text) and text[end] not in _WORD_END:
                end += 1
            parts += [text[shown:start], MASK]
            shown = end
        return "".join([*parts, text[shown:]])

    def feed(self, text: str) -> str:
        """The part of a stream that is safe to show now.

        What is held back is the unmasked text from the first place where a value may be starting
        (the rest of the text is a prefix of one): a value whose start is another value must not be
        masked as the shorter one, its tail shown, when a chunk ends between them."""
        if self._pattern is None:
            return text
        pending = self._tail + text
        hold = self._open_prefix(pending)
        self._tail = pending[hold:]
        return self._pattern.sub(MASK, pending[:hold])

    def _open_prefix(self, text: str) -> int:
        """Where the stream must stop for now: the first place a value may be starting (the rest of
        `text` is a proper prefix of one) that no value found earlier covers (len: none)."""
        assert self._pattern is not None
        starts = [
            start
            for start in range(max(0, len(text) - self._hold), len(text))
            if any(len(v) > len(text) - start and v.startswith(text[start:]) for v in self._values)
        ]
        if not starts:
            return len(text)
        open_starts = set(starts)
        covered = [
            (match.start(), match.end())
            for match in self._pattern.finditer(text)  # from the start: as the whole text is read
            if match.start() not in open_starts
        ]
        for start in starts:
            if not any(begin < start < end for begin, end in covered):
                return start
        return len(text)

    def flush(self) -> str:
        tail, self._tail = self._tail, ""
        return self(tail)
