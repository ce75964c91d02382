"""A local stand-in of the Anthropic Messages API as Claude Code calls it, on 127.0.0.1.

Claude Code (the CLI the Claude Agent SDK bundles) reaches the API at `ANTHROPIC_BASE_URL` with the
key of `ANTHROPIC_API_KEY` (sent as `x-api-key`): a `HEAD /api/hello` at start, then each model
request as `POST /v1/messages?beta=true` (JSON, `"stream": true`), whose answer it reads as
server-sent events: `message_start`, then content blocks (`content_block_start`, deltas,
`content_block_stop`), then `message_delta` with the stop reason and the usage, and `message_stop`.
A tool call is a `tool_use` block and the stop reason `tool_use`; Claude Code asks permission (the
SDK's `can_use_tool`), runs it or not, then posts the next request with the `tool_result`, so a
turn with one tool call takes two scripted replies.

Tests queue replies (`script`), one per model request, in order; a request with none queued gets a
400 (Claude Code does not retry that). Claude Code also asks, alongside, for a title of the session
(a request that offers no tools): such side requests get a fixed line and take no scripted reply.
`HOLD` in a reply keeps its stream open, mid-answer, until `release()` (or `close()`): see
`tests.standins.sse`.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.standins.sse import HOLD, Event, QuietHandler, Reply, ScriptedStream

__all__ = ["API_KEY", "HOLD", "MessagesStandIn", "answer", "tool_use"]
MESSAGE_IDS = itertools.count(1)
API_KEY = "sk-ant-stand-in-key"  # what the tests hand Claude Code: a secret to find masked
USAGE = {"input_tokens": 100, "output_tokens": 7, "cache_read_input_tokens": 20}


def answer(*chunks: str) -> Reply:
    """A text answer streamed in `chunks` (a chunk `HOLD` holds the stream there), ending the turn."""
    deltas: Reply = [c if c == HOLD else _delta(0, {"type": "text_delta", "text": c}) for c in chunks]
    block = {"type": "text", "text": ""}
    return [_start(0, block), *deltas, _stop(0), _end("end_turn")]


def tool_use(name: str, arguments: dict[str, Any], call_id: str = "toolu_1", *, saying: str = "") -> Reply:
    """A call of Claude Code's tool `name` (Bash, Write, ...), which it asks permission for; with
    `saying`, a text block first."""
    said: Reply = []
    if saying:
        text = _delta(0, {"type": "text_delta", "text": saying})
        said = [_start(0, {"type": "text", "text": ""}), text, _stop(0)]
    index = len(said) // 3
    block = {"type": "tool_use", "id": call_id, "name": name, "input": {}}
    delta = _delta(index, {"type": "input_json_delta", "partial_json": json.dumps(arguments)})
    return [*said, _start(index, block), delta, _stop(index), _end("tool_use")]


def _start(index: int, block: dict[str, Any]) -> Event:
    return {"type": "content_block_start", "index": index, "content_block": block}


def _delta(index: int, delta: dict[str, Any]) -> Event:
    return {"type": "content_block_delta", "index": index, "delta": delta}


def _stop(index: int) -> Event:
    return {"type": "content_block_stop", "index": index}


def _end(stop_reason: str) -> Event:
    delta = {"stop_reason": stop_reason, "stop_sequence": None}
    return {"type": "message_delta", "delta": delta, "usage": {"output_tokens": USAGE["output_tokens"]}}


class MessagesStandIn(ScriptedStream):
    """The server: `url` is what `ANTHROPIC_BASE_URL` takes."""

    name = "messages stand-in"

    def __init__(self) -> None:
        self.side_requests: list[dict[str, Any]] = []  # those that offered no tools (a title)
        self.keys: list[str | None] = []  # the `x-api-key` of each model request
        super().__init__()

    @property
    def url(self) -> str:
        return self.origin

    def env(self) -> dict[str, str]:
        """What a preset's `env` gives Claude Code to reach this stand-in."""
        return {"ANTHROPIC_BASE_URL": self.url, "ANTHROPIC_API_KEY": API_KEY}

    def _reply_to(self, body: dict[str, Any], key: str | None) -> Reply | None:
        if not body.get("tools"):
            self.side_requests.append(body)
            return answer("A session")
        self.keys.append(key)
        return self.next_reply(body)

    def _events(self, reply: Reply, model: str) -> Iterator[Event | str]:
        message = {
            "id": f"msg_{next(MESSAGE_IDS)}",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {**USAGE, "output_tokens": 1},
        }
        yield {"type": "message_start", "message": message}
        yield from reply
        yield {"type": "message_stop"}

    def handler(self) -> type[BaseHTTPRequestHandler]:
        stand_in = self

        class Handler(QuietHandler):
            def do_HEAD(self) -> None:  # the CLI's check that the API is there
                self.send_response(200)
                self.send_header("content-length", "0")
                self.end_headers()

            def do_POST(self) -> None:
                body = self.read_json()
                reply = None
                if self.path.split("?")[0] == "/v1/messages":
                    reply = stand_in._reply_to(body, self.headers.get("x-api-key"))
                if reply is None:
                    error = {"type": "invalid_request_error", "message": "no reply scripted"}
                    data = json.dumps({"type": "error", "error": error}).encode()
                    self.send_response(400)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                    return
                stand_in.stream(self, stand_in._events(reply, str(body.get("model"))))

        return Handler
