"""The Codex app-server's JSON-RPC, from our side: our requests and their answers, its
notifications and its requests, over one child's stdio.

Frames are JSON lines, read and checked by the transport every run shares (`StdioTransport`: a line
too long is dropped, malformed JSON is dropped and noted, a malformed answer to one of our requests
stands in as an error for it). The app-server leaves out `"jsonrpc": "2.0"`; so do we. Here:

- a request of ours waits for its answer: its result, `RpcError` for an error, `ConnectionError`
  when the server is gone first;
- notifications are handed on in the order they came, in the reading task (so the answer's text
  keeps its order);
- the server's requests (approvals, which may wait for a person) are answered each in a task of
  its own, so reading goes on meanwhile; one we do not take (`Unanswered`) gets "method not found".

Written here rather than taken from the ACP SDK's `Connection`: that one is generic too, but
importing it imports the whole SDK (about a second), which a Codex run has no other use for.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import anyio
from anyio.abc import TaskGroup

from acp_tui.acp.transport import MALFORMED, StdioTransport

log = logging.getLogger(__name__)

METHOD_NOT_FOUND = -32601
INTERNAL_ERROR = -32603

OnNotification = Callable[[str, Mapping[str, Any]], None]
OnRequest = Callable[[str, Mapping[str, Any]], Awaitable[Any]]


class RpcError(Exception):
    """The server answered one of our requests with an error."""

    def __init__(self, method: str, code: Any, message: str, *, malformed: bool = False) -> None:
        super().__init__(message if malformed else f"{method} failed: {message} ({code})")
        self.code = code


class Unanswered(Exception):
    """A request of the server's that we do not take: it is answered "method not found"."""


class Peer:
    def __init__(
        self, transport: StdioTransport, on_notification: OnNotification, on_request: OnRequest
    ) -> None:
        self._transport = transport
        self._on_notification = on_notification
        self._on_request = on_request
        self._next_id = 0
        self._waiting: dict[int, tuple[str, anyio.Event, list[Mapping[str, Any]]]] = {}
        self.closed = anyio.Event()  # the server's stdout ended: no answer comes any more

    async def request(self, method: str, params: Mapping[str, Any]) -> Any:
        if self.closed.is_set():
            raise ConnectionError(f"no answer to {method}: the app-server is gone")
        rid, self._next_id = self._next_id, self._next_id + 1
        answered = anyio.Event()
        box: list[Mapping[str, Any]] = []
        self._waiting[rid] = (method, answered, box)
        try:
            await self._transport.send({"id": rid, "method": method, "params": dict(params)})
            await answered.wait()
        finally:
            self._waiting.pop(rid, None)
        if not box:
            raise ConnectionError(f"no answer to {method}: the app-server is gone")
        answer = box[0]
        if "error" in answer:
            error = answer["error"]
            malformed = error.get("data") == MALFORMED
            raise RpcError(method, error.get("code"), str(error.get("message")), malformed=malformed)
        return answer.get("result")

    async def notify(self, method: str) -> None:
        await self._transport.send({"method": method})

    async def serve(self, group: TaskGroup) -> None:
        """Read until the server's stdout ends; its requests are answered in `group`."""
        try:
            while (message := await self._transport.receive()) is not None:
                method = message.get("method")
                params = message.get("params")
                params = params if isinstance(params, Mapping) else {}
                if method is None:
                    self._answered(message)
                elif "id" in message:
                    group.start_soon(self._answer, message["id"], method, params)
                else:
                    self._on_notification(method, params)
        finally:
            self.closed.set()
            for _, answered, _ in self._waiting.values():
                answered.set()  # with nothing in its box: ConnectionError

    def _answered(self, message: Mapping[str, Any]) -> None:
        waiting = self._waiting.get(message["id"]) if type(message["id"]) is int else None
        if waiting is not None:
            waiting[2].append(message)
            waiting[1].set()

    async def _answer(self, rid: Any, method: str, params: Mapping[str, Any]) -> None:
        try:
            reply: dict[str, Any] = {"id": rid, "result": await self._on_request(method, params)}
        except Unanswered:
            reply = {
                "id": rid,
                "error": {"code": METHOD_NOT_FOUND, "message": f"acp-tui does not take {method}"},
            }
        except Exception as exc:  # a bug of ours: the server still gets an answer
            log.exception("answering %s failed", method)
            reply = {"id": rid, "error": {"code": INTERNAL_ERROR, "message": f"{type(exc).__name__}: {exc}"}}
        if not self.closed.is_set():
            with contextlib.suppress(ConnectionError, OSError):  # gone: the run hears so from its EOF
                await self._transport.send(reply)
