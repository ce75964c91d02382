"""The replay agent's side of the protocol, spoken to line by line (no SDK on our side either), so
the order of frames can be checked exactly: --no-wait, unrecorded requests, a trace cut short."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from acp_tui.lab.replay import META_KEY, replay_argv

SID = "s-1"
OPTIONS = [
    {"optionId": "yes", "name": "Yes", "kind": "allow_once"},
    {"optionId": "no", "name": "No", "kind": "reject_once"},
]


def entry(t: float, direction: str, frame: dict[str, Any]) -> dict[str, Any]:
    return {"t": t, "dir": direction, "frame": {"jsonrpc": "2.0", **frame}}


def chunk(t: float, text: str) -> dict[str, Any]:
    update = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}}
    return entry(t, "in", {"method": "session/update", "params": {"sessionId": SID, "update": update}})


def permission_trace(path: Path, *, cut: bool = False) -> Path:
    ask = {"sessionId": SID, "toolCall": {"toolCallId": "c1", "title": "Run tests"}, "options": OPTIONS}
    entries = [
        entry(0, "out", {"id": 0, "method": "initialize", "params": {}}),
        entry(0, "in", {"id": 0, "result": {"protocolVersion": 1, "agentInfo": {"name": "rec"}}}),
        entry(0, "out", {"id": 1, "method": "session/new", "params": {"cwd": "/w"}}),
        entry(0, "in", {"id": 1, "result": {"sessionId": SID}}),
        entry(0, "out", {"id": 2, "method": "session/prompt", "params": {}}),
        entry(0, "in", {"id": 7, "method": "session/request_permission", "params": ask}),
        entry(0, "out", {"id": 7, "result": {"outcome": {"outcome": "selected", "optionId": "yes"}}}),
        chunk(0, "after the question"),
    ]
    if not cut:
        entries.append(entry(0, "in", {"id": 2, "result": {"stopReason": "end_turn"}}))
    path.write_text("".join(json.dumps(e) + "\n" for e in entries))
    return path


class Peer:
    def __init__(self, process: subprocess.Popen[bytes]) -> None:
        self.process = process

    def send(self, frame: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps({"jsonrpc": "2.0", **frame}).encode() + b"\n")
        self.process.stdin.flush()

    def receive(self) -> dict[str, Any]:
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        assert line, "the replay closed its stdout"
        return json.loads(line)  # type: ignore[no-any-return]

    def start_prompt(self) -> None:
        self.send({"id": 10, "method": "initialize", "params": {"protocolVersion": 1}})
        assert self.receive() == {
            "jsonrpc": "2.0",
            "id": 10,
            "result": {"protocolVersion": 1, "agentInfo": {"name": "rec"}},
        }
        self.send({"id": 11, "method": "session/new", "params": {"cwd": "/elsewhere", "mcpServers": []}})
        assert self.receive()["result"] == {"sessionId": SID}
        self.send({"id": 12, "method": "session/prompt", "params": {"sessionId": SID, "prompt": []}})


@contextmanager
def replaying(trace: Path, *extra: str) -> Iterator[Peer]:
    process = subprocess.Popen(
        [*replay_argv(str(trace)), "--speed", "0", *extra],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        yield Peer(process)
    finally:
        if process.stdin:
            process.stdin.close()
        process.wait(timeout=10)
        for stream in (process.stdout, process.stderr):
            if stream:
                stream.close()


def test_no_wait_plays_on_before_the_answer_and_still_compares_it(tmp_path: Path) -> None:
    with replaying(permission_trace(tmp_path / "t.jsonl"), "--no-wait") as peer:
        peer.start_prompt()
        request = peer.receive()
        assert (request["id"], request["method"]) == (7, "session/request_permission")
        assert (
            peer.receive()["params"]["update"]["content"]["text"] == "after the question"
        )  # not answered yet
        peer.send({"id": 7, "result": {"outcome": {"outcome": "cancelled"}}})
        answer = peer.receive()
        assert answer["id"] == 12 and answer["result"]["stopReason"] == "end_turn"
        [divergence] = answer["result"]["_meta"][META_KEY]["divergences"]
        assert divergence == {
            "request": "Run tests",
            "id": 7,
            "recorded": {"outcome": "selected", "option_id": "yes", "kind": "allow_once"},
            "chosen": {"outcome": "cancelled", "option_id": None, "kind": None},
        }


def test_a_request_the_trace_never_saw_gets_an_error(tmp_path: Path) -> None:
    with replaying(permission_trace(tmp_path / "t.jsonl")) as peer:
        peer.send({"id": 1, "method": "session/set_mode", "params": {"sessionId": SID, "modeId": "ask"}})
        reply = peer.receive()
        assert reply["id"] == 1 and reply["error"]["code"] == -32601
        assert "session/set_mode" in reply["error"]["message"]


def test_a_trace_cut_in_the_middle_of_a_prompt_ends_the_replay(tmp_path: Path) -> None:
    with replaying(permission_trace(tmp_path / "t.jsonl", cut=True)) as peer:
        peer.start_prompt()
        peer.receive()  # the question
        peer.send({"id": 7, "result": {"outcome": {"outcome": "selected", "optionId": "yes"}}})
        assert peer.receive()["method"] == "session/update"
        assert peer.process.wait(timeout=10) == 1
        assert peer.process.stdout is not None and peer.process.stdout.read() == b""
        assert peer.process.stderr is not None
        assert b"the trace ends without the agent's answer to session/prompt" in peer.process.stderr.read()


def test_a_cancel_sent_right_after_the_prompt_stops_that_turn(tmp_path: Path) -> None:
    with replaying(permission_trace(tmp_path / "t.jsonl")) as peer:
        peer.send({"id": 10, "method": "initialize", "params": {"protocolVersion": 1}})
        peer.receive()
        peer.send({"id": 11, "method": "session/new", "params": {"cwd": "/w", "mcpServers": []}})
        peer.receive()
        # Both in one write: the cancel may be read before the turn has started playing.
        assert peer.process.stdin is not None
        peer.process.stdin.write(
            b'{"jsonrpc":"2.0","id":12,"method":"session/prompt","params":{"sessionId":"s-1","prompt":[]}}\n'
            b'{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s-1"}}\n'
        )
        peer.process.stdin.flush()
        frames = [peer.receive()]
        while "id" not in frames[-1] or frames[-1].get("method"):
            if frames[-1].get("method") == "session/request_permission":
                peer.send({"id": 7, "result": {"outcome": {"outcome": "cancelled"}}})
            frames.append(peer.receive())
        assert frames[-1]["id"] == 12 and frames[-1]["result"]["stopReason"] == "cancelled"
