"""Reading run records back from a file: `acp-tui run --format json` output, an export's `.jsonl`,
or one record (or a list of them) as a single JSON document. Anything else is one line naming the
file and the line."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from acp_tui.core.files import UnreadableFile, parse_json, read_text
from acp_tui.reports.records import RunRecord, read_record


class RecordsError(ValueError):
    """Not a file of run records, said in one line naming it."""


def read_records(source: Path | str, *, label: str) -> list[RunRecord]:
    """The run records of `source` (a path, or the text itself when it is a str), each read by the
    record's model (`reports.records.read_record`)."""
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
        # Lines end at "\n" only: JSON leaves U+2028, U+0085... unescaped, which `splitlines` cuts at.
        for number, line in enumerate(text.split("\n"), start=1):
            if line.strip():
                try:
                    items.append((number, parse_json(line)))
                except ValueError as exc:
                    raise RecordsError(f"{label} line {number}: not JSON ({exc})") from None
    records = []
    for number, item in items:
        try:
            records.append(read_record(item))
        except ValueError as exc:
            raise RecordsError(f"{label} line {number}: not a run record ({exc})") from None
    return records


def _whole_document(text: str) -> Any:
    """The value of a file holding one JSON document over several lines; None for JSON lines."""
    if text.count("\n") <= 1 and text.strip().startswith("{"):
        return None  # one line: read as JSON lines, which names the line
    try:
        return parse_json(text)
    except ValueError:
        return None
