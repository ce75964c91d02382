"""The child process: spawned in its own process group, its pipes drained, killed as a group.

Why a group: agents are often launched through wrappers (`sh -c`, `npx`, `uv run`); killing only the
wrapper leaves the real agent holding our pipes. `start_new_session=True` makes the child the leader
of a fresh group, and every signal here goes to the whole group.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import sys
import weakref
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .watchdog import watchdog

READ_SIZE = 1 << 16
# Lines checked and handed to the SDK between two yields to the event loop: a child streaming as
# fast as its pipe allows must not keep other runs, the screen and key presses waiting. (Before text
# chunks were joined, 16 fast children gave 1.2 s of loop lag feeding whole reads; 60 ms in batches
# of 8 messages; 190 ms in batches of 32.)
LINES_PER_YIELD = 32
FULL_CHECK_BYTES = 1 << 20  # messages up to this size are parsed once here before the SDK sees them


class _ChildProtocol(asyncio.subprocess.SubprocessStreamProtocol):
    """Notices the leader's exit as it happens. Python 3.11's `Process.wait()` also waits for the
    pipes to close, which never happens while a wrapper's grandchild still holds them."""

    def __init__(self, limit: int, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__(limit=limit, loop=loop)
        self.exited: asyncio.Future[None] = loop.create_future()

    def process_exited(self) -> None:
        super().process_exited()
        if not self.exited.done():
            self.exited.set_result(None)


@dataclass(frozen=True)
class Child:
    """A spawned agent: its pipes, and the group it leads (pgid == pid)."""

    process: asyncio.subprocess.Process
    exited: asyncio.Future[None]

    @property
    def pid(self) -> int:
        return self.process.pid

    @property
    def returncode(self) -> int | None:
        return self.process.returncode

    async def wait_exit(self, timeout: float | None = None) -> int | None:
        """The leader's return code once it has exited, or None if `timeout` passed first."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(self.exited), timeout)
        return self.process.returncode


class _OnePerTurn:
    """Lets one waiter through per turn of the event loop."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._waiting: deque[asyncio.Future[None]] = deque()
        self._releasing = False

    async def wait(self) -> None:
        waiter = self._loop.create_future()
        self._waiting.append(waiter)
        if not self._releasing:
            self._releasing = True
            self._loop.call_soon(self._release)
        await waiter

    def _release(self) -> None:
        while self._waiting:
            waiter = self._waiting.popleft()
            if not waiter.done():  # not given up (a cancelled run)
                waiter.set_result(None)
                break
        self._releasing = bool(self._waiting)
        if self._releasing:
            self._loop.call_soon(self._release)


_spawn_turns: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _OnePerTurn] = weakref.WeakKeyDictionary()


async def spawn(command: str, args: Sequence[str], *, cwd: str, env: Mapping[str, str]) -> Child:
    """Start the child with piped stdio as the leader of a new session (and process group).

    One spawn per turn of the event loop: a spawn holds the loop for 10 to 25 ms (fork, exec, a
    watcher thread), and sixteen runs started together did all of theirs in one turn, freezing the
    screen for a third of a second. Taking turns, the screen and key presses go on in between.
    """
    loop = asyncio.get_running_loop()
    if loop not in _spawn_turns:
        _spawn_turns[loop] = _OnePerTurn(loop)
    await _spawn_turns[loop].wait()
    protocol = _ChildProtocol(limit=1 << 16, loop=loop)
    transport, _ = await loop.subprocess_exec(
        lambda: protocol,
        command,
        *args,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        cwd=cwd,
        env=dict(env),
        start_new_session=True,
    )
    child = Child(asyncio.subprocess.Process(transport, protocol, loop), protocol.exited)
    watchdog.watch(child.pid)
    return child


def spawn_error_message(exc: OSError, command: str, cwd: str) -> str:
    if isinstance(exc, FileNotFoundError) and exc.filename == cwd:
        return f"working directory not found: {cwd}"
    if isinstance(exc, FileNotFoundError):
        return f"command not found: {command}"
    if isinstance(exc, PermissionError):
        return f"command not executable: {command}"
    return f"could not start {command}: {exc.strerror or exc}"


