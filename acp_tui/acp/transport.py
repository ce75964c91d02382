"""The one reader and writer of a child's JSON-RPC frames: the SDK's message-level transport seam.

`acp.connect_to_agent(client, transport)` takes any object with `send`, `receive` and `close`. This
one reads the child's stdout itself, so that nothing the agent writes can stop the reader or reach
the SDK malformed:

- lines are split here, and a line longer than `max_line_bytes` is dropped as it arrives (the
  answer says it lost a message) instead of growing a buffer without bound;
- each line is parsed once, strictly (UTF-8; JSON with no `NaN`, `Infinity` or `1e999`, nested
  at most 128 deep: `acp_tui.core.files.parse_json`), and checked against the JSON-RPC 2.0 shape:
  `jsonrpc` (when given: some agents leave it out), id types, method a string, result xor error,
  error an object with an integer code and a string message. What fails is dropped and noted;
- a malformed *response to one of our requests* is replaced by a JSON-RPC error for that request,
  so the call fails at once ("the agent sent a malformed response to session/prompt: ...") instead
  of waiting forever for an answer that already came;
- runs of plain text chunks for one session are joined into one notification: a child streaming
  flat out sends thousands a second, and the SDK spends a task and a validation on each; and while
  text streams (short reads of text chunks only, one after another), each read is followed by a
  pause (`TEXT_HOLD`, the pipe not read meanwhile), so that a model's stream, a few words at a time,
  comes joined a few chunks at a time too;
- the trace, when on, records every frame in and out as it crossed the pipe (before any joining),
  so tracing never changes what the SDK is fed.

A protocol of JSON lines that is not JSON-RPC (Claude Code's stream-json) is read the same way with
a `check` of its own in place of the JSON-RPC rules.
"""

from __future__ import annotations

import asyncio
import json
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from acp_tui.core.files import parse_json
from acp_tui.runs.trace import TraceWriter

if TYPE_CHECKING:
    from acp_tui.process.group import Stdin
    from acp_tui.runs.provider import ProviderRun

READ_SIZE = 1 << 16
# Messages handed to the SDK between two yields to the event loop: a child streaming as fast as its
# pipe allows must not keep other runs, the screen and key presses waiting.
MESSAGES_PER_YIELD = 32
# While text streams (a short read of text chunks only, after another), the pipe is left unread
# this long after each read: a model streams a few words at a time, dozens of chunks a second, and
# each chunk handed on alone costs a wake-up of the loop, a task, a validation and a span in the SDK,
# and an event at every hop after it (sixteen agents at 60 chunks/s: 31 % of a core; 10 % held;
# sixty-four at 15 chunks/s, each chunk alone at a 50 ms hold: 55 %, 46 % at this one).
# What came meanwhile is read at once, joined. Nothing waits longer than a pane waits to draw it
# anyway (`ui.widgets.answer_document.FLUSH_INTERVAL`), and an answer of one chunk not at all.
TEXT_HOLD = 1 / 15
MALFORMED = "acp-tui:malformed-response"  # marks the error that stands in for a malformed response

Message = dict[str, Any]


class MalformedFrame(ValueError):
    """Why a frame is no JSON-RPC 2.0 message we can pass on."""


def parse_frame(line: bytes | bytearray) -> Message:
    """The JSON object on `line`, parsed strictly; raises MalformedFrame saying why not."""
    try:
        text = bytes(line).decode()  # decoded first: json.loads(bytes) is lenient
    except UnicodeDecodeError:
        raise MalformedFrame("not UTF-8") from None
    try:
        message = parse_json(text)
    except json.JSONDecodeError:
        raise MalformedFrame("not JSON") from None
    except ValueError as exc:  # NaN, Infinity, 1e999, nesting: valid for Python, no JSON for us
        raise MalformedFrame(str(exc)) from None
    if not isinstance(message, dict):
        raise MalformedFrame("not a JSON object")
    return message


def _valid_id(rid: Any) -> bool:
    # `true` and `1.0` equal 1 as dict keys: they would answer request 1 in its stead.
    return isinstance(rid, str) or type(rid) is int


def request_problem(message: Message) -> str | None:
    """What makes an incoming request or notification invalid, or None."""
    if message.get("jsonrpc", "2.0") != "2.0":  # absent is tolerated: some agents leave it out
        return 'not "jsonrpc": "2.0"'
    if not isinstance(message["method"], str):
        return "method is not a string"
    if "id" in message and not _valid_id(message["id"]):
        return "request id is neither a string nor an integer"
    if "result" in message or "error" in message:
        return "a request carries a result or an error"
    if not isinstance(message.get("params", {}), dict | list):
        return "params are neither an object nor an array"
    return None


