"""Text that came from an agent, its process or a config file, made safe to show a person.

Untrusted text is text: it is never parsed as markup (that is the caller's part: Rich/Textual with
markup off, see `ui/text.py`), and it never reaches a terminal as a control sequence. `visible()`
turns every character that a terminal would act on into a visible escape (`\\x1b`, `\\u202e`):
C0 controls other than newline and tab, DEL, C1 controls, bidi overrides and isolates, and lone
surrogates (which no UTF-8 output can carry). Everything else is left as it is.

`--format json` keeps the exact text (JSON escapes it); `json_safe()` is for writers of UTF-8 files
and pipes, which would raise on a lone surrogate: it spells only those as JSON escapes.
"""

from __future__ import annotations

import re

_BIDI = (0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A))
# What a terminal acts on (newline and tab aside): shown as escapes, never written as they are.
CONTROL_CODES = (*(c for c in range(0x20) if c not in (0x09, 0x0A)), *range(0x7F, 0xA0), *_BIDI)


def _escape(code: int) -> str:
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


_VISIBLE = str.maketrans({code: _escape(code) for code in CONTROL_CODES})
_SURROGATE = re.compile("[\ud800-\udfff]")


def _surrogate_escape(match: re.Match[str]) -> str:
    return _escape(ord(match.group()))


def visible(text: str) -> str:
    """`text` with every character a terminal would act on shown as an escape instead."""
    text = text.translate(_VISIBLE)
    if _SURROGATE.search(text) is None:  # searched, not encoded: a 20 MB answer is not copied
        return text
    return _SURROGATE.sub(_surrogate_escape, text)


def one_line(text: str, limit: int | None = None, *, shown: bool = True) -> str:
    """`text` on one line, cut to `limit` characters (an ellipsis marks the cut).

    Shown (the default): `visible()`, newlines and tabs shown as escapes too. Not shown, for a message
    a record keeps as it is (whoever shows it makes it visible): runs of white space folded to one
    space."""
    line = visible(text).replace("\n", "\\n").replace("\t", "\\t") if shown else " ".join(text.split())
    if limit is not None and len(line) > limit:
        return line[: max(0, limit - 1)] + "…"
    return line


def without_surrogates(text: str) -> str:
    """`text` with lone surrogates replaced by U+FFFD: what can be encoded, for files and pipes."""
    if _SURROGATE.search(text) is None:
        return text
    return _SURROGATE.sub("\ufffd", text)


def json_safe(json_text: str) -> str:
    """JSON text (from `json.dumps(..., ensure_ascii=False)`) with lone surrogates spelled as JSON
    escapes, so that it encodes to UTF-8 and still decodes to the exact string."""
    if _SURROGATE.search(json_text) is None:
        return json_text
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", json_text)