Line = bytes | bytearray
_NOT_PARSED: dict[str, Any] = {}  # a message too large to parse twice: passed on as it is


def parse_rpc_message(line: Line) -> dict[str, Any] | None:
    """The message, if the SDK can take this line without its receive loop dying; else None.

    The SDK skips lines that are not JSON, but JSON that is not an object (`42`), or a response whose
    id cannot key a dict (`{"id": {}}`), kills its receive loop and with it the session. Parsing here
    too costs a few microseconds a line; the SDK's own handling of a message costs a hundred.
    """
    if not line.lstrip().startswith(b"{"):
        return None
    if len(line) > FULL_CHECK_BYTES:  # a second parse of a huge message would double its memory
        return _NOT_PARSED if line.rstrip().endswith(b"}") else None
    try:
        message = json.loads(line.decode())  # strictly: json.loads(bytes) lets surrogates through
    except ValueError:  # invalid JSON, invalid UTF-8
        return None
    if not isinstance(message, dict):
        return None
    method, rid = message.get("method"), message.get("id")
    # `true` and `1.0` equal 1 as dict keys: they would answer our request 1 in its stead.
    valid_id = rid is None or isinstance(rid, str) or (type(rid) is int)
    return message if (method is None or isinstance(method, str)) and valid_id else None


def _text_chunk(message: dict[str, Any]) -> tuple[str, str] | None:
    """(session id, text) if the message is a plain text `agent_message_chunk`, and nothing more."""
    params = message.get("params")
    if message.keys() != {"jsonrpc", "method", "params"} or message["method"] != "session/update":
        return None
    if message["jsonrpc"] != "2.0":
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


def coalesce(messages: list[tuple[Line, dict[str, Any]]]) -> list[Line]:
    """The lines to hand to the SDK: runs of plain text chunks for one session become one chunk.

    A child streaming flat out sends thousands of small chunks a second, and the SDK spends a task
    and a model validation on each (about 0.1 ms): 16 such children kept the event loop busy for
    most of its time. Joined, the same text arrives in the same order, at a fraction of the cost.
    """
    lines: list[Line] = []
    run: list[str] = []
    run_session: str | None = None
    run_first: Line = b""

    def end_run() -> None:
        if len(run) == 1:
            lines.append(run_first)
        elif run:
            update = {
                "sessionUpdate": "agent_message_chunk",
                "content": {"type": "text", "text": "".join(run)},
            }
            joined = {
                "jsonrpc": "2.0",
                "method": "session/update",
                "params": {"sessionId": run_session, "update": update},
            }
            lines.append(json.dumps(joined, separators=(",", ":")).encode())
        run.clear()

    for line, message in messages:
        chunk = _text_chunk(message) if message is not _NOT_PARSED else None
        if chunk is None or chunk[0] != run_session:
            end_run()
        if chunk is None:
            lines.append(line)
            run_session = None
            continue
        if not run:
            run_session, run_first = chunk[0], line
        run.append(chunk[1])
    end_run()
    return lines


