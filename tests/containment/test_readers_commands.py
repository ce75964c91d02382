"""Every file reader answers deep nesting, NaN and numbers too large for a float with its one-line
error and exit 2 (issue 16): records, traces, Claude Code settings and TOML configs, through each
command that reads them, as real subprocesses of `python -m acp_tui`. `replay` plays a gap of 1e18 s
without overflowing (it waits at most a minute, and a cancel ends the wait)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

DEEP = 5000  # far beyond the 128 levels a reader takes, and beyond Python's recursion limit
HOSTILE = ("deep", "nan", "huge")


def nested(depth: int = DEEP) -> str:
    return '{"a":' * depth + "1" + "}" * depth


def json_value(kind: str) -> str:
    return {"deep": nested(), "nan": "NaN", "huge": "1e999"}[kind]


def record(kind: str) -> str:
    # An isolated run's record: `apply` would take it, `policy check` reads its permissions.
    return '{"name": "x", "permissions": [], "base": "HEAD", "diff": "", "cost": ' + json_value(kind) + "}\n"


def trace(kind: str) -> str:
    frame = '{"jsonrpc": "2.0", "method": "x", "params": {"v": ' + json_value(kind) + "}}"
    return '{"t": 0, "dir": "in", "frame": ' + frame + "}\n"


def trace_time(kind: str) -> str:
    return '{"t": ' + json_value(kind) + ', "dir": "in", "frame": {}}\n'


def claude_settings(kind: str) -> str:
    return '{"permissions": {"allow": ["Bash"]}, "env": {"X": ' + json_value(kind) + "}}\n"


def config(kind: str) -> str:
    agent = '[[agent]]\nname = "a"\ncommand = "x"\n'
    if kind == "deep":
        return f"x = {'[' * DEEP}{']' * DEEP}\n" + agent
    return agent + f"handshake_timeout = {'nan' if kind == 'nan' else '1e999'}\n"


# (what the file is, how to write it, the command reading it; FILE stands for its path)
COMMANDS: dict[str, tuple[str, Callable[[str], str], list[str]]] = {
    "policy check, a record": ("records.jsonl", record, ["policy", "check", "--policy", "reject", "FILE"]),
    "policy check, a trace": ("trace.jsonl", trace, ["policy", "check", "--policy", "reject", "FILE"]),
    "policy check, a trace's time": (
        "trace.jsonl",
        trace_time,
        ["policy", "check", "--policy", "reject", "FILE"],
    ),
    "policy check, its config": (
        "agents.toml",
        config,
        ["policy", "check", "--config", "FILE", "--policy", "reject", "-"],
    ),
    "apply": ("record.json", record, ["apply", "FILE"]),
    "replay": ("trace.jsonl", trace, ["replay", "FILE"]),
    "replay, a time": ("trace.jsonl", trace_time, ["replay", "FILE"]),
    "policy import claude": ("settings.json", claude_settings, ["policy", "import", "claude", "FILE"]),
    "run --config": ("agents.toml", config, ["run", "--config", "FILE", "--prompt", "hi"]),
}

REASONS = {  # what the one line says, by what the file holds
    "deep": ("nested deeper than 128", "nested too deeply"),
    "nan": ("NaN is not a JSON number", "must be a positive number of seconds"),
    "huge": ("1e999 is out of range for a number", "must be a positive number of seconds"),
}


def acp_tui(args: list[str], tmp_path: Path, stdin: str = "") -> subprocess.CompletedProcess[str]:
    """`python -m acp_tui ARGS` in `tmp_path` (with the test's own folders: tests/conftest.py)."""
    return subprocess.run(
        [sys.executable, "-m", "acp_tui", *args],
        input=stdin,
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=60,
        check=False,
    )


@pytest.mark.parametrize("kind", HOSTILE)
@pytest.mark.parametrize("command", COMMANDS)
def test_every_reader_answers_hostile_json_and_toml_with_one_line_and_exit_2(
    tmp_path: Path, command: str, kind: str
) -> None:
    name, content, args = COMMANDS[command]
    path = tmp_path / name
    path.write_text(content(kind), encoding="utf-8")
    done = acp_tui([str(path) if arg == "FILE" else arg for arg in args], tmp_path)
    assert done.returncode == 2, done.stderr
    [line] = done.stderr.splitlines()  # one line, no traceback
    assert " error: " in line and str(path) in line
    assert any(reason in line for reason in REASONS[kind]), line
    assert done.stdout == ""


# Replay: a huge gap between two frames -----------------------------------------------------------


def frame(direction: str, message: dict[str, object], t: float = 0) -> str:
    return json.dumps({"t": t, "dir": direction, "frame": message}) + "\n"


def chunk(text: str) -> dict[str, object]:
    content = {"type": "text", "text": text}
    update = {"sessionUpdate": "agent_message_chunk", "content": content}
    return {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s", "update": update}}


def test_replay_waits_out_a_gap_of_1e18_seconds_without_overflowing_and_a_cancel_ends_it(
    tmp_path: Path,
) -> None:
    rpc = {"jsonrpc": "2.0"}
    path = tmp_path / "gap.jsonl"
    path.write_text(
        frame("out", {**rpc, "id": 0, "method": "initialize", "params": {}})
        + frame("in", {**rpc, "id": 0, "result": {"protocolVersion": 1}})
        + frame("out", {**rpc, "id": 1, "method": "session/new", "params": {}})
        + frame("in", {**rpc, "id": 1, "result": {"sessionId": "s"}})
        + frame("out", {**rpc, "id": 2, "method": "session/prompt", "params": {}})
        + frame("in", chunk("early"))
        + frame("in", chunk("late"), t=1e18)
        + frame("in", {**rpc, "id": 2, "result": {"stopReason": "end_turn"}}, t=1e18),
        encoding="utf-8",
    )
    replay = subprocess.Popen(
        [sys.executable, "-m", "acp_tui", "replay", str(path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert replay.stdin is not None and replay.stdout is not None

    def send(message: dict[str, object]) -> None:
        assert replay.stdin is not None
        replay.stdin.write(json.dumps(message) + "\n")
        replay.stdin.flush()

    try:
        for rid, method in ((10, "initialize"), (11, "session/new"), (12, "session/prompt")):
            send({**rpc, "id": rid, "method": method, "params": {}})
        heard = [json.loads(replay.stdout.readline()) for _ in range(3)]
        assert heard[-1] == chunk("early")  # now the gap: the replay waits (and does not abort)
        send({**rpc, "method": "session/cancel", "params": {"sessionId": "s"}})
        answer = json.loads(replay.stdout.readline())
        assert answer == {**rpc, "id": 12, "result": {"stopReason": "cancelled"}}
        replay.stdin.close()
        assert replay.wait(timeout=30) == 0  # not 134: the wait never overflowed
    finally:
        if replay.poll() is None:
            replay.kill()
            replay.wait()
        replay.stdout.close()
        assert replay.stderr is not None
        replay.stderr.close()
