"""A local stand-in of the OpenAI Responses API as Codex calls it, on 127.0.0.1.

Codex posts each model request to `{base_url}/responses` (JSON, `"stream": true`) and reads the
answer as server-sent events: `response.created`, then output items (`response.output_item.added`,
`response.output_text.delta`..., `response.output_item.done`), then `response.completed` with the
token usage; a stream that ends without `response.completed` is an error to it. A tool call is an
output item of type `function_call`; Codex runs it, then posts the next request with the
`function_call_output`, so a turn with one tool call takes two scripted replies.

Tests queue replies (`script`), one per request, in order; a request with none queued gets a 500.
`HOLD` in a reply keeps its stream open, mid-answer, until `release()` (or `close()`).
"""

from __future__ import annotations

import itertools
import json
import threading
from collections import deque
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

Event = dict[str, Any]
HOLD = "hold"  # a step of a reply: wait here until released
Reply = list[Event | str]
ITEM_IDS = itertools.count(1)  # every output item has an id of its own, as a model's have
PATCH_OF = "*** Begin Patch\n*** Add File: {path}\n+{line}\n*** End Patch\n"


def answer(*chunks: str) -> Reply:
    """An assistant message streamed in `chunks` (a chunk `HOLD` holds the stream there)."""
    item = {"type": "message", "role": "assistant", "id": f"msg-{next(ITEM_IDS)}"}
    deltas: Reply = [c if c == HOLD else {"type": "response.output_text.delta", "delta": c} for c in chunks]
    text = [{"type": "output_text", "text": "".join(c for c in chunks if c != HOLD)}]
    return [
        {"type": "response.output_item.added", "item": {**item, "content": []}},
        *deltas,
        {"type": "response.output_item.done", "item": {**item, "content": text}},
    ]


def reasoning(summary: str) -> Reply:
    summary_text = [{"type": "summary_text", "text": summary}]
    item = {"type": "reasoning", "id": f"rs-{next(ITEM_IDS)}", "summary": summary_text}
    return [{"type": "response.output_item.done", "item": item}]


def command(line: str, call_id: str = "call-1") -> Reply:
    """A shell command the model asks to run outside Codex's sandbox, which Codex asks approval for.
    No login shell (a profile can take seconds), and Codex waits for it to end (up to 30 s) before it
    asks the model again."""
    arguments = {"cmd": line, "sandbox_permissions": "require_escalated", "justification": "to do the task"}
    return _call("exec_command", {**arguments, "login": False, "yield_time_ms": 30_000}, call_id)


def patch(path: str, line: str, call_id: str = "call-1") -> Reply:
    """A file added by `apply_patch` (as Codex's own tests send it: a heredoc to exec_command),
    which Codex turns into a file change and asks approval for under a read-only sandbox."""
    body = PATCH_OF.format(path=path, line=line)
    arguments = {"cmd": f"apply_patch <<'EOF'\n{body}EOF\n", "login": False, "yield_time_ms": 30_000}
    return _call("exec_command", arguments, call_id)


def _call(name: str, arguments: dict[str, Any], call_id: str) -> Reply:
    item = {"type": "function_call", "call_id": call_id, "name": name, "arguments": json.dumps(arguments)}
    return [{"type": "response.output_item.done", "item": item}]


class ResponsesStandIn:
    """The server: `url` is the base URL a Codex provider's `base_url` takes."""

    def __init__(self) -> None:
        self._replies: deque[Reply] = deque()
        self._lock = threading.Lock()
        self._released = threading.Event()
        self.requests: list[dict[str, Any]] = []  # the bodies posted, in order
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="responses stand-in")
        self._thread.start()

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def script(self, *replies: Reply) -> None:
        with self._lock:
            self._replies.extend(replies)

    def release(self) -> None:
        """Let every held stream go on (and end)."""
        self._released.set()

    def close(self) -> None:
        self._released.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()

    def __enter__(self) -> ResponsesStandIn:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def write_codex_home(self, home: Path, *, model: str = "stand-in-model") -> None:
        """A Codex home whose model provider is this stand-in: no retries (a failure shows at once),
        approvals on request, a read-only sandbox (so a write or an escalation asks)."""
        home.mkdir(parents=True, exist_ok=True)
        (home / "config.toml").write_text(
            f'model = "{model}"\n'
            'model_provider = "stand-in"\n'
            'approval_policy = "on-request"\n'
            'sandbox_mode = "read-only"\n'
            "[model_providers.stand-in]\n"
            'name = "stand-in"\n'
            f'base_url = "{self.url}"\n'
            'wire_api = "responses"\n'
            "request_max_retries = 0\n"
            "stream_max_retries = 0\n"
        )

    def _next_reply(self, body: dict[str, Any]) -> Reply | None:
        with self._lock:
            self.requests.append(body)
            return self._replies.popleft() if self._replies else None

    def _events(self, reply: Reply) -> Iterator[Event | str]:
        yield {"type": "response.created", "response": {"id": f"resp-{len(self.requests)}"}}
        yield from reply
        usage = {"input_tokens": 100, "input_tokens_details": {"cached_tokens": 20}, "output_tokens": 7}
        usage |= {"output_tokens_details": {"reasoning_tokens": 2}, "total_tokens": 107}
        yield {"type": "response.completed", "response": {"id": f"resp-{len(self.requests)}", "usage": usage}}

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        stand_in = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))))
                reply = stand_in._next_reply(body) if self.path.endswith("/responses") else None
                if reply is None:
                    self.send_error(500, "no reply scripted")
                    return
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("connection", "close")
                self.end_headers()
                self.close_connection = True
                try:
                    for event in stand_in._events(reply):
                        if event == HOLD:
                            stand_in._released.wait()
                            continue
                        assert isinstance(event, dict)
                        self.wfile.write(f"event: {event['type']}\ndata: {json.dumps(event)}\n\n".encode())
                        self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError):
                    pass  # Codex stopped reading (an interrupted turn)

        return Handler