async def pump_json_lines(
    source: asyncio.StreamReader,
    sink: asyncio.StreamReader,
    *,
    max_line_bytes: int,
    on_dropped: Callable[[str], None],
    on_oversized: Callable[[], None] = lambda: None,
    join_chunks: bool = True,
) -> None:
    """Copy the child's stdout into `sink`, keeping only JSON-RPC messages the SDK can take, and
    (unless `join_chunks` is off, as when the exact frames are traced) joining runs of text chunks.

    A line longer than `max_line_bytes` is dropped as it arrives instead of growing a buffer
    without bound.
    """
    partial = bytearray()
    discarding = False

    def keep(line: Line, kept: list[tuple[Line, dict[str, Any]]]) -> None:
        message = parse_rpc_message(line)
        if message is not None:
            kept.append((line, message))
        elif line.strip():
            on_dropped(f"not a JSON-RPC message ({len(line)} bytes): {line[:60]!r}")

    def feed(kept: list[tuple[Line, dict[str, Any]]]) -> list[Line]:
        return coalesce(kept) if join_chunks else [line for line, _ in kept]

    try:
        while chunk := await source.read(READ_SIZE):
            lines: deque[Line] = deque()
            start = 0
            while (end := chunk.find(b"\n", start)) != -1:
                piece, start = chunk[start:end], end + 1
                if discarding:
                    discarding = False
                elif partial:
                    partial += piece
                    lines.append(partial)  # handed on as it is: a copy of a 20 MB line is 20 MB
                    partial = bytearray()
                else:
                    lines.append(piece)
            if not discarding:
                partial += chunk[start:]
                if len(partial) > max_line_bytes:
                    on_oversized()
                    on_dropped(f"a line longer than {max_line_bytes} bytes was dropped")
                    partial = bytearray()
                    discarding = True
            while lines:
                kept: list[tuple[Line, dict[str, Any]]] = []
                for _ in range(min(LINES_PER_YIELD, len(lines))):
                    keep(lines.popleft(), kept)  # popped: none of it is held while the SDK reads
                if kept:
                    sink.feed_data(b"\n".join(feed(kept)))
                    sink.feed_data(b"\n")
                del kept
                await asyncio.sleep(0)
    finally:
        if partial:
            last: list[tuple[Line, dict[str, Any]]] = []
            keep(partial, last)
            if last:
                sink.feed_data(last[0][0])
                sink.feed_data(b"\n")
        sink.feed_eof()


async def drain_lines(
    source: asyncio.StreamReader, on_line: Callable[[str], None], *, max_line_chars: int = 2000
) -> None:
    """Read the child's stderr to its end, so a chatty child never blocks on a full pipe."""
    partial = b""
    while chunk := await source.read(READ_SIZE):
        lines = (partial + chunk).split(b"\n")
        partial = lines.pop()[: max_line_chars * 4]
        for line in lines:
            on_line(line[: max_line_chars * 4].decode("utf-8", "replace").rstrip("\r")[:max_line_chars])
        await asyncio.sleep(0)
    if partial:
        on_line(partial.decode("utf-8", "replace").rstrip("\r")[:max_line_chars])


def signal_group(pgid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


def group_alive(pgid: int) -> bool:
    """Whether any process of the group still runs (zombies do not count: they are dead)."""
    if sys.platform.startswith("linux"):
        return any(pgid == pg for pg in _live_process_groups())
    try:
        os.killpg(pgid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    return True


def _live_process_groups() -> list[int]:
    groups = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        # "pid (comm) state ppid pgrp ...": comm may hold spaces and parentheses.
        fields = stat[stat.rfind(b")") + 2 :].split()
        if fields and fields[0] not in (b"Z", b"X"):
            groups.append(int(fields[2]))
    return groups


async def wait_group_gone(pgid: int, timeout: float) -> bool:
    """Poll until nothing of the group runs. Only stray group members make this loop at all."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    delay = 0.002
    while group_alive(pgid):
        if loop.time() >= deadline:
            return False
        await asyncio.sleep(delay)
        delay = min(delay * 2, 0.05)
    return True


async def terminate_group(child: Child, *, term_grace: float, exit_grace: float = 0.0) -> None:
    """End the child's whole group: let it exit by itself for `exit_grace` (it has seen stdin EOF),
    then SIGTERM the group, then SIGKILL what is left after `term_grace`. Returns once all is gone."""
    try:
        await _terminate_group(child, term_grace=term_grace, exit_grace=exit_grace)
    finally:
        watchdog.forget(child.pid)


async def _terminate_group(child: Child, *, term_grace: float, exit_grace: float) -> None:
    pgid = child.pid
    if exit_grace > 0:
        await child.wait_exit(exit_grace)
    if child.returncode is not None and not group_alive(pgid):
        return
    loop = asyncio.get_running_loop()
    deadline = loop.time() + term_grace
    signal_group(pgid, signal.SIGTERM)
    if await child.wait_exit(term_grace) is not None and await wait_group_gone(pgid, deadline - loop.time()):
        return
    signal_group(pgid, signal.SIGKILL)
    await child.wait_exit()
    await wait_group_gone(pgid, 5.0)
