"""An app-server that breaks the protocol as Codex does not, in the standard library alone.

    python rogue_app_server.py MODE

MODE `no-thread-id`: `thread/start` is answered without a thread. MODE `garbage`: after answering
`turn/start`, a delta with a control sequence, then lines that are no message of ours (not JSON, not
an object, an answer to a request never sent, fields of the wrong type), then an exit with code 3.
"""

from __future__ import annotations

import json
import sys

MODE = sys.argv[1]
THREAD = "thread-1"


def send(message: object) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def delta(text: object) -> None:
    send({"method": "item/agentMessage/delta", "params": {"threadId": THREAD, "itemId": "m", "delta": text}})


for line in sys.stdin:
    message = json.loads(line)
    method, rid = message.get("method"), message.get("id")
    if method == "initialize":
        send({"id": rid, "result": {"userAgent": "rogue"}})
    elif method == "thread/start":
        send({"id": rid, "result": {"thread": {} if MODE == "no-thread-id" else {"id": THREAD}}})
    elif method == "turn/start":
        send({"id": rid, "result": {"turn": {"id": "turn-1"}}})
        delta("partial \x1b[2J")
        sys.stdout.write('not json\n[1, 2]\n{"id": 99, "result": {}}\n')
        delta(42)
        send({"method": "item/started", "params": {"threadId": THREAD, "item": "not an item"}})
        send({"method": "turn/completed", "params": {"threadId": "another thread", "turn": {}}})
        sys.stdout.flush()
        sys.stderr.write("rogue: giving up\n")
        sys.exit(3)
