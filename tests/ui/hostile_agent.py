"""An ACP agent (standard library only) whose every string is hostile: markup-like, escape-laden
and surrogate-bearing. It writes such a stderr line, streams such an answer, asks a permission
with such a title, options and content, reports usage, then fails the prompt with such an error.

    python hostile_agent.py [stage=error|complete]
"""

from __future__ import annotations

import json
import sys

MARKUP = "[/] [@click=app.screenshot('f','/tmp/x')]click me[/] [bold red]red[/]"
ESCAPES = "\x1b]0;pwned-title\x07 \x1b]52;c;cHduZWQ=\x07 \x1b[2J \x1b[6n \u202eevil"
SURROGATE = "lone\ud800surrogate"
HOSTILE = f"{MARKUP} {ESCAPES} {SURROGATE}"
STAGE = dict(arg.split("=", 1) for arg in sys.argv[1:]).get("stage", "error")


def send(message: dict[str, object]) -> None:
    # json.dumps spells the lone surrogate as an escape: valid JSON, no valid UTF-8 for it
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", **message}) + "\n")
    sys.stdout.flush()


def update(kind: str, **fields: object) -> None:
    send(
        {
            "method": "session/update",
            "params": {"sessionId": "s1", "update": {"sessionUpdate": kind, **fields}},
        }
    )


def main() -> None:
    for raw in sys.stdin:
        message = json.loads(raw)
        method, rid = message.get("method"), message.get("id")
        if method == "initialize":
            sys.stderr.write(f"stderr: {MARKUP} {ESCAPES}\n")
            sys.stderr.flush()
            send({"id": rid, "result": {"protocolVersion": 1, "agentCapabilities": {}}})
        elif method == "session/new":
            send({"id": rid, "result": {"sessionId": "s1"}})
        elif method == "session/prompt":
            update("agent_message_chunk", content={"type": "text", "text": f"# {MARKUP}\n\n{HOSTILE}\n"})
            call = {
                "toolCallId": "t1",
                "title": f"title {HOSTILE}",
                "kind": "edit",
                "status": "pending",
                "content": [{"type": "content", "content": {"type": "text", "text": f"content {HOSTILE}"}}],
            }
            options = [
                {"optionId": "a1", "name": f"allow {MARKUP}", "kind": "allow_once"},
                {"optionId": "r1", "name": f"reject {ESCAPES}", "kind": "reject_once"},
            ]
            send(
                {
                    "id": 77,
                    "method": "session/request_permission",
                    "params": {"sessionId": "s1", "toolCall": call, "options": options},
                }
            )
            reply = json.loads(sys.stdin.readline())
            update(
                "agent_message_chunk",
                content={"type": "text", "text": f"\n\ngot {json.dumps(reply.get('result'))}\n"},
            )
            if STAGE == "error":
                send({"id": rid, "error": {"code": -32000, "message": f"error {HOSTILE}"}})
            else:
                send({"id": rid, "result": {"stopReason": "end_turn"}})
        elif method == "session/cancel":
            pass
        elif rid is not None:
            send({"id": rid, "error": {"code": -32601, "message": "Method not found"}})


if __name__ == "__main__":
    main()
