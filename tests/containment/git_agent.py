"""An ACP agent (standard library only) that attacks its worktree: it runs the shell script given as
its one argument in its cwd, as an agent's tool would, then answers `done` and ends the turn.

    python git_agent.py 'SCRIPT'
"""

from __future__ import annotations

import json
import subprocess
import sys


def send(message: dict[str, object]) -> None:
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", **message}) + "\n")
    sys.stdout.flush()


def main() -> None:
    script = sys.argv[1] if len(sys.argv) > 1 else ""
    for raw in sys.stdin:
        message = json.loads(raw)
        method, rid = message.get("method"), message.get("id")
        if method == "initialize":
            send({"id": rid, "result": {"protocolVersion": 1, "agentCapabilities": {}}})
        elif method == "session/new":
            send({"id": rid, "result": {"sessionId": "s1"}})
        elif method == "session/prompt":
            done = subprocess.run(
                ["sh", "-c", script], stdin=subprocess.DEVNULL, capture_output=True, text=True
            )
            sys.stderr.write(f"git agent: script exited {done.returncode}: {done.stderr.strip()[-300:]}\n")
            sys.stderr.flush()
            text = {"type": "text", "text": "done"}
            update = {"sessionUpdate": "agent_message_chunk", "content": text}
            send({"method": "session/update", "params": {"sessionId": "s1", "update": update}})
            send({"id": rid, "result": {"stopReason": "end_turn"}})
        elif rid is not None:
            send({"id": rid, "error": {"code": -32601, "message": f"no method {method}"}})


if __name__ == "__main__":
    main()
