"""Reading run records back from a file: `acp-tui run --format json` output, an export's `.jsonl`,
or one record (or a list of them) as a single JSON document. Anything else is one line naming the
file and the line."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from acp_tui.core.files import UnreadableFile, parse_json, read_text


class RecordsError(ValueError):
    """Not a file of run records, said in one line naming it."""


def read_records(source: Path | str, *, label: str) -> list[dict[str, Any]]:
    """The run records of `source` (a path, or the text itself when it is a str), each checked to
    be one: an object with a `name` and a `command` (a non-empty list of strings)."""
    if isinstance(source, Path):
        try:
            text = read_text(source, label=label, what="file of run records")
        except UnreadableFile as exc:
            raise RecordsError(str(exc)) from None
    else:
        text = source
    items: list[tuple[int, Any]] = []
    whole = _whole_document(text)
    if whole is not None:
        items = [(1, item) for item in (whole if isinstance(whole, list) else [whole])]
    else:
        for number, line in enumerate(text.splitlines(), start=1):
            if line.strip():
                try:
                    items.append((number, parse_json(line)))
                except ValueError as exc:
                    raise RecordsError(f"{label} line {number}: not JSON ({exc})") from None
    for number, item in items:
        command = item.get("command") if isinstance(item, dict) else None
        if (
            not isinstance(item, dict)
            or not isinstance(item.get("name"), str)
            or not isinstance(command, list)
            or not command
            or not all(isinstance(part, str) for part in command)
        ):
            raise RecordsError(f"{label} line {number}: not a run record (no name and command)")
    return [item for _, item in items]


def _whole_document(text: str) -> Any:
    """The value of a file holding one JSON document over several lines; None for JSON lines."""
    if text.count("\n") <= 1 and text.strip().startswith("{"):
        return None  # one line: read as JSON lines, which names the line
    try:
        return parse_json(text)
    except ValueError:
        return None
