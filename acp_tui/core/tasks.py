"""A task group for an owner that starts tasks from plain code and joins them when it closes.

The session layer starts work from where nothing can await it (a key press, a signal handler, a
timer, a spare no longer wanted) and its owners have no `async with` of their own (the app makes
its driver before its event loop runs). So each owner keeps a `TaskHost`: one task group, opened in
a task of its own at the first start, that every task joins; `aclose()` waits for them all. A task
that fails is logged: it never cancels its siblings.

asyncio's own TaskGroup, not anyio's: it only starts and joins, and anyio's backend (about 30 ms to
import) would load before `acp-tui run` spawns its first child.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine
from typing import Any

log = logging.getLogger(__name__)


class TaskHost:
    def __init__(self, name: str) -> None:
        self.name = name
        self._group: asyncio.TaskGroup | None = None
        self._waiting: list[Coroutine[Any, Any, Any]] = []
        self._root: asyncio.Task[None] | None = None
        self._closing = asyncio.Event()

    def start_soon(self, work: Coroutine[Any, Any, Any]) -> None:
        """Run `work` in the group; joined by `aclose()` if it starts before every task ended.
        Once the host is closed, nothing new starts."""
        if self._group is not None:
            guarded = self._guarded(work)
            try:
                self._group.create_task(guarded)
            except RuntimeError:  # the group has finished
                guarded.close()
                work.close()
            return
        if self._root is not None and self._root.done():
            work.close()
            return
        self._waiting.append(work)
        if self._root is None:
            self._root = asyncio.get_running_loop().create_task(self._serve(), name=self.name)

    async def aclose(self) -> None:
        """Let the tasks end, and return once they all have; nothing new starts after."""
        self._closing.set()
        if self._root is not None:
            await asyncio.wait({self._root})

    async def _serve(self) -> None:
        async with asyncio.TaskGroup() as group:
            self._group = group
            waiting, self._waiting = self._waiting, []
            for work in waiting:
                group.create_task(self._guarded(work))
            await self._closing.wait()
        self._group = None

    async def _guarded(self, work: Coroutine[Any, Any, Any]) -> None:
        try:
            await work
        except Exception:
            log.exception("a task of %s failed", self.name)