def response_problem(message: Message) -> str | None:
    """What makes a response (a message with an id and no method) invalid, or None."""
    if message.get("jsonrpc", "2.0") != "2.0":
        return 'not "jsonrpc": "2.0"'
    if ("result" in message) == ("error" in message):
        return "it needs exactly one of result and error"
    if "error" in message:
        error = message["error"]
        if not isinstance(error, dict):
            return f"error is not an object ({json.dumps(error)[:80]})"
        if type(error.get("code")) is not int:
            return "error code is not an integer"
        if not isinstance(error.get("message"), str):
            return "error message is not a string"
    return None


def text_chunk(message: Message) -> tuple[str, str] | None:
    """(session id, text) if the message is a plain text `agent_message_chunk`, and nothing more."""
    params = message.get("params")
    if message.keys() != {"jsonrpc", "method", "params"} or message["method"] != "session/update":
        return None
    if not isinstance(params, dict) or params.keys() != {"sessionId", "update"}:
        return None
    update = params["update"]
    if not isinstance(update, dict) or update.keys() != {"sessionUpdate", "content"}:
        return None
    content = update["content"]
    if update["sessionUpdate"] != "agent_message_chunk" or not isinstance(content, dict):
        return None
    if content.keys() != {"type", "text"} or content["type"] != "text":
        return None
    session_id, text = params["sessionId"], content["text"]
    return (session_id, text) if isinstance(session_id, str) and isinstance(text, str) else None


def _joined_chunk(session_id: str, texts: list[str]) -> Message:
    update = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "".join(texts)}}
    return {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {"sessionId": session_id, "update": update},
    }


def _release(waiter: asyncio.Future[None] | None) -> None:
    if waiter is not None and not waiter.done():
        waiter.set_result(None)


