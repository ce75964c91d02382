"""One Codex run: one `codex app-server` child, one thread, one turn, one result.

The lifecycle, the events, the stop and the cleanup are every run's (`acp_tui.runs.base.RunBase`,
through `acp_tui.runs.provider.ProviderRun`);
this is the app-server's conversation: `initialize` and `initialized`, `thread/start` in the run's
cwd (or `thread/resume` of the thread a follow-up continues), `turn/start` with the prompt as the
turn, which lasts until `turn/completed` (`turn/interrupt` when the run is told to stop), and the
turn's status mapped: completed -> completed, interrupted -> aborted, failed -> error with Codex's
message. The app-server exits when its stdin closes.

A preset's `options` set what the thread runs with: `model`, `sandbox` and `approvalPolicy` go to
`thread/start` (or `thread/resume`), `effort` to `turn/start`; Codex checks their values. With a
`trace_dir`, the app-server's JSON-RPC lines are traced both ways.
"""

from __future__ import annotations

from functools import cached_property
from importlib import metadata
from typing import Any

from anyio.abc import TaskGroup

from acp_tui.acp.transport import StdioTransport
from acp_tui.codex.peer import Peer, RpcError
from acp_tui.codex.thread import CodexThread, MalformedAnswer
from acp_tui.core.model import SessionStarted
from acp_tui.runs.child import start_child
from acp_tui.runs.phase import Phase
from acp_tui.runs.provider import ProviderRun
from acp_tui.runs.talk import Outcome


def _version() -> str:
    try:
        return metadata.version("acp-tui")
    except metadata.PackageNotFoundError:  # a source tree on PYTHONPATH, not installed
        return "unknown"


CLIENT_INFO = {"name": "acp-tui", "title": "acp-tui", "version": _version()}
THREAD_OPTIONS = ("model", "sandbox", "approvalPolicy")
TURN_OPTIONS = ("effort",)


class CodexSubagentRun(ProviderRun):
    ephemeral = False  # a thread kept in memory only: nothing of it is written to Codex's home

    _peer: Peer | None = None

    @cached_property
    def thread(self) -> CodexThread:
        return CodexThread(self)

    # The conversation --------------------------------------------------------------------------

    def refusal(self) -> str | None:
        return self.untaken("codex", (*THREAD_OPTIONS, *TURN_OPTIONS), "its own config.toml")

    async def launch(self) -> None:
        self.child = await start_child(self.config, self.cwd, self.stderr)

    async def converse(self) -> Outcome:
        transport = StdioTransport.of_run(self)
        self._peer = peer = Peer(transport, self.thread.on_notification, self.thread.on_request)
        group = self.task_group
        assert group is not None
        group.start_soon(self._read, peer, group)
        self.advance(Phase.INITIALIZING)
        return await self._thread_and_turn(peer)

    async def _thread_and_turn(self, peer: Peer) -> Outcome:
        with self.deadlines.handshake_step():
            await peer.request("initialize", {"clientInfo": CLIENT_INFO})
        await peer.notify("initialized")
        continuing = self.request.session_id
        self.step = "thread/resume" if continuing else "thread/start"
        params: dict[str, Any] = {"cwd": self.cwd, **self._options(THREAD_OPTIONS)}
        if self.ephemeral:
            params["ephemeral"] = True
        if continuing:
            params["threadId"] = continuing
        with self.deadlines.handshake_step():
            self.thread.opened(self.step, await peer.request(self.step, params))
        guard = self.guard
        self.emit(SessionStarted(guard.json(self.thread.agent), guard.json(self.thread.options)))
        self.advance(Phase.PROMPTING)
        return await self.prompt(peer)

    async def prompt(self, peer: Peer) -> Outcome:
        """The turn (`turn/interrupt` when told to stop), to how it ended."""
        return await self.talk.turn_outcome(self._take_turn, self._interrupt, self.thread.outcome)

    async def _take_turn(self) -> None:
        """`turn/start`, then the turn, to its `turn/completed`."""
        assert self._peer is not None and self.thread.session_id is not None
        self.step = "turn/start"
        params: dict[str, Any] = {
            "threadId": self.thread.session_id,
            "input": [{"type": "text", "text": self.request.prompt}],
            **self._options(TURN_OPTIONS),
        }
        if self.request.output_schema is not None:
            params["outputSchema"] = self.request.output_schema
        self.thread.started(await self._peer.request("turn/start", params))
        self.step = "turn/completed"
        await self._until_over()

    async def _read(self, peer: Peer, group: TaskGroup) -> None:
        try:
            await peer.serve(group)
        finally:
            self.thread.turn_over.set()  # nothing comes any more: a turn still waiting is over

    async def _until_over(self) -> None:
        """Until `turn/completed`; ConnectionError when the app-server is gone first."""
        await self.thread.turn_over.wait()
        if self.thread.ended is None:
            raise ConnectionError("the app-server is gone")

    async def _interrupt(self) -> None:
        assert self._peer is not None
        await self.thread.turn_known.wait()
        await self._peer.request(
            "turn/interrupt", {"threadId": self.thread.session_id, "turnId": self.thread.turn_id}
        )

    def _options(self, names: tuple[str, ...]) -> dict[str, str]:
        return {name: value for name, value in self.config.options.items() if name in names}

    async def explain(self, exc: Exception) -> str | None:
        if isinstance(exc, RpcError | MalformedAnswer):
            return str(exc)
        return await super().explain(exc)

    def result_fields(self) -> dict[str, Any]:
        return self.thread.result_fields()
