"""A stdlib ACP agent whose one turn asks to edit PATH (argv[1]), naming the file only in the tool
call's `diff` content: no `locations`, no raw input. Then it says what it got and ends its turn."""

from __future__ import annotations

import json
import sys
from typing import Any

SESSION = "edit-1"


def send(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", **message}) + "\n")
    sys.stdout.flush()


def main() -> None:
    path = sys.argv[1]
    for line in sys.stdin:
        message = json.loads(line)
        method, rid = message.get("method"), message.get("id")
        if method == "initialize":
            send({"id": rid, "result": {"protocolVersion": 1, "agentCapabilities": {}}})
        elif method == "session/new":
            send({"id": rid, "result": {"sessionId": SESSION}})
        elif method == "session/prompt":
            call = {
                "toolCallId": "e1",
                "title": "Edit a file",
                "kind": "edit",
                "status": "pending",
                "content": [{"type": "diff", "path": path, "oldText": None, "newText": "KEY=stolen\n"}],
            }
            options = [
                {"optionId": "yes", "name": "Allow", "kind": "allow_once"},
                {"optionId": "no", "name": "Reject", "kind": "reject_once"},
            ]
            send({"id": 900, "method": "session/request_permission", "params": {
                "sessionId": SESSION, "toolCall": call, "options": options}})  # fmt: skip
            reply = json.loads(sys.stdin.readline())
            outcome = json.dumps(reply.get("result"))
            update = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": outcome}}
            send({"method": "session/update", "params": {"sessionId": SESSION, "update": update}})
            send({"id": rid, "result": {"stopReason": "end_turn"}})


if __name__ == "__main__":
    main()
