"""Reading a protocol trace (`--trace DIR`, the app's tracing) back, checked line by line.

One JSON object per line: `{"t": seconds since the run started, "dir": "out" | "in", "frame": the
JSON-RPC message}`; `out` is what the client sent, `in` what the agent sent. Any other line is an
error naming the file and the line: a trace is evidence, and a half-read one would mislead.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any


class TraceError(ValueError):
    """A file that is not a trace, said in one line naming it."""


@dataclass(frozen=True)
class Entry:
    t: float
    dir: str  # "out": client to agent; "in": agent to client
    frame: dict[str, Any]

    @property
    def is_request(self) -> bool:
        return "method" in self.frame and "id" in self.frame

    @property
    def is_response(self) -> bool:
        return "method" not in self.frame and "id" in self.frame


def obj(value: Any) -> dict[str, Any]:
    """`value` if it is a JSON object, else an empty one: a recorded frame may be anything."""
    return value if isinstance(value, dict) else {}


def is_trace_line(data: Any) -> bool:
    return isinstance(data, dict) and "dir" in data and "frame" in data


def load_trace(path: str | Path) -> list[Entry]:
    """The trace's entries; a `TraceError` for the first line that is none."""
    entries = []
    for entry in trace_entries(path):
        if isinstance(entry, TraceError):
            raise entry
        entries.append(entry)
    return entries


def trace_entries(path: str | Path, *, where: str | None = None) -> list[Entry | TraceError]:
    """Each line of the trace as an entry, or what is wrong with it (`<where> line N: ...`, `where`
    the file's name unless given). A file that cannot be read raises a `TraceError`."""
    from acp_tui.core.files import UnreadableFile, read_text

    try:
        lines = read_text(path, what="trace").splitlines()
    except UnreadableFile as exc:
        raise TraceError(str(exc)) from None
    label = str(path) if where is None else where
    entries: list[Entry | TraceError] = []
    for number, line in enumerate(lines, start=1):
        if line.strip():
            try:
                entries.append(parse_entry(line, f"{label} line {number}".lstrip()))
            except TraceError as exc:
                entries.append(exc)
    return entries


def parse_entry(line: str, where: str) -> Entry:
    from acp_tui.core.files import JsonError, json_value

    try:
        data = json_value(line)
    except JsonError as exc:
        raise TraceError(f"{where}: {exc}") from None
    return entry_from(data, where)


def entry_from(data: Any, where: str) -> Entry:
    if not is_trace_line(data):
        raise TraceError(f'{where}: not a trace line (expected {{"t", "dir", "frame"}})')
    t, direction, frame = data.get("t", 0), data["dir"], data["frame"]
    if direction not in ("in", "out"):
        raise TraceError(f'{where}: "dir" must be "in" or "out"')
    if isinstance(t, bool) or not isinstance(t, int | float) or not 0 <= t < math.inf:
        raise TraceError(f'{where}: "t" must be a number of seconds')
    if not isinstance(frame, dict):
        raise TraceError(f'{where}: "frame" must be a JSON-RPC message (an object)')
    return Entry(float(t), direction, frame)


_TRACE_NAME = re.compile(r"^(?P<label>.+)-\d{8}-\d{6}-\d+(?:-\d+)?$")  # `-2`: the name was taken


def agent_label(path: str | Path, entries: list[Entry]) -> str:
    """Which agent a trace is of: the preset name in its file name (`NAME-STAMP-PID[-N].jsonl`), else
    the `agentInfo.name` it announced, else the file's name."""
    stem = Path(path).stem
    if match := _TRACE_NAME.match(stem):
        return match.group("label")
    for entry in entries:
        result = entry.frame.get("result")
        if entry.dir == "in" and isinstance(result, dict) and isinstance(result.get("agentInfo"), dict):
            name = result["agentInfo"].get("name")
            if isinstance(name, str) and name:
                return name
    return stem
