"""A stand-in of Claude Code's CLI gone wrong (stdlib only), for what the real one will not do: it
answers `initialize`, then, to the prompt, streams `partial`, writes a line that is no JSON, and
exits with code 3 saying why on stderr."""

from __future__ import annotations

import json
import sys


def say(message: dict[str, object]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


for line in sys.stdin:
    message = json.loads(line)
    if message.get("type") == "control_request":
        response = {"subtype": "success", "request_id": message["request_id"], "response": {"models": []}}
        say({"type": "control_response", "response": response})
    elif message.get("type") == "user":
        text = {"type": "text_delta", "text": "partial"}
        delta = {"type": "content_block_delta", "index": 0, "delta": text}
        say({"type": "stream_event", "uuid": "u1", "session_id": "s1", "event": delta})
        sys.stdout.write("{this is no JSON\n")
        sys.stdout.flush()
        sys.stderr.write("rogue: boom\n")
        sys.exit(3)
