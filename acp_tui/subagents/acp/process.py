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
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from .watchdog import watchdog

READ_SIZE = 1 << 16
# Messages handed to the SDK between two yields to the event loop: a child streaming as fast as its
# pipe allows must not keep other runs, the screen and key presses waiting. With 16 fast children,
# feeding whole reads measured 1.2 s of loop lag; batches of 8, 60 ms; of 32, 190 ms (and 10% more
# throughput for one child). 16 sits between.
MESSAGES_PER_YIELD = 16
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


async def spawn(command: str, args: Sequence[str], *, cwd: str, env: Mapping[str, str]) -> Child:
    """Start the child with piped stdio as the leader of a new session (and process group)."""
    loop = asyncio.get_running_loop()
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


def is_rpc_message(line: bytes) -> bool:
    """Whether the SDK can take this line without its receive loop dying.

    The SDK skips lines that are not JSON, but JSON that is not an object (`42`), or a response whose
    id cannot key a dict (`{"id": {}}`), kills its receive loop and with it the session. Parsing here
    too costs a few microseconds a line; the SDK's own handling of a message costs a hundred.
    """
    if not line.lstrip().startswith(b"{"):
        return False
    if len(line) > FULL_CHECK_BYTES:  # a second parse of a huge message would double its memory
        return line.rstrip().endswith(b"}")
    try:
        message = json.loads(line.decode())  # strictly: json.loads(bytes) lets surrogates through
    except ValueError:  # invalid JSON, invalid UTF-8
        return False
    if not isinstance(message, dict):
        return False
    method, rid = message.get("method"), message.get("id")
    # `true` and `1.0` equal 1 as dict keys: they would answer our request 1 in its stead.
    valid_id = rid is None or isinstance(rid, str) or (type(rid) is int)
    return (method is None or isinstance(method, str)) and valid_id


async def pump_json_lines(
    source: asyncio.StreamReader,
    sink: asyncio.StreamReader,
    *,
    max_line_bytes: int,
    on_dropped: Callable[[str], None],
    on_oversized: Callable[[], None] = lambda: None,
) -> None:
    """Copy the child's stdout into `sink`, keeping only JSON-RPC messages the SDK can take.

    A line longer than `max_line_bytes` is dropped as it arrives instead of growing a buffer
    without bound.
    """
    partial = bytearray()
    discarding = False

    def keep(line: bytes, kept: list[bytes]) -> None:
        if is_rpc_message(line):
            kept.append(line)
        elif line.strip():
            on_dropped(f"not a JSON-RPC message ({len(line)} bytes): {line[:60]!r}")

    try:
        while chunk := await source.read(READ_SIZE):
            kept: list[bytes] = []
            start = 0
            while (end := chunk.find(b"\n", start)) != -1:
                piece, start = chunk[start:end], end + 1
                if discarding:
                    discarding = False
                elif partial:
                    partial += piece
                    keep(bytes(partial), kept)
                    partial.clear()
                else:
                    keep(piece, kept)
            if not discarding:
                partial += chunk[start:]
                if len(partial) > max_line_bytes:
                    on_oversized()
                    on_dropped(f"a line longer than {max_line_bytes} bytes was dropped")
                    partial.clear()
                    discarding = True
            for i in range(0, len(kept), MESSAGES_PER_YIELD):
                sink.feed_data(b"\n".join(kept[i : i + MESSAGES_PER_YIELD]) + b"\n")
                await asyncio.sleep(0)
    finally:
        if partial:
            keep(bytes(partial), kept := [])
            if kept:
                sink.feed_data(kept[0] + b"\n")
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
