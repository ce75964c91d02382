"""An ACP agent in the standard library that replays a script of raw frames (for the fuzz tests).

    python replay_agent.py SCRIPT.json RECORD.jsonl

SCRIPT.json: {"session": ID, "phases": {"early": [...], "after_new": [...], "prompt": [...]},
"end": {...}}. Each frame is {"b64": the line's bytes, base64, without the newline} and, for a request
the agent makes, "wait": its id (the agent waits up to 3 s for the client's answer before going on).

- `early` frames go out once `session/new` arrives, before its answer; `after_new` right after it;
  `prompt` once `session/prompt` arrives.
- `end`: {"stop": REASON} answers the prompt; {"error": [CODE, MESSAGE]} answers it with an error;
  {"exit": CODE} exits at once without answering.

Every message the client sends is appended to RECORD.jsonl as it arrives.
"""

from __future__ import annotations

import base64
import json
import os
import sys
import threading
from typing import Any

SCRIPT: dict[str, Any] = json.load(open(sys.argv[1]))  # noqa: SIM115 - read once, at start
RECORD = sys.argv[2]
_lock = threading.Lock()
_answers: dict[Any, dict[str, Any]] = {}
_answered = threading.Condition()
_requests: list[dict[str, Any]] = []
_arrived = threading.Condition()


def write(data: bytes) -> None:
    with _lock:
        sys.stdout.buffer.write(data + b"\n")
        sys.stdout.buffer.flush()


def reply(rid: Any, result: Any) -> None:
    write(json.dumps({"jsonrpc": "2.0", "id": rid, "result": result}).encode())


def reader() -> None:
    with open(RECORD, "a") as record:
        for raw in sys.stdin.buffer:
            record.write(raw.decode("utf-8", "replace").rstrip("\n") + "\n")
            record.flush()
            message = json.loads(raw)
            if "method" in message:
                with _arrived:
                    _requests.append(message)
                    _arrived.notify_all()
            else:
                with _answered:
                    _answers[json.dumps(message.get("id"))] = message
                    _answered.notify_all()
    with _arrived:
        _requests.append({"method": "<eof>"})
        _arrived.notify_all()


def next_request(method: str) -> dict[str, Any] | None:
    with _arrived:
        while True:
            for message in _requests:
                if message["method"] in (method, "<eof>"):
                    _requests.remove(message)
                    return None if message["method"] == "<eof>" else message
            _arrived.wait()


def play(phase: str) -> None:
    for frame in SCRIPT["phases"].get(phase, []):
        write(base64.b64decode(frame["b64"]))
        if "wait" in frame:
            key = json.dumps(frame["wait"])
            with _answered:
                _answered.wait_for(lambda key=key: key in _answers, timeout=3)


def main() -> None:
    threading.Thread(target=reader, daemon=True).start()
    if (init := next_request("initialize")) is None:
        return
    reply(init["id"], {"protocolVersion": 1, "agentCapabilities": {}})
    if (new := next_request("session/new")) is None:
        return
    play("early")
    reply(new["id"], {"sessionId": SCRIPT["session"]})
    play("after_new")
    if (prompt := next_request("session/prompt")) is None:
        return
    play("prompt")
    end = SCRIPT["end"]
    if "exit" in end:
        os._exit(end["exit"])
    if "error" in end:
        code, message = end["error"]
        write(
            json.dumps(
                {"jsonrpc": "2.0", "id": prompt["id"], "error": {"code": code, "message": message}}
            ).encode()
        )
    else:
        reply(prompt["id"], {"stopReason": end["stop"]})
    next_request("<never>")  # until the client closes stdin


if __name__ == "__main__":
    main()
