"""The one-consumer event queue behind `SubagentRun.events()`.

A slow consumer (a busy screen, or nobody at all) must not cost a copy per chunk: consecutive output
deltas merge while they wait, and chatty diagnostics (stderr lines, hidden updates) are capped while
unread, and a usage report or a tool call's state still unread is replaced by the next one for it
(only the latest matters). The
run's result keeps the full counts either way. The session layer queues its own events through the
same stream (`EventStream[AttemptEvent]`).
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncIterator
from typing import Any, Generic, TypeVar

from acp_tui.core.model import (
    Finished,
    HiddenUpdate,
    OutputDelta,
    RunEvent,
    StderrLine,
    ToolCallChanged,
    UsageReported,
)

# Unread diagnostics beyond this are dropped (stderr: with a note once the reader catches up).
MAX_PENDING_DIAGNOSTICS = 2000

E = TypeVar("E")


class _Latest:
    """An unread report whose newer version takes its place (a usage report, a tool call's state)."""

    def __init__(self, key: object, event: UsageReported | ToolCallChanged) -> None:
        self.key = key
        self.event = event


class EventStream(Generic[E]):
    def __init__(self) -> None:
        self._items: deque[Any] = deque()
        self._latest: dict[object, _Latest] = {}
        self._wakeup = asyncio.Event()
        self._pending_diagnostics = 0
        self._skipped_stderr = 0
        self._subscribed = False
        self._closed = False

    def push(self, event: E | RunEvent) -> None:
        if self._closed:
            return
        if isinstance(event, OutputDelta):
            tail = self._items[-1] if self._items else None
            if isinstance(tail, list):
                tail.append(event.text)
            else:
                self._items.append([event.text])
        elif isinstance(event, StderrLine | HiddenUpdate):
            if self._pending_diagnostics >= MAX_PENDING_DIAGNOSTICS:
                if isinstance(event, StderrLine):
                    self._skipped_stderr += 1
                return
            if self._skipped_stderr and isinstance(event, StderrLine):
                self._items.append(StderrLine(f"[{self._skipped_stderr} stderr lines skipped]"))
                self._skipped_stderr = 0
            self._pending_diagnostics += 1
            self._items.append(event)
        elif isinstance(event, UsageReported | ToolCallChanged):
            key = event.call.id if isinstance(event, ToolCallChanged) else None
            latest = self._latest.get(key)
            if latest is not None:
                latest.event = event
                return
            self._latest[key] = latest = _Latest(key, event)
            self._items.append(latest)
        else:
            self._items.append(event)
            self._closed = isinstance(event, Finished)
        self._wakeup.set()

    def __aiter__(self) -> AsyncIterator[E]:
        if self._subscribed:
            raise RuntimeError("events() has one consumer; it was already taken")
        self._subscribed = True
        return self._iterate()

    async def _iterate(self) -> AsyncIterator[E]:
        while True:
            while not self._items:
                self._wakeup.clear()
                await self._wakeup.wait()
            item = self._items.popleft()
            if isinstance(item, list):
                event: Any = OutputDelta("".join(item))
            elif isinstance(item, _Latest):
                event = item.event
                del self._latest[item.key]
            else:
                event = item
                if isinstance(event, StderrLine | HiddenUpdate):
                    self._pending_diagnostics -= 1
            yield event
            if isinstance(event, Finished):
                return
