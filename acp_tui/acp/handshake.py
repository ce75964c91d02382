"""A child agent and its ACP connection: what a run converses over, and what a spare is.

`AcpHandshake` holds the child (started by a carrier), the transport over its stdio, the SDK's
connection, the session's setup, the protocol trace and the child's stderr tail. A cold run makes
one and takes it through `initialize` in its own task group. A spare is one made ahead (`prepare`):
in a task of its own it is spawned and taken through `initialize` (with `presession`, its session
too), then it waits until a run takes it (`take`: a new run is made over it) or it is disposed.
Until a run takes it, what its agent says is kept for that run (its stderr tail, its updates, see
`SessionUpdates`), and a permission request, which nobody can decide yet, is answered `cancelled`.

Its child's helpers (the stderr drain, the exit watch) live in the task group of whoever started
it (the cold run's, or the spare's own) until the child is ended, which `close` does once.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

import anyio
from anyio.abc import TaskGroup

from acp_tui.acp.sdk import import_acp
from acp_tui.acp.transport import MALFORMED, StdioTransport
from acp_tui.acp.updates import SessionUpdates
from acp_tui.core.elicitation import CANCEL, ElicitationAnswer, ElicitationAsk
from acp_tui.core.model import EndedBy, PermissionOptionInfo, SubagentRequest
from acp_tui.runs.base import RunBase
from acp_tui.runs.child import ChildProcess, ChildStartError, start_child
from acp_tui.runs.deadlines import Deadlines
from acp_tui.runs.output import StderrTail, TextGuard
from acp_tui.runs.trace import TraceWriter, open_trace

if TYPE_CHECKING:
    from acp.client.connection import ClientSideConnection

    from acp_tui.acp.session_setup import SessionSetup
    from acp_tui.settings.provider_config import AcpProviderConfig

CONNECTION_CLOSE_GRACE = 1.0  # after a broken pipe the SDK's close() can hang or re-raise

TakeRun = Callable[["AcpHandshake", SubagentRequest], RunBase]


class AcpHandshake:
    def __init__(
        self, config: AcpProviderConfig, cwd: str, *, presession: bool = False, on_take: TakeRun | None = None
    ) -> None:
        self.config = config
        self.cwd = cwd  # beyond a link, the far side's once it said (see `initialize`)
        self.asked_cwd = cwd
        self.presession = presession
        self.guard = TextGuard(config.secrets())
        self.tail = StderrTail(self.guard)
        self.updates = SessionUpdates(config.max_output_chars)
        self.child: ChildProcess | None = None
        self.setup: SessionSetup | None = None
        self.session_id: str | None = None  # opened ahead (a spare with `presession`)
        self.trace: TraceWriter | None = None
        self.ready = asyncio.Event()  # a spare: initialized (its session open), or failed
        self.failure: str | None = None  # why a spare cannot serve, in one line
        self.run: RunBase | None = None  # the run it serves, once one took it
        self._heard = False
        self._on_take = on_take
        self._transport: StdioTransport | None = None
        self._conn: ClientSideConnection | None = None
        self._closed = False
        self._released = asyncio.Event()  # a spare: taken and ended, or disposed
        self._root: asyncio.Task[None] | None = None
        self._opening: anyio.CancelScope | None = None

    @property
    def connection(self) -> ClientSideConnection:
        assert self._conn is not None, "connect() first"
        return self._conn

    # Starting ----------------------------------------------------------------------------------

    async def launch(self) -> None:
        """Spawn the child; ChildStartError when it cannot be."""
        self.child = await start_child(self.config, self.cwd, self.tail)

    def connect(self) -> None:
        """The transport, the SDK's connection and the session's setup, over the spawned child.
        The SDK is imported only now: the child boots while we pay for it."""
        assert self.child is not None
        self.trace = open_trace(self.config, self.child.leader.pid, self.tail.note)
        stdout, stdin = self.child.stdio
        self._transport = StdioTransport(
            stdout,
            stdin,
            max_line_bytes=self.config.max_line_bytes,
            on_note=self.tail.dropped,
            on_lost=self.updates.lose,
            on_frame=self._heard_from_agent,
            trace=self.trace,
            stdout_pipe=self.child.stdout_pipe,
        )
        import_acp()
        import acp

        from acp_tui.acp.client import RunClient
        from acp_tui.acp.session_setup import SessionSetup

        # The SDK still calls `elicitation/create` unstable (the protocol made it stable in 1.21): its
        # route answers method-not-found unless the connection says it takes the unstable protocol.
        self._conn = conn = acp.connect_to_agent(
            cast(Any, RunClient(self)), cast(Any, self._transport), use_unstable_protocol=True
        )
        self.setup = SessionSetup(
            conn,
            cwd=self.cwd,
            options=self.config.options,
            mcp_servers=self.config.mcp_servers,
            name=self.config.label,
        )
        self.updates.setup = self.setup

    def start_helpers(self, group: TaskGroup) -> None:
        """The child's helpers, in `group` (they end with the child)."""
        assert self.child is not None and self._transport is not None
        self.child.tend(group, self._transport.eof, self._gone)

    # The handshake's steps, each within the handshake timeout ---------------------------------

    async def initialize(self, deadlines: Deadlines) -> None:
        """The agent's start (beyond a link: the far side reached, the agent running there, in
        the cwd it says) and `initialize`, within the handshake timeout."""
        assert self.setup is not None and self.child is not None
        with deadlines.handshake_step():
            self.cwd = self.setup.cwd = await self.child.started_in(self.cwd)
            await self.setup.initialize()

    async def open_session(self, deadlines: Deadlines, *, continuing: str | None = None) -> str:
        """`session/new` (or the session `continuing` names, reached again) and the options."""
        assert self.setup is not None
        self.updates.replaying = continuing is not None  # load replays the history first
        with deadlines.handshake_step():
            session_id = await self.setup.open_session(self.updates.opened, continuing=continuing)
        return session_id

    def timed_out(self) -> str:
        step = self.setup.step if self.setup is not None else "initialize"
        return f"handshake timed out after {self.config.handshake_timeout:g} s (no answer to {step})"

    async def explain(self, exc: Exception) -> str | None:
        """A failure of the conversation in one line; None for one that is a bug of ours."""
        import acp
        from pydantic import ValidationError

        from acp_tui.acp.session_setup import SessionSetupError

        setup = self.setup
        step = setup.step if setup is not None else "initialize"
        if isinstance(exc, TimeoutError):
            unreached = self.child.unreached(self.config.handshake_timeout) if self.child else None
            return unreached or self.timed_out()
        if isinstance(exc, ChildStartError):  # the far side never ran it
            return str(exc)
        if isinstance(exc, SessionSetupError):
            return str(exc)
        if isinstance(exc, acp.RequestError):
            return (setup.failure(step, exc) if setup else None) or _rpc_error_text(step, exc)
        if isinstance(exc, ValidationError):
            return _invalid_response_text(step, exc)
        if isinstance(exc, ConnectionError | OSError | EOFError) and self.child is not None:
            return await self.child.why_broken(heard=self._heard)
        return None

    # The end -----------------------------------------------------------------------------------

    async def close(self, *, graceful: bool, grace: float, on_step: Callable[[str], None]) -> EndedBy | None:
        """End it all, once: `session/close` within `grace` (when the agent offers it and is still
        there), the child's processes, the connection, the trace. How the child ended."""
        if self._closed:
            return None
        self._closed = True
        ended: EndedBy | None = None
        try:
            child = self.child
            if self.setup is not None and child is not None and not child.gone:
                await self.setup.close(grace)
            if child is not None:
                ended = await child.end(graceful=graceful, term_grace=self.config.term_grace, on_step=on_step)
            if self._conn is not None:
                # After a broken pipe it re-raises what broke it, or hangs: bounded, ignored.
                with anyio.move_on_after(CONNECTION_CLOSE_GRACE), contextlib.suppress(Exception):
                    await self._conn.close()
        finally:
            if self.trace is not None:
                self.trace.close()
            self._released.set()
        if self._root is not None and self._root is not asyncio.current_task():
            await self._root_done()
        return ended

    # A spare -----------------------------------------------------------------------------------

    async def prepare(self) -> None:
        """Start as a spare, in a task of its own (it outlives this call, and nothing holds an
        `async with` for it); return once the child is spawned or has failed to spawn."""
        spawned = asyncio.Event()
        loop = asyncio.get_running_loop()
        self._root = loop.create_task(self._wait_as_spare(spawned), name="acp-tui spare")
        await spawned.wait()

    def attach(self, run: RunBase) -> None:
        """`run` converses over it from now on: what was kept for it is its own."""
        self.run = run
        self.updates.attach(run)
        if self._heard:
            run.heard_from_agent()

    def done(self) -> bool:
        """It can serve no run: it failed, ended, its child exited, or a run took it already."""
        child = self.child
        gone = child is not None and child.leader.process.returncode is not None
        return self.run is not None or self.failure is not None or self._released.is_set() or gone

    def take(self, request: SubagentRequest) -> RunBase:
        """A new run over this spare, started: its prompt (and, unless the spare opened its
        session already, the session it continues) are `request`'s; its clocks start now.
        ValueError if the spare cannot serve it (another cwd, taken, ended, or its session is not
        the one asked for)."""
        cwd = self.config.cwd_for(request.cwd)
        if self.done() or self._on_take is None:
            raise ValueError("not a spare that can be taken")
        if not self._works_in(cwd):
            raise ValueError(f"a spare working in {self.cwd} cannot run in {cwd}")
        if self.presession and request.session_id is not None:
            raise ValueError("a spare with a session of its own cannot continue another")
        return self._on_take(self, request)

    def _works_in(self, cwd: str) -> bool:
        if self.config.remote is not None:  # the far side's paths, as asked
            return cwd in (self.asked_cwd, self.cwd)
        return os.path.realpath(cwd) == os.path.realpath(self.cwd)

    async def dispose(self) -> None:
        """A spare no run took: ended, its processes gone. (A run's spare ends with the run.)"""
        if self.run is not None:
            return
        if self._opening is not None:
            self._opening.cancel()
        self._released.set()
        if self._root is not None:
            await self._root_done()

    async def _wait_as_spare(self, spawned: asyncio.Event) -> None:
        deadlines = Deadlines.of(self.config)
        try:
            await self.launch()
        except ChildStartError as exc:
            self.failure = str(exc)
            self.ready.set()
            return
        finally:
            spawned.set()
        try:
            async with anyio.create_task_group() as group:
                await asyncio.sleep(0)  # let spares started alongside spawn too, before the SDK import
                try:
                    self.connect()
                    self.start_helpers(group)
                    await self._open_ahead(deadlines)
                finally:
                    if self.failure is None and (self.setup is None or self.setup.protocol_version is None):
                        self.failure = "the spare could not start"
                    self.ready.set()  # a run waiting for it goes on, whatever happened
                try:
                    await self._released.wait()
                finally:
                    group.cancel_scope.cancel()  # its helpers end once the run that took it ended it
        finally:
            if self.run is None:  # disposed untaken, or cancelled: ended here, once
                with anyio.CancelScope(shield=True):
                    await self.close(graceful=False, grace=0.0, on_step=lambda step: None)

    async def _open_ahead(self, deadlines: Deadlines) -> None:
        """`initialize`, and the session with `presession`; a failure is kept for the run."""
        with anyio.CancelScope() as self._opening:
            try:
                await self.initialize(deadlines)
                if self.presession:
                    self.session_id = await self.open_session(deadlines)
            except Exception as exc:
                self.failure = await self.explain(exc) or f"internal error: {type(exc).__name__}: {exc}"
        self._opening = None
        if self._released.is_set() and self.failure is None:
            self.failure = "the spare was disposed"

    async def _root_done(self) -> None:
        assert self._root is not None
        await asyncio.wait({self._root})  # waits for it, never raises what it raised

    # What the agent says, for the run it serves (see client.RunSink) -------------------------

    def on_update(self, session_id: str, update: Any) -> None:
        self.updates.on_update(session_id, update)

    async def on_permission(
        self, tool_call: dict[str, Any], options: tuple[PermissionOptionInfo, ...]
    ) -> str | None:
        ask = self.updates.ask(tool_call, options, self.cwd)
        if self.run is None:  # no run yet, so no policy to decide: cancelled
            return None
        return await self.run.permissions.decide(ask)

    async def on_question(self, ask: ElicitationAsk) -> ElicitationAnswer:
        if self.run is None:  # no run yet, so nobody to ask: cancelled
            return CANCEL
        return await self.run.questions.ask(ask)

    def _heard_from_agent(self) -> None:
        self._heard = True
        if self.run is not None:
            self.run.heard_from_agent()

    def _gone(self) -> None:
        if self.run is not None:
            self.run.child_gone()


def _rpc_error_text(step: str, exc: Any) -> str:
    if getattr(exc, "data", None) == MALFORMED:
        return str(exc)  # the transport's own words: "the agent sent a malformed response to ..."
    code = getattr(exc, "code", None)
    data = getattr(exc, "data", None)
    details = data.get("details") or data.get("message") if isinstance(data, dict) else data
    return f"{step} failed: {exc} ({code})" + (f": {details}" if details else "")


def _invalid_response_text(step: str, exc: Any) -> str:
    for error in exc.errors():
        if "stopReason" in error.get("loc", ()) or "stop_reason" in error.get("loc", ()):
            return f"agent sent an unknown stop reason: {error.get('input')!r}"
    return f"invalid {step} response from the agent: {exc.error_count()} validation error(s)"
