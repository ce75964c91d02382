"""Bad input to the lab is one line naming the file, never a traceback: any JSON at all, as records,
as a trace, as Claude Code settings."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from acp_tui.lab.check import RecordsError, check, load_requests
from acp_tui.lab.import_claude import ClaudeImportError, translate_file
from acp_tui.lab.trace_file import TraceError, load_trace
from acp_tui.policy.names import FIXED_POLICIES

KEYS = [
    "name",
    "permissions",
    "title",
    "kind",
    "decision",
    "options",
    "option_id",
    "rule",
    "raw_input",
    "locations",
    "cwd",
    "trace",
    "t",
    "dir",
    "frame",
    "method",
    "id",
    "params",
    "toolCall",
    "result",
    "outcome",
    "optionId",
    "permissions",
    "allow",
    "deny",
    "ask",
    "command",
    "path",
]
json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False)
    | st.text(max_size=5)
    | st.sampled_from(["in", "out", "session/request_permission", "session/new", "selected", "allow_once"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(KEYS), inner, max_size=5),
    max_leaves=20,
)


def written(lines: list[Any]) -> Path:
    folder = Path(tempfile.mkdtemp())
    path = folder / "input.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


@settings(max_examples=200, deadline=None)
@given(st.lists(json_values, min_size=1, max_size=4))
def test_any_json_as_records_is_rows_or_one_line(lines: list[Any]) -> None:
    path = written(lines)
    try:
        requests = load_requests([path])
    except RecordsError as exc:
        message = str(exc)
    else:
        check(requests, FIXED_POLICIES["allow"])  # whatever was read decides without failing
        return
    assert str(path) in message and "\n" not in message


@settings(max_examples=200, deadline=None)
@given(st.lists(json_values, min_size=1, max_size=4))
def test_any_json_as_a_trace_is_entries_or_one_line(lines: list[Any]) -> None:
    path = written(lines)
    try:
        load_trace(path)
    except TraceError as exc:
        message = str(exc)
    else:
        return
    assert str(path) in message and "\n" not in message


@settings(max_examples=200, deadline=None)
@given(json_values)
def test_any_json_as_claude_settings_is_a_policy_or_one_line(data: Any) -> None:
    path = written([data])
    try:
        text = translate_file(path)
    except ClaudeImportError as exc:
        message = str(exc)
    else:
        import tomllib

        tomllib.loads(text)  # whatever came out is TOML
        return
    assert str(path) in message and "\n" not in message


frames = st.dictionaries(
    st.sampled_from(["jsonrpc", "id", "method", "params", "result", "error"]),
    json_values,
    max_size=4,
) | st.fixed_dictionaries(
    {
        "id": st.integers(0, 3) | st.text(max_size=2),
        "method": st.sampled_from(
            ["initialize", "session/new", "session/prompt", "session/request_permission", "session/update"]
        ),
    },
    optional={"params": json_values, "result": json_values},
)
entries = st.lists(
    st.builds(
        lambda t, d, f: {"t": t, "dir": d, "frame": f},
        st.floats(0, 1),
        st.sampled_from(["in", "out"]),
        frames,
    ),
    max_size=12,
)


@settings(max_examples=100, deadline=None)
@given(trace=entries, client=st.lists(frames, max_size=6))
def test_any_trace_replays_without_a_traceback(
    trace: list[dict[str, Any]], client: list[dict[str, Any]]
) -> None:
    """Whatever was recorded and whatever the client sends, the replay answers or ends: 0 or 1."""
    import io

    from acp_tui.lab.replay import Replay
    from acp_tui.lab.trace_file import entry_from

    replay = Replay(
        [entry_from(e, "trace") for e in trace], speed=0, wait=True, out=io.BytesIO(), err=io.StringIO()
    )
    stdin = io.BytesIO(b"".join(json.dumps(frame).encode() + b"\n" for frame in client) + b"not json\n")
    assert replay.serve(stdin) in (0, 1)


def test_json_lines_end_at_newlines_only() -> None:
    """JSON written with ensure_ascii=False keeps U+2028, U+2029 and U+0085 as they are: a line of
    records stays whole (splitlines() would cut an answer holding one)."""
    from acp_tui.core.files import json_values as read

    answer = {"name": "a", "output": "x\u2028y\u2029z\x85w"}
    text = json.dumps(answer, ensure_ascii=False) + "\n" + json.dumps({"name": "b"}) + "\r\n"
    assert read(text) == [(1, answer), (2, {"name": "b"})]
