"""A scripted ACP agent in the standard library alone, so it can misbehave as no SDK agent would.

    python scripted_agent.py key=value ...

Options (all optional):
  text=...            the answer, streamed in `chunks` pieces (default "Hello from the scripted agent.")
  chunks=N            how many agent_message_chunk notifications carry the answer (default 1)
  stop=REASON         the stopReason of the prompt response (default end_turn; any string goes)
  hidden=1            interleave thoughts, a plan, tool calls and an image chunk with the answer
  early=1             stream the answer before answering session/new (then answer prompt at once)
  foreign=1           also send chunks for another session id (must be ignored)
  permission=SET      ask permission before answering: normal | allow_always_first | no_allow | none
  fs=1                call fs/read_text_file, fs/write_text_file and terminal/create; answer with
                      the error codes we got back
  stderr_bytes=N      write N bytes to stderr before answering initialize
  stderr=TEXT         write TEXT as a stderr line before answering initialize
  delay=S             pause between chunks (default 0)
  forever=1           after the answer, keep streaming until cancelled
  on_cancel=MODE      honour (default: end the turn `cancelled`) | end_turn | ignore
  ignore_term=1       ignore SIGTERM
  hang=STEP           never answer `initialize` or `session/new`
  exit=CODE           exit with CODE (after `exit_at`: start | initialize | prompt, mid-stream)
  exit_at=STEP        where to exit (default prompt, after the first chunk)
  close_stdin=1       close stdin after answering session/new and keep running (a broken pipe)
  close_stdout=1      close stdout after the first chunk and keep running
  wrapper=1           re-run this script as a grandchild with the same options (minus wrapper) and
                      wait for it: the `sh -c` / npx case
  orphan=1            like wrapper, but the parent exits at once, leaving the grandchild on our pipes
  garbage=1           write non-JSON lines, non-object JSON, and invalid UTF-8 before each frame
  record=PATH         append every message received to PATH, one JSON per line
"""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from typing import Any

OPTS: dict[str, str] = dict(arg.split("=", 1) for arg in sys.argv[1:])
SESSION = "sess-1"
_write_lock = threading.Lock()
_inbox: queue.Queue[dict[str, Any] | None] = queue.Queue()
_responses: dict[int, dict[str, Any]] = {}
_response_ready = threading.Condition()
_next_id = 1000
cancelled = threading.Event()


def opt(name: str, default: str = "") -> str:
    return OPTS.get(name, default)


def send(message: dict[str, Any]) -> None:
    data = json.dumps({"jsonrpc": "2.0", **message}).encode() + b"\n"
    with _write_lock:
        if opt("garbage"):
            sys.stdout.buffer.write(b"not json at all\n42\n[1,2]\n\xff\xfe{bad utf8}\n\n")
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()


def notify_chunk(text: str, kind: str = "agent_message_chunk", session: str = SESSION) -> None:
    update = {"sessionUpdate": kind, "content": {"type": "text", "text": text}}
    send({"method": "session/update", "params": {"sessionId": session, "update": update}})


def notify(update: dict[str, Any]) -> None:
    send({"method": "session/update", "params": {"sessionId": SESSION, "update": update}})


def request(method: str, params: dict[str, Any]) -> dict[str, Any]:
    """Call the client and wait for its answer (the reader thread files responses)."""
    global _next_id
    _next_id += 1
    rid = _next_id
    send({"id": rid, "method": method, "params": params})
    with _response_ready:
        while rid not in _responses:
            _response_ready.wait()
        return _responses.pop(rid)


def reader() -> None:
    for raw in sys.stdin.buffer:
        message = json.loads(raw)
        if opt("record"):
            with open(opt("record"), "a") as f:
                f.write(json.dumps(message) + "\n")
        if "method" not in message:
            with _response_ready:
                _responses[message["id"]] = message
                _response_ready.notify_all()
        elif message["method"] == "session/cancel":
            cancelled.set()
        else:
            if opt("close_stdin") and message["method"] == "session/new":
                # Closed by the reading thread itself, before the answer goes out, so the
                # client's next write is sure to hit a closed pipe.
                os.close(0)
                _inbox.put(message)
                return
            _inbox.put(message)
    _inbox.put(None)


def maybe_exit(step: str) -> None:
    if opt("exit") and opt("exit_at", "prompt") == step:
        sys.stderr.write(f"scripted agent: exiting with {opt('exit')} at {step}\n")
        sys.stderr.flush()
        os._exit(int(opt("exit")))


def permission_options() -> list[dict[str, str]]:
    sets = {
        "normal": [("a1", "Allow", "allow_once"), ("r1", "Reject", "reject_once")],
        "allow_always_first": [
            ("aa", "Always allow", "allow_always"),
            ("a1", "Allow once", "allow_once"),
            ("r1", "Reject", "reject_once"),
            ("ra", "Always reject", "reject_always"),
        ],
        "no_allow": [("r1", "Reject", "reject_once"), ("ra", "Always reject", "reject_always")],
        "none": [],
    }
    return [{"optionId": i, "name": n, "kind": k} for i, n, k in sets[opt("permission")]]


