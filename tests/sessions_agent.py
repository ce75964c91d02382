"""A stdlib ACP agent whose sessions outlive it: each kept as a JSON file in a folder, so a fresh
process can continue one (the conversations of issue 19).

    python sessions_agent.py key=value ...

Options:
  store=DIR          where sessions are kept (required)
  offers=HOW         resume | load | both | none: how a session can be reached again (default both)
  start_delay=S      seconds before it answers `initialize` (a slow agent: warm starts)
  mark=PATH          append a line to PATH at start (`started <pid>`): how many processes ran
  write=NAME         each prompt is also appended as a line to NAME in its cwd (a change to record)
  list=1             offer `session/list`: every kept session (its id, its first prompt as its title,
                     its cwd, when it last changed), newest first, `page` to a page (default 50)
  page=N             how many sessions one `session/list` answer holds (a `nextCursor` for the rest)
  stuck=1            every `session/list` answer is the first page, with the same `nextCursor`
  hostile=1          the titles carry markup and control characters

Each prompt's answer is `turn N: PROMPT` and, from the second turn on, ` (after: P1 | P2 ...)`: a
follow-up shows it reached the session it continues. `session/load` replays the history (a
`user_message_chunk` and an `agent_message_chunk` per turn) before it answers; `session/resume`
replays nothing.
"""

from __future__ import annotations

import json
import os
import sys
import time
import uuid
from pathlib import Path
from typing import Any

OPTIONS = dict(arg.split("=", 1) for arg in sys.argv[1:])
STORE = Path(OPTIONS["store"])
OFFERS = OPTIONS.get("offers", "both")


def send(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", **message}) + "\n")
    sys.stdout.flush()


def update(session_id: str, kind: str, text: str) -> None:
    content = {"type": "text", "text": text}
    params = {"sessionId": session_id, "update": {"sessionUpdate": kind, "content": content}}
    send({"method": "session/update", "params": params})


def kept(session_id: str) -> dict[str, Any] | None:
    """A kept session: {"cwd": ..., "turns": [{"prompt": ..., "answer": ...}, ...]}."""
    path = STORE / f"{session_id}.json"
    try:
        session: dict[str, Any] = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return session


def history(session_id: str) -> list[dict[str, str]] | None:
    session = kept(session_id)
    return None if session is None else session["turns"]


def keep(session_id: str, cwd: str, turns: list[dict[str, str]]) -> None:
    (STORE / f"{session_id}.json").write_text(json.dumps({"cwd": cwd, "turns": turns}))


def capabilities() -> dict[str, Any]:
    sessions: dict[str, Any] = {}
    if OFFERS in ("resume", "both"):
        sessions["resume"] = {}
    if OPTIONS.get("list"):
        sessions["list"] = {}
    return {"loadSession": OFFERS in ("load", "both"), "sessionCapabilities": sessions}


def listed(params: dict[str, Any]) -> dict[str, Any]:
    """`session/list`: the kept sessions, newest first, a page at a time."""
    found = []
    for path in STORE.glob("*.json"):
        session = kept(path.stem)
        if session is None or (params.get("cwd") and params["cwd"] != session["cwd"]):
            continue
        title = session["turns"][0]["prompt"] if session["turns"] else None
        if title is not None and OPTIONS.get("hostile"):
            title += " \x1b]0;pwned\x07[bold red]x[/]"
        updated = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(path.stat().st_mtime))
        info = {"sessionId": path.stem, "cwd": session["cwd"], "title": title, "updatedAt": updated}
        found.append((path.stat().st_mtime_ns, path.stem, info))
    found.sort(key=lambda item: (item[0], item[1]), reverse=True)
    size = int(OPTIONS.get("page", "50"))
    start = 0 if OPTIONS.get("stuck") else int(params.get("cursor") or 0)
    result: dict[str, Any] = {"sessions": [info for *_, info in found[start : start + size]]}
    if start + size < len(found):
        result["nextCursor"] = "again" if OPTIONS.get("stuck") else str(start + size)
    return result


def answer(method: str, params: dict[str, Any]) -> dict[str, Any]:
    if method == "initialize":
        time.sleep(float(OPTIONS.get("start_delay", "0")))
        return {"result": {"protocolVersion": 1, "agentCapabilities": capabilities()}}
    if method == "session/new":
        session_id = f"kept-{uuid.uuid4().hex[:12]}"
        keep(session_id, params.get("cwd", os.getcwd()), [])
        return {"result": {"sessionId": session_id}}
    if method == "session/list" and OPTIONS.get("list"):
        return {"result": listed(params)}
    if method in ("session/resume", "session/load"):
        allowed = "resume" if method == "session/resume" else "load"
        if OFFERS not in (allowed, "both"):
            return {"error": {"code": -32601, "message": f"Method not found: {method}"}}
        turns = history(params["sessionId"])
        if turns is None:
            return {"error": {"code": -32002, "message": "Resource not found"}}
        if method == "session/load":
            for turn in turns:
                update(params["sessionId"], "user_message_chunk", turn["prompt"])
                update(params["sessionId"], "agent_message_chunk", turn["answer"])
            return {"result": None}
        return {"result": {}}
    if method == "session/prompt":
        session_id = params["sessionId"]
        turns = history(session_id) or []
        prompt = "".join(block.get("text", "") for block in params["prompt"])
        text = f"turn {len(turns) + 1}: {prompt}"
        if turns:
            text += " (after: " + " | ".join(turn["prompt"] for turn in turns) + ")"
        update(session_id, "agent_message_chunk", text)
        if "write" in OPTIONS:
            with open(OPTIONS["write"], "a") as f:
                f.write(prompt + "\n")
        turns.append({"prompt": prompt, "answer": text})
        keep(session_id, (kept(session_id) or {}).get("cwd", os.getcwd()), turns)
        return {"result": {"stopReason": "end_turn"}}
    return {"error": {"code": -32601, "message": f"Method not found: {method}"}}


def main() -> None:
    STORE.mkdir(parents=True, exist_ok=True)
    if "mark" in OPTIONS:
        with open(OPTIONS["mark"], "a") as f:
            f.write(f"started {os.getpid()}\n")
    for line in sys.stdin:
        message = json.loads(line)
        if "id" not in message or "method" not in message:
            continue  # notifications (session/cancel) and answers: nothing to do here
        send({"id": message["id"], **answer(message["method"], message.get("params") or {})})


if __name__ == "__main__":
    main()
