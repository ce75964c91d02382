"""The app's sessions, kept as they go, so that they outlive the app.

Each session of the app is one JSON-lines file under the state folder's `sessions/`: a first line
that says what it is (`{"acp_tui_session": 1, "id", "started", "cwd"}`), then the record of each
attempt as it ends (`acp_tui.reports.records.RunRecord`, with its `round` and `attempt`; a
follow-up's has its `turn`), read back by the same model when the session reopens. `acp-tui
sessions` lists them; `acp-tui --session ID` reopens one: its panes with their answers, and
follow-ups (`f`) continue its turns. Sessions beyond `keep` are pruned, oldest first.
Nothing here follows a link: files are created new (`O_EXCL`) and appended to without following one.
"""

from __future__ import annotations

import contextlib
import os
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from acp_tui.core.files import (
    UnreadableFile,
    append_line,
    parse_json,
    private_dir,
    read_text,
    write_new,
)
from acp_tui.core.text import json_safe

if TYPE_CHECKING:
    from acp_tui.reports.records import RunRecord

FORMAT = 1
SESSION_ID = re.compile(r"\d{8}-\d{6}-[0-9a-f]{6}")


class SessionError(ValueError):
    """A saved session that cannot be had, said in one line."""


@dataclass(frozen=True)
class SavedSummary:
    """What `acp-tui sessions` says of one: id, when it started, its rounds, agents, first prompt."""

    id: str
    started: str
    rounds: int
    agents: tuple[str, ...]
    first_prompt: str


class SessionStore:
    def __init__(self, folder: Path, *, keep: int = 50) -> None:
        self.folder = folder
        self.keep = keep

    def new(self, cwd: str) -> SavedSession:
        """A new session's file (the oldest ones beyond `keep` go)."""
        import secrets  # (hashlib and hmac: not before the app's first frame)

        folder = private_dir(self.folder)
        session_id = f"{time.strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(3)}"
        header = {
            "acp_tui_session": FORMAT,
            "id": session_id,
            "started": time.strftime("%Y-%m-%dT%H:%M:%S"),
            "cwd": cwd,
        }
        path = folder / f"{session_id}.jsonl"
        write_new(path, _line(header) + "\n")
        self._prune()
        return SavedSession(session_id, path)

    def open(self, session_id: str) -> tuple[SavedSession, list[dict[str, Any]]]:
        """A session to go on with: its file (appended to from now on) and its records. A line that
        does not parse (cut short by a crash) is skipped and counted (`SavedSession.damaged`), and
        left in the file; only a bad first line makes it no session file of ours."""
        if not SESSION_ID.fullmatch(session_id):
            raise SessionError(f'--session "{session_id}": no such session (acp-tui sessions lists them)')
        path = self.folder / f"{session_id}.jsonl"
        contents = _read(path, session_id)
        if contents.ends_cut:  # the next record starts a line of its own
            with contextlib.suppress(OSError):  # then appending fails too, and is said then
                append_line(path, "")
        return SavedSession(session_id, path, contents.damaged), contents.records

    def summaries(self) -> list[SavedSummary]:
        """Every session kept, newest first (unreadable files are left out)."""
        found = []
        for path in sorted(self._files(), reverse=True):
            try:
                header, records, _, _ = _read(path, path.stem)
            except SessionError:
                continue
            first = str(min(records, key=_round_of).get("prompt", "")) if records else ""
            found.append(
                SavedSummary(
                    id=path.stem,
                    started=str(header.get("started", "")),
                    rounds=len({_round_of(r) for r in records}),
                    agents=tuple(dict.fromkeys(str(r.get("name", "")) for r in records)),
                    first_prompt=first.strip().splitlines()[0] if first.strip() else "",
                )
            )
        return found

    def _files(self) -> list[Path]:
        try:
            entries = list(os.scandir(self.folder))
        except OSError:
            return []
        return [
            Path(entry.path)
            for entry in entries
            if entry.is_file(follow_symlinks=False)
            and SESSION_ID.fullmatch(entry.name.removesuffix(".jsonl"))
        ]

    def _prune(self) -> None:
        files = sorted(self._files())  # by name: oldest first
        for path in files[: max(0, len(files) - self.keep)]:
            try:
                path.unlink()
            except OSError:
                continue


@dataclass(frozen=True)
class SavedSession:
    id: str
    path: Path
    damaged: int = 0  # lines of its file skipped when it was opened (no JSON object)

    def append(self, record: RunRecord) -> None:
        """One attempt's record, as it ended (a failure to write is the caller's to say)."""
        from acp_tui.reports.records import json_line

        append_line(self.path, json_line(record))


def _round_of(record: Mapping[str, Any]) -> int:
    number = record.get("round")
    return number if type(number) is int else 0


def _line(value: Mapping[str, Any]) -> str:
    import json

    return json_safe(json.dumps(value, ensure_ascii=False, allow_nan=False))


class _Contents(NamedTuple):
    header: dict[str, Any]
    records: list[dict[str, Any]]
    damaged: int  # lines that are no JSON object (a line cut short by a crash), skipped
    ends_cut: bool  # the last line has no newline: the next record must not be appended to it


def _read(path: Path, session_id: str) -> _Contents:
    try:
        text = read_text(path, label=f"session {session_id}")
    except UnreadableFile as exc:
        raise SessionError(
            f'--session "{session_id}": no such session (acp-tui sessions lists them)'
        ) from exc
    # Lines end at "\n" only: JSON leaves U+2028, U+0085... unescaped, which `splitlines` cuts at.
    lines = [line for line in text.split("\n") if line.strip()]
    values = [_value(line) for line in lines]
    if not values or not isinstance(values[0], dict) or values[0].get("acp_tui_session") != FORMAT:
        raise SessionError(f"session {session_id}: not a session file of ours")
    records = [value for value in values[1:] if isinstance(value, dict)]
    return _Contents(values[0], records, len(values) - 1 - len(records), bool(text) and text[-1] != "\n")


def _value(line: str) -> Any:
    """The JSON value of one line; None for a line that does not parse."""
    try:
        return parse_json(line)
    except ValueError:
        return None
