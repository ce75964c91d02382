"""Worktrees on the far side of a link: the same `Isolation` as at home, run over there.

`serve` runs on the far side, in our shim (`acp_tui.process.shim`, which imports this module and
the workspace's code from memory): it owns one `Isolation` (its slot held for as long as it runs)
and answers JSON lines on stdin, one answer line each on stdout: `add` (a worktree of the checkout
holding `cwd`, at `base`), `record` (its change), `keep`, `remove`; `beat`, a heartbeat, asks for
nothing. At its stdin's end (we quit, we died) or after a silence (the link is cut, as the agents'
shim counts it) it removes every worktree not kept, as a quitting acp-tui does at home.

`FarIsolation` is our end: one per far side, its `add` gives a `FarWorktree`, which is a `Worktree`
whose git runs over there; its change comes back whole and lands in the local record.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
from pathlib import Path
from typing import Any

from acp_tui.workspace.cleanup import AGENT_GIT_DIR
from acp_tui.workspace.git import IsolationError
from acp_tui.workspace.worktrees import (
    DIFF_LIMIT,
    Change,
    DiffStat,
    Isolation,
    Origin,
    Worktree,
    find_origin,
)

BEAT = "beat"  # our end's heartbeat (see `acp_tui.process.link`): no answer

# The far side ---------------------------------------------------------------------------------


async def serve(source: Any, header: dict[str, Any]) -> int:
    """Answer requests from `source` (a binary line reader) until its end, or a silence of
    `header["silence"]` seconds (no heartbeat: the link is cut); then clean up."""
    isolation = Isolation()
    worktrees: dict[int, Worktree] = {}
    loop = asyncio.get_running_loop()
    answering: set[asyncio.Task[None]] = set()
    while True:
        try:
            line = await asyncio.wait_for(loop.run_in_executor(None, source.readline), header["silence"])
        except TimeoutError:
            break
        if not line:
            break
        request = json.loads(line)
        if request.get("op") == BEAT:
            continue
        task = asyncio.ensure_future(_answer(request, isolation, worktrees))
        answering.add(task)
        task.add_done_callback(answering.discard)
    await asyncio.gather(*answering, return_exceptions=True)
    await isolation.aclose()
    return 0


async def _answer(request: dict[str, Any], isolation: Isolation, worktrees: dict[int, Worktree]) -> None:
    try:
        answer = {"id": request["id"], "ok": await _do(request, isolation, worktrees)}
    except IsolationError as exc:
        answer = {"id": request["id"], "error": str(exc)}
    except Exception as exc:  # a bug of ours is still one line there, not a dead server
        answer = {"id": request["id"], "error": f"internal error: {type(exc).__name__}: {exc}"}
    sys.stdout.buffer.write(json.dumps(answer).encode() + b"\n")
    sys.stdout.buffer.flush()


async def _do(request: dict[str, Any], isolation: Isolation, worktrees: dict[int, Worktree]) -> Any:
    op = request["op"]
    if op == "add":
        origin = await find_origin(request["cwd"] or os.getcwd(), request["base"])
        worktree = await isolation.add(origin, request["name"])
        worktree.keep(request["keep"]) if request["keep"] else None
        worktrees[request["id"]] = worktree
        return {"path": str(worktree.path), "origin": _origin_json(origin)}
    worktree = worktrees[request["worktree"]]
    if op == "record":
        change = await worktree.record(
            request["limit"], timeout=request["timeout"], max_file_bytes=request["max_file_bytes"]
        )
        return {
            "stat": change.stat.to_json() if change.stat else None,
            "diff": change.diff,
            "truncated": change.truncated,
            "error": change.error,
            "skipped": list(change.skipped),
        }
    if op == "keep":
        worktree.keep(request["kept"])
        return None
    return await worktree.remove()  # remove


def _origin_json(origin: Origin) -> dict[str, Any]:
    return {
        "toplevel": str(origin.toplevel),
        "common_dir": str(origin.common_dir),
        "prefix": origin.prefix,
        "base": origin.base,
        "dirty": origin.dirty,
        "git_dir": str(origin.git_dir),
        "object_format": origin.object_format,
    }


# Our end --------------------------------------------------------------------------------------


class FarIsolation:
    """The worktrees of one far side (a remote URL and its options), served there by `serve`."""

    def __init__(self, remote: str, options: tuple[str, ...], connect_timeout: float) -> None:
        self.remote, self.options, self.connect_timeout = remote, options, connect_timeout
        self.worktrees: list[FarWorktree] = []
        self._server: Any = None
        self._starting: asyncio.Future[Any] | None = None
        self._numbers = iter(range(1, 1 << 62))
        self._waiting: dict[int, asyncio.Future[Any]] = {}
        self._tasks: list[asyncio.Future[Any]] = []
        self._last_line = ""  # the server's last stderr line (its client's, when out of reach)

    async def add(self, cwd: str | None, name: str, *, base: str | None, keep: bool) -> FarWorktree:
        """A fresh worktree over there of the checkout holding `cwd` (None: the login's home)."""
        number = next(self._numbers)
        said = await self._ask(number, op="add", cwd=cwd, name=name, base=base, keep=keep)
        origin = said["origin"]
        origin = Origin(
            **{**origin, **{key: Path(origin[key]) for key in ("toplevel", "common_dir", "git_dir")}}
        )
        worktree = FarWorktree(self, number, origin, Path(said["path"]))
        worktree.kept = keep
        self.worktrees.append(worktree)
        return worktree

    async def _ask(self, number: int, **request: Any) -> Any:
        server = await self._started()
        waiter = self._waiting[number] = asyncio.get_running_loop().create_future()
        line = json.dumps({"id": number, **request}).encode() + b"\n"
        server.process.stdin.write(line)
        try:
            answer = await waiter
        finally:
            self._waiting.pop(number, None)
        if "error" in answer:
            raise IsolationError(answer["error"])
        return answer["ok"]

    def tell(self, **request: Any) -> None:
        """A request whose answer nobody waits for (keep, a heartbeat)."""
        if self._server is not None and not self._server.process.stdin.is_closing():
            with contextlib.suppress(Exception):
                self._server.process.stdin.write(
                    json.dumps({"id": next(self._numbers), **request}).encode() + b"\n"
                )

    async def _started(self) -> Any:
        if self._starting is None:
            self._starting = asyncio.ensure_future(self._start())
        return await asyncio.shield(self._starting)

    async def _start(self) -> Any:
        from acp_tui.process.group import drain_lines
        from acp_tui.process.link import SILENCE, LinkFailed, open_far

        header = {"serve": f"{__name__}:serve", "modules": _far_modules(), "silence": SILENCE}
        try:
            child = await open_far(self.remote, self.options, header, connect_timeout=self.connect_timeout)
        except LinkFailed as exc:
            raise IsolationError(str(exc)) from None
        self._server = child
        assert child.stderr is not None
        self._tasks = [
            asyncio.ensure_future(drain_lines(child.stderr, self._heard)),
            asyncio.ensure_future(self._read(child)),
            asyncio.ensure_future(self._beat(child)),
        ]
        return child

    def _heard(self, line: str) -> None:
        if line.strip():
            self._last_line = line.strip()

    async def _beat(self, child: Any) -> None:
        from acp_tui.process.link import HEARTBEAT_EVERY

        while child.returncode is None:
            self.tell(op=BEAT)
            await child.wait_exit(HEARTBEAT_EVERY)

    async def _read(self, child: Any) -> None:
        """The server's answers, until its end; whoever still waits then hears why."""
        while line := await child.process.stdout.readline():
            with contextlib.suppress(ValueError, KeyError):
                answer = json.loads(line)
                waiter = self._waiting.get(answer["id"])
                if waiter is not None and not waiter.done():
                    waiter.set_result(answer)
        await child.wait_exit(1.0)
        why = f"the far side's worktrees are out of reach ({self.remote})"
        why += f": {self._last_line}" if self._last_line else ""
        for waiter in self._waiting.values():
            if not waiter.done():
                waiter.set_result({"error": why})

    async def aclose(self) -> list[str]:
        """The server's stdin ends: it removes the worktrees not kept, and ends."""
        child = self._server
        if child is None:
            return []
        from acp_tui.process.group import terminate_group

        with contextlib.suppress(Exception):
            child.process.stdin.close()
        await terminate_group(child, term_grace=0.5, exit_grace=30.0)
        await asyncio.gather(*self._tasks, return_exceptions=True)
        return []


def _far_modules() -> dict[str, str]:
    from acp_tui.process.link import shipped

    return shipped(__name__)


class FarWorktree(Worktree):
    """A worktree on the far side: its paths are the far side's; git runs there."""

    def __init__(self, isolation: FarIsolation, number: int, origin: Origin, path: Path) -> None:
        super().__init__(origin, path, asyncio.Lock())
        self._far = isolation
        self._number = number

    def keep(self, kept: bool = True) -> None:
        self.kept = kept
        self._far.tell(op="keep", worktree=self._number, kept=kept)

    def own_git_dir(self) -> Path:
        """The confined agent's git directory, made over there with the worktree."""
        return self.admin / AGENT_GIT_DIR

    async def record(
        self, limit: int = DIFF_LIMIT, *, timeout: float | None = None, max_file_bytes: int = 10_000_000
    ) -> Change:
        try:
            said = await self._far._ask(
                next(self._far._numbers), op="record", worktree=self._number, limit=limit,
                timeout=timeout, max_file_bytes=max_file_bytes,
            )  # fmt: skip
        except IsolationError as exc:
            self.change = Change(None, None, error=f"could not record the change: {exc}")
            return self.change
        stat = DiffStat(**said["stat"]) if said["stat"] else None
        self.change = Change(stat, said["diff"], said["truncated"], said["error"], tuple(said["skipped"]))
        return self.change

    async def remove(self) -> str | None:
        if self.kept or self.removed:
            return None
        self.removed = True
        try:
            left: str | None = await self._far._ask(
                next(self._far._numbers), op="remove", worktree=self._number
            )
        except IsolationError as exc:
            return f"{self.path}: {exc}"
        return left
