"""A local stand-in of the OpenAI Responses API as Codex calls it, on 127.0.0.1.

Codex posts each model request to `{base_url}/responses` (JSON, `"stream": true`) and reads the
answer as server-sent events: `response.created`, then output items (`response.output_item.added`,
`response.output_text.delta`..., `response.output_item.done`), then `response.completed` with the
token usage; a stream that ends without `response.completed` is an error to it. A tool call is an
output item of type `function_call`; Codex runs it, then posts the next request with the
`function_call_output`, so a turn with one tool call takes two scripted replies.

Tests queue replies (`script`, `tests.standins.sse`), one per request, in order; a request with
none queued gets a 500.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

from tests.standins.sse import HOLD, Event, QuietHandler, Reply, ScriptedStream

__all__ = ["HOLD", "ResponsesStandIn", "answer", "command", "patch", "reasoning"]
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


class ResponsesStandIn(ScriptedStream):
    """The server: `url` is the base URL a Codex provider's `base_url` takes."""

    name = "responses stand-in"

    @property
    def url(self) -> str:
        return f"{self.origin}/v1"

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

    def _events(self, reply: Reply) -> Iterator[Event | str]:
        yield {"type": "response.created", "response": {"id": f"resp-{len(self.requests)}"}}
        yield from reply
        usage = {"input_tokens": 100, "input_tokens_details": {"cached_tokens": 20}, "output_tokens": 7}
        usage |= {"output_tokens_details": {"reasoning_tokens": 2}, "total_tokens": 107}
        yield {"type": "response.completed", "response": {"id": f"resp-{len(self.requests)}", "usage": usage}}

    def handler(self) -> type[BaseHTTPRequestHandler]:
        stand_in = self

        class Handler(QuietHandler):
            def do_POST(self) -> None:
                body = self.read_json()
                reply = stand_in.next_reply(body) if self.path.endswith("/responses") else None
                if reply is None:
                    self.send_error(500, "no reply scripted")
                    return
                stand_in.stream(self, stand_in._events(reply))

        return Handler