class StdioTransport:
    """JSON-RPC messages over a child's stdin and stdout (see the module's docstring)."""

    def __init__(
        self,
        stdout: asyncio.StreamReader,
        stdin: Stdin,
        *,
        max_line_bytes: int,
        on_note: Callable[[str, bytes | bytearray], None],
        on_lost: Callable[[], None],
        on_frame: Callable[[], None] = lambda: None,
        trace: TraceWriter | None = None,
        check: Callable[[Message], str | None] | None = None,
        stdout_pipe: asyncio.ReadTransport | None = None,
    ) -> None:
        """`check`: what makes a message invalid (None: nothing), instead of the JSON-RPC rules.
        `stdout_pipe`: the pipe `stdout` reads, paused while text is held (else it is read as it
        comes, the loop woken at each write, and only the SDK spared)."""
        self._stdout = stdout
        self._stdout_pipe = stdout_pipe
        self._stdin = stdin
        self._max_line_bytes = max_line_bytes
        self._on_note = on_note  # (what happened, the offending line): the run masks, then shows
        self._on_lost = on_lost  # a message too large to read was dropped
        self._on_frame = on_frame  # the agent said something (idle timeouts)
        self._trace = trace
        self._check = check
        # Messages read, each with what it says as a plain text chunk (`text_chunk`, found once).
        self._ready: deque[tuple[Message, tuple[str, str] | None]] = deque()
        self._partial = bytearray()
        self._discarding = False
        self._pending: dict[int | str, str] = {}  # our requests awaiting an answer: id -> method
        self._highest_id = -1
        self._since_yield = 0
        self._text_read = False  # the last read was short and text chunks only
        self._hold = False  # ...and the one before it too: the next read waits first (TEXT_HOLD)
        self._holding: asyncio.Future[None] | None = None  # the wait, while the pipe is left unread
        self._stopping = False  # we asked the agent to stop: its end is read as it comes
        self.eof = asyncio.Event()  # the child's stdout is closed (by every holder)

    @classmethod
    def of_run(
        cls, run: ProviderRun, *, check: Callable[[Message], str | None] | None = None
    ) -> StdioTransport:
        """The stdio of `run`'s child, its limits, notes and trace the run's; the child tended in
        the run's task group (its stderr drained, its exit watched) for as long as the run lasts."""
        assert run.child is not None and run.task_group is not None
        stdout, stdin = run.child.stdio
        lines = cls(
            stdout,
            stdin,
            max_line_bytes=run.config.max_line_bytes,
            on_note=run.stderr.dropped,
            on_lost=run.output.lost,
            on_frame=run.heard_from_agent,
            trace=run.start_trace(),
            check=check,
            stdout_pipe=run.child.stdout_pipe,
        )
        run.child.tend(run.task_group, lines.eof, run.child_gone)
        return lines

    # The SDK's side ----------------------------------------------------------------------------

    async def send(self, message: Message) -> None:
        # What the child says next may answer this: read as it comes. Once it is asked to stop,
        # nothing is held: its end (its answer, its stdout's close once it is killed) is awaited.
        self._stopping = self._stopping or message.get("method") == "session/cancel"
        _release(self._holding)
        if "method" in message and "id" in message:
            self._pending[message["id"]] = message["method"]
            if type(message["id"]) is int:
                self._highest_id = max(self._highest_id, message["id"])
        if self._trace is not None:
            self._trace.write("out", message)
        self._stdin.write((json.dumps(message, separators=(",", ":")) + "\n").encode())
        await self._stdin.drain()

    async def receive(self) -> Message | None:
        while not self._ready:
            if self.eof.is_set() or not await self._read():
                return None
        self._since_yield += 1
        if self._since_yield >= MESSAGES_PER_YIELD:
            self._since_yield = 0
            await asyncio.sleep(0)
        return self._next()

    async def close(self) -> None:
        self._stdin.close()

    # Reading -----------------------------------------------------------------------------------

    async def _read(self) -> bool:
        """Read what the pipe has; False at end of file."""
        if self._hold:
            await self._hold_text()
        try:
            chunk = await self._stdout.read(READ_SIZE)
        except (ConnectionError, OSError):
            chunk = b""
        if chunk:
            self._on_frame()
        else:
            if self._partial and not self._discarding:
                self._take(self._partial)
            self._partial = bytearray()
            self.eof.set()
            return bool(self._ready)
        start = 0
        while (end := chunk.find(b"\n", start)) != -1:
            piece, start = chunk[start:end], end + 1
            if self._discarding:
                self._discarding = False
            elif self._partial:
                self._partial += piece
                line, self._partial = self._partial, bytearray()
                self._take(line)  # handed on as it is: a copy of a 20 MB line is 20 MB
            else:
                self._take(piece)
        ready = self._ready
        text_read = len(chunk) < READ_SIZE and bool(ready) and all(text for _, text in ready)
        self._hold = text_read and self._text_read and not self._stopping
        self._text_read = text_read
        if not self._discarding:
            self._partial += chunk[start:]
            if len(self._partial) > self._max_line_bytes:
                self._on_lost()
                self._on_note(f"a line longer than {self._max_line_bytes} bytes was dropped", b"")
                self._partial = bytearray()
                self._discarding = True
        return True

    async def _hold_text(self) -> None:
        """Leave the pipe unread for TEXT_HOLD (see there), or until we send the child something
        (its answer is awaited), so that what comes meanwhile is read in one."""
        self._hold = False
        loop = asyncio.get_running_loop()
        self._holding = holding = loop.create_future()
        timer = loop.call_later(TEXT_HOLD, _release, holding)
        pipe = self._stdout_pipe
        if pipe is not None:
            pipe.pause_reading()
        try:
            await holding
        finally:
            timer.cancel()
            self._holding = None
            if pipe is not None:
                pipe.resume_reading()

    def _take(self, line: bytes | bytearray) -> None:
        """Parse and check one line; queue it, or drop it with a note. Nothing here may raise."""
        if not line.strip():
            return
        try:
            message = parse_frame(line)
        except MalformedFrame as exc:
            self._on_note(f"not a JSON-RPC message ({len(line)} bytes, {exc}), dropped", line)
            return
        except Exception as exc:  # e.g. MemoryError on a frame we could hold but not parse
            self._on_note(f"not a JSON-RPC message ({len(line)} bytes, {type(exc).__name__}), dropped", line)
            return
        if self._trace is not None:
            self._trace.write("in", message)
        if self._check is not None:
            problem = self._check(message)
        elif "method" in message:
            problem = request_problem(message)
        elif "id" in message and _valid_id(message["id"]):
            problem, checked = self._check_response(message)
            if checked is None and problem is None:
                return
            message = checked or message
        else:
            problem = "neither a request, a notification nor a response"
        if problem is not None:
            self._on_note(f"not a JSON-RPC message ({problem}), dropped", line)
            return
        self._ready.append((message, text_chunk(message)))

    def _check_response(self, message: Message) -> tuple[str | None, Message | None]:
        rid = message["id"]
        method = self._pending.pop(rid, None)
        if method is None:
            # An id we asked and that was answered already (a duplicate) goes quietly.
            answered = type(rid) is int and rid <= self._highest_id
            return (None if answered else f"a response to a request never sent (id {rid!r})"), None
        problem = response_problem(message)
        if problem is None:
            return None, message
        error = {"code": -32603, "message": f"the agent sent a malformed response to {method}: {problem}"}
        return None, {"jsonrpc": "2.0", "id": rid, "error": {**error, "data": MALFORMED}}

    def _next(self) -> Message:
        """The next message; a run of plain text chunks for one session comes as one."""
        message, chunk = self._ready.popleft()
        if chunk is None or not self._ready:
            return message
        texts = [chunk[1]]
        while self._ready and (following := self._ready[0][1]) and following[0] == chunk[0]:
            texts.append(following[1])
            self._ready.popleft()
        return message if len(texts) == 1 else _joined_chunk(chunk[0], texts)
