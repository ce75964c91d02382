"""What every stand-in of a model API shares: a server on 127.0.0.1 whose replies the tests queue
(`script`), one per model request, each streamed as server-sent events; `HOLD` in a reply keeps its
stream open, mid-answer, until `release()` (or `close()`). A stand-in says which requests take a
reply (`reply_to`) and what goes around it (`events`)."""

from __future__ import annotations

import json
import threading
from collections import deque
from collections.abc import Iterable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self

Event = dict[str, Any]
HOLD = "hold"  # a step of a reply: wait here until released
Reply = list[Event | str]


class ScriptedStream:
    name = "stand-in"

    def __init__(self) -> None:
        self._replies: deque[Reply] = deque()
        self._lock = threading.Lock()
        self._released = threading.Event()
        self.requests: list[dict[str, Any]] = []  # the bodies of the model requests, in order
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self.handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name=self.name)
        self._thread.start()

    @property
    def origin(self) -> str:
        return f"http://127.0.0.1:{self._server.server_port}"

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

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def next_reply(self, body: dict[str, Any]) -> Reply | None:
        """The reply queued for this model request (None: none left), the request kept."""
        with self._lock:
            self.requests.append(body)
            return self._replies.popleft() if self._replies else None

    def stream(self, to: BaseHTTPRequestHandler, events: Iterable[Event | str]) -> None:
        """`events` as server-sent events, held at each `HOLD`, until the client stops reading."""
        to.send_response(200)
        to.send_header("content-type", "text/event-stream")
        to.send_header("connection", "close")
        to.end_headers()
        to.close_connection = True
        try:
            for event in events:
                if event == HOLD:
                    self._released.wait()
                    continue
                assert isinstance(event, dict)
                to.wfile.write(f"event: {event['type']}\ndata: {json.dumps(event)}\n\n".encode())
                to.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass  # the agent stopped reading (an interrupted turn)

    def handler(self) -> type[BaseHTTPRequestHandler]:
        raise NotImplementedError


class QuietHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def read_json(self) -> dict[str, Any]:
        body: dict[str, Any] = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))))
        return body
