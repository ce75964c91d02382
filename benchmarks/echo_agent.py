"""A standard-library ACP agent for the benchmarks: fast to start, fast to stream, easy to make stubborn.

    python echo_agent.py [key=value ...]

  (no options)     answer the prompt text back, verbatim, in one chunk, then `end_turn`
  chunks=N         answer with stream_text(N) in N agent_message_chunk notifications, written as
                   fast as the pipe takes them (the client is the bottleneck, not this agent)
  paced=R          answer with markdown_text(R * seconds) at R chunks a second (a model's pace):
                   Markdown of 3 to 6 words a chunk, with headings, lists and code blocks
  seconds=S        with paced=: how long the answer streams (default 60)
  ask=1            ask a permission (session/request_permission) as the answer starts, go on
                   streaming meanwhile, and end the turn only once it is answered
  forever=1        after the answer, stream "." every `delay` seconds (default 0.02) until cancelled
  on_cancel=MODE   honour (default: end the turn `cancelled` at once) | ignore (keep streaming)
  ignore_term=1    ignore SIGTERM (only SIGKILL ends it)
  ignore_eof=1     stay alive when stdin closes

It speaks newline-delimited JSON-RPC with `json` and two threads, nothing else: about 20 ms from
spawn to ready and 10 MB of RSS, so a benchmark measures the client, not this.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
import time

SESSION = "bench-1"


def stream_piece(i: int) -> str:
    """The i-th chunk of a streamed answer: numbered tokens, 10 per line, paragraphs of 10 lines."""
    sep = "\n\n" if i % 100 == 99 else "\n" if i % 10 == 9 else " "
    return f"t{i:05d}{sep}"


def stream_text(n: int) -> str:
    return "".join(stream_piece(i) for i in range(n))


_WORDS = [
    *("the", "agent", "reads", "a", "file", "then", "writes", "its"),
    *("plan", "and", "checks", "every", "step", "before", "it", "answers"),
]


def markdown_piece(i: int) -> str:
    """The i-th chunk of a paced Markdown answer: 3 to 6 words, and every so often a heading, a list
    item or a code block (opened and closed over several chunks)."""
    words = " ".join(_WORDS[(i + k) % len(_WORDS)] for k in range(3 + i % 4))
    step = i % 60
    if step == 0:
        return f"\n\n## Part {i // 60}\n\n{words} "
    if 20 <= step < 24:
        return f"\n- item {i}: {words}"
    if step == 24:
        return "\n\n```python\n"
    if 25 <= step < 30:
        return f"value_{i} = compute({words.replace(' ', '_')!r})  # a line of code that is long enough\n"
    if step == 30:
        return "```\n\n"
    return words + (". " if i % 7 == 6 else " ")


def markdown_text(n: int) -> str:
    return "".join(markdown_piece(i) for i in range(n))


_CHUNK_HEAD = (
    b'{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"' + SESSION.encode() + b'",'
    b'"update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":'
)
_CHUNK_TAIL = b"}}}}\n"


PERMISSION_REQUEST = {
    "jsonrpc": "2.0",
    "id": "bench-ask",
    "method": "session/request_permission",
    "params": {
        "sessionId": SESSION,
        "toolCall": {
            "toolCallId": "call-1",
            "title": "bench: may it write?",
            "kind": "edit",
            "status": "pending",
        },
        "options": [
            {"optionId": "allow", "name": "Allow", "kind": "allow_once"},
            {"optionId": "reject", "name": "Reject", "kind": "reject_once"},
        ],
    },
}


def chunk_line(text: str) -> bytes:
    return _CHUNK_HEAD + json.dumps(text).encode() + _CHUNK_TAIL


def main() -> None:
    opts = dict(arg.split("=", 1) for arg in sys.argv[1:])
    if opts.get("ignore_term"):
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    out = sys.stdout.buffer
    lock = threading.Lock()
    cancelled = threading.Event()
    answered = threading.Event()

    def send(data: bytes) -> None:
        with lock:
            out.write(data)
            out.flush()

    def reply(rid: object, result: dict[str, object]) -> None:
        send(json.dumps({"jsonrpc": "2.0", "id": rid, "result": result}).encode() + b"\n")

    def answer(rid: object, prompt_text: str) -> None:
        n = int(opts.get("chunks", "0"))
        paced = float(opts.get("paced", "0"))
        if opts.get("ask"):
            send(json.dumps(PERMISSION_REQUEST).encode() + b"\n")
        if paced:
            total = int(paced * float(opts.get("seconds", "60")))
            started = time.monotonic()
            for i in range(total):
                if cancelled.is_set() and opts.get("on_cancel") != "ignore":
                    break
                pause = started + i / paced - time.monotonic()
                if pause > 0:
                    time.sleep(pause)
                send(chunk_line(markdown_piece(i)))
        elif n:
            lines = [chunk_line(stream_piece(i)) for i in range(n)]
            for start in range(0, n, 2048):
                if cancelled.is_set() and opts.get("on_cancel") != "ignore":
                    break
                send(b"".join(lines[start : start + 2048]))
        else:
            send(chunk_line(prompt_text))
        if opts.get("forever"):
            delay = float(opts.get("delay", "0.02"))
            while not cancelled.is_set() or opts.get("on_cancel") == "ignore":
                send(chunk_line("."))
                time.sleep(delay)
        while opts.get("ask") and not answered.is_set() and not cancelled.is_set():
            answered.wait(0.05)
        stop = "cancelled" if cancelled.is_set() else "end_turn"
        reply(rid, {"stopReason": stop})

    for raw in sys.stdin.buffer:
        try:
            message = json.loads(raw)
        except ValueError:
            continue
        method, rid = message.get("method"), message.get("id")
        if method == "initialize":
            reply(rid, {"protocolVersion": 1, "agentCapabilities": {}})
        elif method == "session/new":
            reply(rid, {"sessionId": SESSION})
        elif method == "session/prompt":
            blocks = message.get("params", {}).get("prompt", [])
            text = "".join(b.get("text", "") for b in blocks)
            threading.Thread(target=answer, args=(rid, text), daemon=True).start()
        elif method == "session/cancel":
            cancelled.set()
        elif rid == PERMISSION_REQUEST["id"] and method is None:
            answered.set()
        elif rid is not None and method is not None:
            error = {"code": -32601, "message": "Method not found"}
            send(json.dumps({"jsonrpc": "2.0", "id": rid, "error": error}).encode() + b"\n")
    if opts.get("ignore_eof"):
        while True:
            time.sleep(3600)
    # The prompt thread may still be writing; leave without waiting for it.
    out.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