def answer_prompt(rid: Any, prompt_text: str) -> None:
    maybe_exit("prompt-start")
    if opt("permission"):
        call = {"toolCallId": "t1", "title": "Write proof.txt", "kind": "edit", "status": "pending"}
        reply = request(
            "session/request_permission",
            {"sessionId": SESSION, "toolCall": call, "options": permission_options()},
        )
        notify_chunk(f"[permission: {json.dumps(reply.get('result', reply.get('error')))}]")
    if opt("fs"):
        codes = [
            request("fs/read_text_file", {"sessionId": SESSION, "path": "/etc/hostname"}),
            request("fs/write_text_file", {"sessionId": SESSION, "path": "x.txt", "content": "x"}),
            request("terminal/create", {"sessionId": SESSION, "command": "touch", "args": ["y.txt"]}),
        ]
        notify_chunk(" ".join(str(r.get("error", {}).get("code")) for r in codes))
    if not opt("early"):
        stream_answer(prompt_text)
    if opt("forever"):
        while not cancelled.is_set() or opt("on_cancel") == "ignore":
            notify_chunk(".")
            time.sleep(float(opt("delay", "0.05")))
    stop = opt("stop", "end_turn")
    if cancelled.is_set() and opt("on_cancel", "honour") == "honour":
        stop = "cancelled"
    send({"id": rid, "result": {"stopReason": stop}})


def stream_answer(prompt_text: str) -> None:
    text = opt("text", "Hello from the scripted agent.").replace("{prompt}", prompt_text)
    n = max(1, int(opt("chunks", "1")))
    size = -(-len(text) // n) if text else 0
    pieces = [text[i * size : (i + 1) * size] for i in range(n)]
    for i, piece in enumerate(pieces):
        if cancelled.is_set() and opt("on_cancel", "honour") == "honour":
            return
        if opt("hidden"):
            notify_chunk(f"thinking {i}", kind="agent_thought_chunk")
            notify({"sessionUpdate": "plan", "entries": []})
            notify({"sessionUpdate": "tool_call", "toolCallId": f"c{i}", "title": "Read", "kind": "read"})
            notify({"sessionUpdate": "tool_call_update", "toolCallId": f"c{i}", "status": "completed"})
            notify(
                {
                    "sessionUpdate": "agent_message_chunk",
                    "content": {"type": "image", "data": "AA==", "mimeType": "image/png"},
                }
            )
        if opt("foreign"):
            notify_chunk("FOREIGN", session="sess-other")
        notify_chunk(piece)
        if i == 0:
            maybe_exit("prompt")
            if opt("close_stdout"):
                os.close(1)
                time.sleep(3600)
        if opt("delay"):
            time.sleep(float(opt("delay")))


def serve() -> None:
    if opt("ignore_term"):
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    maybe_exit("start")
    threading.Thread(target=reader, daemon=True).start()
    while (message := _inbox.get()) is not None:
        method, rid, params = message["method"], message.get("id"), message.get("params") or {}
        if method == "initialize":
            maybe_exit("initialize")
            if opt("stderr_bytes"):
                sys.stderr.write("e" * 99 + "\n" for _ in range(int(opt("stderr_bytes")) // 100))
            if opt("stderr"):
                sys.stderr.write(opt("stderr") + "\n")
            sys.stderr.flush()
            if opt("hang") == "initialize":
                continue
            send({"id": rid, "result": {"protocolVersion": 1, "agentCapabilities": {}}})
        elif method == "session/new":
            if opt("hang") == "session/new":
                continue
            if opt("early"):
                stream_answer("")
            send({"id": rid, "result": {"sessionId": SESSION}})
        elif method == "session/prompt":
            text = "".join(b.get("text", "") for b in params.get("prompt", []))
            threading.Thread(target=answer_prompt, args=(rid, text), daemon=True).start()
        elif rid is not None:
            send({"id": rid, "error": {"code": -32601, "message": "Method not found"}})
    # stdin closed: a well-behaved agent exits; a stubborn one (ignore_term) does not.
    if not (opt("close_stdin") or opt("ignore_term")):
        sys.exit(0)
    time.sleep(3600)


def main() -> None:
    if opt("wrapper") or opt("orphan"):
        args = [a for a in sys.argv[1:] if not a.startswith(("wrapper=", "orphan="))]
        child = subprocess.Popen([sys.executable, __file__, *args])
        if opt("orphan"):
            os._exit(0)
        sys.exit(child.wait())
    serve()


if __name__ == "__main__":
    main()
