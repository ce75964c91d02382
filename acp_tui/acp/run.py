"""One run: one child process, one ACP session, one prompt, one result.

The lifecycle is a single task (`_lifecycle`): spawn, handshake, prompt, then end the child's process
group and resolve the result. `dispose()` and the abort event only *ask* it to stop (`_interrupt`) and
wait for it, so every way a run can end goes through the same cleanup, exactly once.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import os
import signal
import time
from collections import Counter, deque
from typing import TYPE_CHECKING, Any, cast

from acp_tui.acp.sdk import import_acp
from acp_tui.acp.stop_reasons import map_stop_reason
from acp_tui.acp.tool_calls import ToolCalls
from acp_tui.acp.trace import TraceWriter
from acp_tui.acp.transport import MALFORMED, StdioTransport
from acp_tui.core.events import EventStream, Preempted, unless_set
from acp_tui.core.masking import SecretMask
from acp_tui.core.model import (
    EndedBy,
    Finished,
    HiddenUpdate,
    NetworkRefusal,
    NetworkRefused,
    OutputDelta,
    PermissionDecided,
    PermissionOptionInfo,
    PermissionRecord,
    RunEvent,
    RunStatus,
    SessionStarted,
    StatusChanged,
    StderrLine,
    Stopping,
    StopStep,
    SubagentRequest,
    SubagentResult,
    SubagentStopReason,
    ToolCallChanged,
    Usage,
    UsageReported,
)
from acp_tui.core.text import one_line, without_surrogates
from acp_tui.policy.ask import PermissionAsk, PermissionPolicy, asking_run
from acp_tui.process.environment import child_environment, protect_own_environment
from acp_tui.process.group import Child, close_pipes, drain_lines, spawn, spawn_error_message, terminate_group
from acp_tui.process.network import SandboxNetwork
from acp_tui.process.sandbox import Confinement, SandboxError, confine, failure_message

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Awaitable

    from acp.client.connection import ClientSideConnection

    from acp_tui.acp.session_setup import SessionSetup
    from acp_tui.settings.provider_config import AcpProviderConfig

STDERR_TAIL_LINES = 200
STDERR_LINE_CHARS = 2000  # a longer stderr line is cut (after masking) to this
NOTE_SAMPLE_CHARS = 60  # how much of a dropped line our note quotes
ERROR_CHARS = 300  # an error message is one line of at most this
PIPE_CLOSE_GRACE = 1.0  # after the group is gone, how long a stray holder may keep our pipes open
MAX_EARLY_UPDATES = 10_000  # early updates kept for replay (their text also counts against the cap)
MAX_REFUSALS = 1000  # refused connections kept (and told); an agent trying more is not news
HOST_CHARS = 300  # a refused host is kept to this (a DNS name has at most 253)

log = logging.getLogger(__name__)

Outcome = tuple[SubagentStopReason, str | None]


class _Interrupted(Exception):
    """The run was asked to stop (dispose, abort) or its child is gone."""


class AcpSubagentRun:
    def __init__(
        self,
        config: AcpProviderConfig,
        request: SubagentRequest | None,
        policy: PermissionPolicy,
        *,
        abort: Any = None,
        cwd: str | None = None,
        presession: bool = False,
    ) -> None:
        """`request` None makes a spare: started and initialized in `cwd`, it waits for a run to
        `take` it (a warm start); with `presession` it opens its session and sets its options
        before it waits."""
        self.config = config
        self._spare = request is None
        self._presession = presession and request is None
        self._taken = asyncio.Event()
        self.ready = asyncio.Event()  # a spare: initialized (and its session open), waiting to be taken
        self.request = request or SubagentRequest(prompt="", cwd=cwd)
        self.cwd = self.request.cwd or config.cwd or os.getcwd()
        self.warm = False  # a spare that a run took
        self.status: RunStatus = "spawning"
        self._policy = policy
        self._abort = abort
        self._secrets = config.secrets()
        self._mask = SecretMask(self._secrets)
        self._stream_mask = SecretMask(self._secrets)  # holds back a tail between chunks
        self._events: EventStream[RunEvent] = EventStream()
        self._started = time.monotonic()
        self._last_frame = self._started
        self._heard = False  # any frame from the agent yet
        self._output: list[str] = []
        self._output_chars = 0
        self._truncated = False
        self._hidden: Counter[str] = Counter()
        self._tool_kinds: Counter[str] = Counter()
        self._tool_calls = ToolCalls()
        self._early_tool_calls: list[tuple[str, str, Any]] = []  # (session id, kind, the update)
        self._permissions: list[PermissionRecord] = []
        self._stderr: deque[str] = deque(maxlen=STDERR_TAIL_LINES)
        self._usage: Usage | None = None
        self._ended_by: EndedBy | None = None
        self._child: Child | None = None
        self._confinement: Confinement | None = None  # a sandbox's, held until its processes are gone
        self._network: SandboxNetwork | None = None  # a confined run's, until its end
        self._refused: list[NetworkRefusal] = []
        self._conn: ClientSideConnection | None = None
        self._transport: StdioTransport | None = None
        self._trace: TraceWriter | None = None
        self._session_id: str | None = None
        self._setup: SessionSetup | None = None
        self._grace_deadline: float | None = None  # when a cancel's grace runs out
        # Updates that arrive before `session/new` answers: text (charged to the output cap as it
        # comes, so an early flood cannot grow memory) and hidden kinds, replayed in order.
        self._early_updates: list[tuple[str, str, str]] = []  # (session id, "text" | "hidden", value)
        self._early_chars = 0
        self._cancel_requested = False
        self._cancel_reason: str | None = None
        self._child_gone = False
        self._turn_ended = False  # the agent ended its turn itself (a cancel honoured counts)
        self._interrupt = asyncio.Event()
        self._replaying = False  # `session/load` is replaying the session's history
        self._deciding = 0  # permission requests being decided (a person may be answering)
        self._clock_changed = asyncio.Event()  # a decision started or ended: the idle clock moves
        self._spawned = asyncio.Event()
        self._helpers: list[asyncio.Task[Any]] = []
        self._pipes: list[asyncio.Task[Any]] = []  # the stderr drain
        self._main: asyncio.Task[None] | None = None
        self._result: asyncio.Future[SubagentResult] = asyncio.get_running_loop().create_future()

    # The public face -------------------------------------------------------------------------

    @property
    def trace_path(self) -> str | None:
        return str(self._trace.path) if self._trace else None

    @property
    def sandboxed(self) -> bool:
        """Confined by bubblewrap (the child we hold is bwrap)."""
        return self.config.sandbox == "workspace"

    @property
    def pid(self) -> int | None:
        """The child's pid, which is also its process group id."""
        return self._child.pid if self._child else None

    def events(self) -> AsyncIterator[RunEvent]:
        return aiter(self._events)

    async def result(self) -> SubagentResult:
        return await asyncio.shield(self._result)

    def done(self) -> bool:
        return self._result.done()

    async def dispose(self, reason: str | None = None) -> None:
        """Stop the run however far it got, and return once its processes are gone."""
        self._request_cancel(reason)
        if self._main is None:
            self._finish((SubagentStopReason.ABORTED, reason))
        else:
            await asyncio.shield(self._main)

    def take(self, request: SubagentRequest) -> None:
        """A run takes this spare: its prompt (and, unless the spare opened its session already,
        the session it continues) are `request`'s; its clocks start now. ValueError if the spare
        cannot serve it (another cwd, taken, or its session is not the one asked for)."""
        cwd = request.cwd or self.config.cwd or os.getcwd()
        if not self._spare or self._taken.is_set() or self.done() or self._interrupt.is_set():
            raise ValueError("not a spare that can be taken")
        if os.path.realpath(cwd) != os.path.realpath(self.cwd):
            raise ValueError(f"a spare working in {self.cwd} cannot run in {cwd}")
        if self._presession and request.session_id is not None:
            raise ValueError("a spare with a session of its own cannot continue another")
        self.request = dataclasses.replace(request, cwd=self.cwd)
        self.warm = True
        self._started = self._last_frame = time.monotonic()
        self._watch_clocks()
        self._taken.set()

    def _watch_clocks(self) -> None:
        if self.config.run_timeout is not None or self.config.idle_timeout is not None:
            self._helper(self._watch_time())

    async def start(self) -> None:
        """Spawn the child; return once it runs or has failed to start."""
        if self._abort is not None and self._abort.is_set():
            self._cancel_requested = True  # pre-abort: nothing is spawned, no prompt is sent
        self._main = asyncio.create_task(self._lifecycle(), name="acp-tui run")
        await self._spawned.wait()

    # The lifecycle -----------------------------------------------------------------------------

    async def _lifecycle(self) -> None:
        outcome: Outcome = (SubagentStopReason.ABORTED, self._cancel_reason)
        try:
            if not self._cancel_requested:
                outcome = await self._spawn_and_converse()
        except Exception as exc:  # a bug of ours still ends the run cleanly, and says so
            log.exception("run failed")
            outcome = (SubagentStopReason.ERROR, f"internal error: {type(exc).__name__}: {exc}")
        finally:
            self._spawned.set()
            try:
                await self._cleanup()
            except Exception:  # whatever fails here, the result still comes
                log.exception("cleanup of a run failed")
            finally:
                self._finish(outcome)

    async def _spawn_and_converse(self) -> Outcome:
        self._set_status("spawning")
        protect_own_environment()
        env = child_environment(self.config.env)
        try:
            argv = [self.config.command, *self.config.args]
            pass_fds: tuple[int, ...] = ()
            preexec = None
            if self.sandboxed:
                self._network = network = SandboxNetwork(
                    self.config.sandbox_network, on_refused=self._network_refused
                )
                env = network.environ(env)
                pass_fds, preexec = network.pass_fds, network.preexec
                self._confinement = confine(
                    self.config.command,
                    self.config.args,
                    cwd=self.cwd,
                    env=env,
                    writable=self.config.sandbox_writable,
                    readable=self.config.sandbox_readable,
                    hidden=self.config.sandbox_hidden,
                    sockets=self.config.sandbox_sockets,
                    git_dirs=self.config.sandbox_git_dirs,
                    network=network.way,
                )
                argv = self._confinement.argv
            self._child = await spawn(
                argv[0], argv[1:], cwd=self.cwd, env=env, pass_fds=pass_fds, preexec=preexec
            )
            if self._network is not None:
                self._network.spawned()
        except SandboxError as exc:  # never unconfined instead: nothing runs
            return SubagentStopReason.ERROR, str(exc)
        except OSError as exc:
            return SubagentStopReason.ERROR, spawn_error_message(exc, self.config.command, self.cwd)
        finally:
            self._spawned.set()
        if self._abort is not None:
            self._helper(self._watch_abort())
        if not self._spare:
            self._watch_clocks()
        await asyncio.sleep(0)  # let runs started alongside spawn too, before the SDK import below
        return await self._converse(self._child)

    async def _converse(self, child: Child) -> Outcome:
        proc = child.process
        assert proc.stdin and proc.stdout and proc.stderr
        if self.config.trace_dir:
            label = self.config.name or os.path.basename(self.config.command)
            with contextlib.suppress(OSError):  # no trace is no reason to fail the run
                # Frames are traced as they came, so a value split across two of them is masked
                # by its fragments.
                trace_mask = SecretMask(self._secrets, fragments=True)
                self._trace = TraceWriter.for_run(
                    self.config.trace_dir, label, child.pid, trace_mask, self._note
                )
        self._transport = transport = StdioTransport(
            proc.stdout,
            proc.stdin,
            max_line_bytes=self.config.max_line_bytes,
            on_note=self._on_dropped,
            on_lost=self._lost_a_message,
            on_frame=self._heard_from_agent,
            trace=self._trace,
        )
        self._pipes = [self._helper(drain_lines(proc.stderr, self._on_stderr_line))]
        self._helper(self._watch_exit(child, transport))

        # Imported only now, so the child boots while we pay for the SDK.
        import_acp()
        import acp
        from pydantic import ValidationError

        from acp_tui.acp.client import RunClient
        from acp_tui.acp.session_setup import SessionSetup, SessionSetupError

        self._conn = conn = acp.connect_to_agent(cast(Any, RunClient(self)), cast(Any, transport))
        self._setup = setup = SessionSetup(
            conn,
            cwd=self.cwd,
            options=self.config.options,
            mcp_servers=self.config.mcp_servers,
            name=self.config.name or os.path.basename(self.config.command),
        )
        try:
            self._set_status("initializing")
            try:
                session_id = await self._handshake(setup)
            except TimeoutError:
                timeout = self.config.handshake_timeout
                return self._failed(f"handshake timed out after {timeout:g} s (no answer to {setup.step})")
            self._events.push(
                SessionStarted(
                    self._clean_json(setup.agent),
                    setup.current_options,
                    self._clean_json(setup.auth_methods),
                    setup.offered,
                )
            )
            self._set_status("prompting")
            stop_reason = await self._prompt(conn, session_id)
            if not self._cancel_requested:
                await setup.close(self.config.cancel_grace)
        except _Interrupted:
            if self._cancel_requested:
                return SubagentStopReason.ABORTED, self._cancel_reason
            return self._failed(await self._exit_message(child))
        except SessionSetupError as exc:
            return self._failed(str(exc))
        except acp.RequestError as exc:
            return self._failed(setup.failure(setup.step, exc) or _rpc_error_text(setup.step, exc))
        except ValidationError as exc:
            return self._failed(_invalid_response_text(setup.step, exc))
        except (ConnectionError, OSError, EOFError):
            return self._failed(await self._exit_message(child))
        if self._cancel_requested:  # some agents answer end_turn to a cancel: still aborted
            return SubagentStopReason.ABORTED, self._cancel_reason
        mapped = map_stop_reason(stop_reason)
        if mapped is SubagentStopReason.ERROR:
            return mapped, f"agent stopped with {stop_reason!r}"
        return mapped, None

    async def _handshake(self, setup: SessionSetup) -> str:
        """initialize, then the session: each step within the handshake timeout. A spare waits in
        between (not counted) until a run takes it; one made with `presession` opens its session
        before it waits."""
        timeout = self.config.handshake_timeout
        async with asyncio.timeout(timeout):
            await self._unless_interrupted(setup.initialize())
            if self._spare and self._presession:
                session_id: str = await self._unless_interrupted(setup.open_session(self._session_opened))
        if self._spare:
            self.ready.set()
            await self._unless_interrupted(self._taken.wait())
            if self._presession:
                return session_id
        self._replaying = self.request.session_id is not None  # load replays the history first
        async with asyncio.timeout(timeout):
            opened: str = await self._unless_interrupted(
                setup.open_session(self._session_opened, continuing=self.request.session_id)
            )
        return opened

    def _session_opened(self, session_id: str) -> None:
        """`session/new` answered: the updates that came before it are this session's now."""
        self._session_id = session_id
        self._replay_early_updates()

    async def _prompt(self, conn: ClientSideConnection, session_id: str) -> str:
        import acp

        if self._interrupt.is_set():  # the pre-session race: never send a prompt once told to stop
            raise _Interrupted
        self._replaying = False  # what comes from now on answers this prompt
        prompt = asyncio.create_task(
            conn.prompt(session_id=session_id, prompt=[acp.text_block(self.request.prompt)])
        )
        interrupt = asyncio.create_task(self._interrupt.wait())
        await asyncio.wait({prompt, interrupt}, return_when=asyncio.FIRST_COMPLETED)
        interrupt.cancel()
        if not prompt.done() and self._cancel_requested:
            # Ask the agent to end its turn and give it cancel_grace to do so. After a broken pipe
            # even this notification can hang, so it shares the same bound.
            grace = self.config.cancel_grace
            deadline = self._grace_deadline = asyncio.get_running_loop().time() + grace
            self._stop_step("cancel-sent")
            with contextlib.suppress(Exception):
                await asyncio.wait_for(conn.cancel(session_id=session_id), grace)
            remaining = max(0.0, deadline - asyncio.get_running_loop().time())
            await asyncio.wait({prompt}, timeout=remaining)
        if not prompt.done():
            prompt.cancel()
            with contextlib.suppress(BaseException):
                await prompt
            raise _Interrupted
        stop_reason: str = (await prompt).stop_reason
        self._turn_ended = True
        return stop_reason

    async def _unless_interrupted(self, awaitable: Awaitable[Any]) -> Any:
        try:
            return await unless_set(self._interrupt, awaitable)
        except Preempted:
            raise _Interrupted from None

    async def _cleanup(self) -> None:
        """End every process of the run, let the pipes run dry, close them and the connection, stop
        the helpers, close the trace. Each step is bounded, and none can keep the others from
        running."""
        self._interrupt.set()  # questions still open (a policy asking a human) are answered now
        child = self._child
        if self._setup is not None and not self._child_gone:
            # session/close within what is left of the cancel's grace: never later than the kill.
            grace = self.config.cancel_grace
            if self._grace_deadline is not None:
                grace = self._grace_deadline - asyncio.get_running_loop().time()
            await self._setup.close(grace)
        if child is not None:
            try:
                if child.process.stdin is not None:
                    child.process.stdin.close()
                # The agent may exit by itself on stdin's end, unless it was cancelled and did not
                # end its turn within the grace: then it is signalled at once.
                graceful = (self._turn_ended or not self._cancel_requested) and not self._child_gone
                # After a turn the agent ended, a SIGTERM to a process that stays up on stdin's end
                # is housekeeping, not a stop: no `Stopping` step (the result still says `ended_by`).
                done = self._turn_ended and not self._cancel_requested
                self._ended_by = cast(
                    "EndedBy",
                    await terminate_group(
                        child,
                        term_grace=self.config.term_grace,
                        exit_grace=self.config.term_grace if graceful else 0.0,
                        on_step=(lambda step: None) if done else self._stop_step,
                    ),
                )
                waiting = [*self._pipes]
                if self._transport is not None:
                    waiting.append(self._helper(self._transport.eof.wait()))
                await asyncio.wait(waiting, timeout=PIPE_CLOSE_GRACE)
            finally:
                close_pipes(child)  # whatever still holds them, we keep no descriptor of this run
        if self._conn is not None:
            # After a broken pipe, close() can hang or re-raise: bound it, ignore what it says.
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._conn.close(), 1.0)
        for task in self._helpers:
            task.cancel()
        for task in self._helpers:
            with contextlib.suppress(BaseException):
                await task
        if self._trace is not None:
            self._trace.close()
        if self._confinement is not None:  # its processes are gone: what it held goes too
            self._confinement.close()
        if self._network is not None:  # the agent is gone: so is its proxy
            await self._network.aclose()

    def _finish(self, outcome: Outcome) -> None:
        if self._result.done():
            return
        stop_reason, error = outcome
        self._keep_output(self._stream_mask.flush())
        result = SubagentResult(
            stop_reason=stop_reason,
            output="".join(self._output),
            error=one_line(self._clean(error), ERROR_CHARS, shown=False) if error else error,
            exit_code=self._child.returncode if self._child else None,
            hidden=dict(self._hidden),
            permissions=list(self._permissions),
            duration_s=time.monotonic() - self._started,
            stderr_tail=list(self._stderr),
            truncated=self._truncated,
            ended_by=self._ended_by,
            agent=self._clean_json(self._setup.agent) if self._setup else None,
            options=self._setup.current_options if self._setup else {},
            usage=self._usage,
            auth_methods=self._clean_json(self._setup.auth_methods) if self._setup else (),
            tool_kinds=dict(self._tool_kinds),
            tool_calls=tuple(self._clean_json(call) for call in self._tool_calls.all()),
            session_id=self._session_id,
            continuation=self._setup.continuation if self._setup else None,
            network_refused=tuple(self._refused),
        )
        self._set_status("finished")
        self._events.push(Finished(result))
        self._result.set_result(result)

    def _failed(self, message: str) -> Outcome:
        """A failure; once cancellation was asked for, whatever went wrong is an abort."""
        if self._cancel_requested:
            return SubagentStopReason.ABORTED, self._cancel_reason
        return SubagentStopReason.ERROR, message

    def _request_cancel(self, reason: str | None) -> None:
        if self._result.done() or self._cancel_requested:
            return
        self._cancel_requested = True
        self._cancel_reason = reason
        self._interrupt.set()
        if self._main is not None:
            self._set_status("cancelling")

    # Helpers around the child ------------------------------------------------------------------

    def _helper(self, coro: Awaitable[Any]) -> asyncio.Task[Any]:
        task = asyncio.ensure_future(coro)
        self._helpers.append(task)
        return task

    async def _watch_abort(self) -> None:
        await self._abort.wait()
        self._request_cancel(None)

    async def _watch_time(self) -> None:
        """The preset's run and idle timeouts: either disposes the run, saying which. A run waiting
        for an answer to a permission request is not silent: the person is (the idle clock starts
        again when they answer)."""
        run_timeout, idle_timeout = self.config.run_timeout, self.config.idle_timeout
        while True:
            now = time.monotonic()
            deadlines = []
            if run_timeout is not None:
                deadlines.append((self._started + run_timeout, f"timed out after {run_timeout:g} s"))
            if idle_timeout is not None and not self._deciding:
                deadlines.append((self._last_frame + idle_timeout, f"silent for {idle_timeout:g} s"))
            when, reason = min(deadlines, default=(None, ""))
            if when is not None and when <= now:
                self._request_cancel(reason)  # the lifecycle does the rest, as for dispose()
                return
            self._clock_changed.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._clock_changed.wait(), None if when is None else when - now)

    async def _watch_exit(self, child: Child, transport: StdioTransport) -> None:
        """A dead child whose pipes stay open (a wrapper's grandchild holds them) ends the run."""
        await child.wait_exit()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(transport.eof.wait(), PIPE_CLOSE_GRACE)
        if not transport.eof.is_set():
            self._child_gone = True
            self._interrupt.set()

    async def _exit_message(self, child: Child) -> str:
        """Why the conversation broke, in one line: the exit code and the last stderr line."""
        code = await child.wait_exit(PIPE_CLOSE_GRACE)
        if code is None:
            return "the agent closed the connection"
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(self._pipes[0]), 0.2)
        if self.sandboxed and code == 1 and not self._heard and (failed := failure_message(self._stderr)):
            return failed  # bwrap could not set the sandbox up: the agent never ran
        last = next((line for line in reversed(self._stderr) if line.strip()), "")
        if code < 0:
            with contextlib.suppress(ValueError):
                how = f"was killed by {signal.Signals(-code).name}"
        else:
            how = f"exited with code {code}"
        return f"agent {how}" + (f": {last.strip()}" if last else "")

    # Called by the client (see client.RunSink) ---------------------------------------------------

    def on_update(self, session_id: str, update: Any) -> None:
        if self._result.done():
            return
        kind = str(getattr(update, "session_update", "unknown"))
        text = None
        if kind == "agent_message_chunk":
            content_type = getattr(update.content, "type", "unknown")
            if content_type == "text":
                text = update.content.text
            else:
                kind = f"agent_message_chunk:{content_type}"  # counted, never shown
        if self._session_id is None:
            # Some agents stream before their `session/new` answer arrives: keep, replay later.
            self._keep_early(session_id, kind, text, update)
            return
        if session_id != self._session_id:
            return
        if self._replaying:  # the history `session/load` replays: consumed, never the answer
            self._count_hidden("history")
            return
        if text is not None:
            self._append_output(text)
            return
        if kind in ("tool_call", "tool_call_update"):
            self._follow_tool_call(kind, update.model_dump(mode="json", by_alias=True, exclude_unset=True))
        usage = self._setup.on_update(update) if self._setup is not None else None
        if usage is not None:  # still counted below, as a hidden kind
            self._usage = usage
            self._events.push(UsageReported(usage))
        self._count_hidden(kind)

    def _keep_early(self, session_id: str, kind: str, text: str | None, update: Any) -> None:
        if len(self._early_updates) >= MAX_EARLY_UPDATES:
            self._truncated = self._truncated or text is not None
            return
        if text is None:
            self._early_updates.append((session_id, "hidden", kind))
            if kind in ("tool_call", "tool_call_update"):
                self._early_tool_calls.append((session_id, kind, update))
            return
        room = self.config.max_output_chars - self._early_chars
        if len(text) > room:
            text, self._truncated = text[: max(0, room)], True
        if text:
            self._early_chars += len(text)
            self._early_updates.append((session_id, "text", text))

    def _replay_early_updates(self) -> None:
        calls, self._early_tool_calls = self._early_tool_calls, []
        for session_id, kind, update in calls:
            if session_id == self._session_id:
                self._follow_tool_call(
                    kind, update.model_dump(mode="json", by_alias=True, exclude_unset=True), count=False
                )
        early, self._early_updates = self._early_updates, []
        for session_id, what, value in early:
            if session_id != self._session_id:
                continue
            if what == "text":
                self._append_output(value)
            else:
                self._count_hidden(value)

    def _follow_tool_call(self, kind: str, fields: dict[str, Any], *, count: bool = True) -> None:
        """A tool call's card: merged into the run's tool-call state, hidden from the answer."""
        if kind == "tool_call":
            self._tool_kinds[str(fields.get("kind") or "other")] += 1
        self._tool_calls.merge(fields)
        self._tool_call_changed(fields.get("toolCallId"))

    def _tool_call_changed(self, call_id: Any) -> None:
        call = self._tool_calls.get(str(call_id))
        if call is not None:
            self._events.push(ToolCallChanged(self._clean_json(call)))

    def _count_hidden(self, kind: str) -> None:
        self._hidden[kind] += 1
        self._events.push(HiddenUpdate(kind))

    async def on_permission(
        self, tool_call: dict[str, Any], options: tuple[PermissionOptionInfo, ...]
    ) -> str | None:
        # What the policy decides on: the request's tool call merged into what was announced.
        ask = self._tool_calls.ask(tool_call, options, self.cwd)
        self._tool_call_changed(tool_call.get("toolCallId"))
        ask = PermissionAsk(
            title=self._clean(ask.title),
            kind=ask.kind,
            options=tuple(
                # The id goes back to the agent as it came: only the name is for people.
                PermissionOptionInfo(o.option_id, self._clean(o.name), o.kind)
                for o in ask.options
            ),
            content=self._clean(ask.content),
            raw_input=self._clean_json(ask.raw_input),
            locations=tuple(self._clean(path) for path in ask.locations),
            cwd=self.cwd,
        )
        asked = time.monotonic()
        option_id: str | None = None
        rule = "cancelled"  # what decided, unless the policy gets to
        self._deciding += 1
        self._clock_changed.set()
        try:
            if not self._interrupt.is_set():
                option_id, rule = await self._decide(ask)
        finally:
            self._deciding -= 1
            self._last_frame = time.monotonic()  # silence is counted again from the answer
            self._clock_changed.set()
            # Recorded even when the question dies with the run: the log shows it was answered
            # `cancelled`, and a modal showing it has been closed by the cancellation.
            kinds: dict[str, str] = {}
            for option in ask.options:  # an id offered twice reads as its first offer
                kinds.setdefault(option.option_id, option.kind)
            if option_id not in kinds:
                option_id = None
            record = PermissionRecord(
                title=ask.title,
                kind=ask.kind,
                options=ask.options,
                decision=kinds[option_id] if option_id is not None else "cancelled",
                option_id=option_id,
                rule=rule,
                at=time.monotonic() - self._started,
                content=ask.content,
                raw_input=ask.raw_input,
                locations=ask.locations,
                waited_s=time.monotonic() - asked,
            )
            if not self._result.done():
                self._permissions.append(record)
                self._events.push(PermissionDecided(record))
        return option_id

    async def _decide(self, ask: PermissionAsk) -> tuple[str | None, str]:
        """The policy's choice, unless the run stops first (then the question is cancelled)."""
        token = asking_run.set(self)  # the policy's task is made in this context: it sees whose request
        try:
            choice = await unless_set(self._interrupt, self._policy.decide(ask))
        except Preempted:
            return None, "cancelled"
        except Exception:
            return None, f"{self._policy.name} failed"
        finally:
            asking_run.reset(token)
        return choice.option_id, choice.rule

    # Text that leaves the core: masked (before any cut) and encodable -------------------------

    def _clean(self, text: str) -> str:
        """The one choke point for strings an agent or its process produced: secrets masked, lone
        surrogates (which no file, pipe or screen can encode) replaced. Cut only after this."""
        return self._mask(without_surrogates(text))

    def _clean_json(self, value: Any) -> Any:
        """`_clean` on every string of a JSON-shaped value (keys included), or of a dataclass."""
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            cleaned = {f.name: self._clean_json(getattr(value, f.name)) for f in dataclasses.fields(value)}
            return dataclasses.replace(value, **cleaned)
        if isinstance(value, str):
            return self._clean(value)
        if isinstance(value, dict):
            return {self._clean(str(k)): self._clean_json(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return type(value)(self._clean_json(v) for v in value)
        return value

    # State and events ------------------------------------------------------------------------------

    def _append_output(self, text: str) -> None:
        self._keep_output(self._stream_mask.feed(without_surrogates(text)))

    def _keep_output(self, text: str) -> None:
        if not text:
            return
        room = self.config.max_output_chars - self._output_chars
        if room <= 0:
            self._truncated = True
            return
        if len(text) > room:
            text, self._truncated = text[:room], True
        self._output.append(text)
        self._output_chars += len(text)
        self._events.push(OutputDelta(text))

    def _set_status(self, status: RunStatus) -> None:
        if self.status == "cancelling" and status not in ("finished", "cancelling"):
            return  # a phase reached while stopping is not news
        self.status = status
        self._events.push(StatusChanged(status))

    def _stop_step(self, step: str) -> None:
        if not self._result.done():
            self._events.push(Stopping(cast(StopStep, step)))

    def _heard_from_agent(self) -> None:
        self._last_frame = time.monotonic()
        self._heard = True

    def _on_stderr_line(self, line: str) -> None:
        line = self._clean(line)[:STDERR_LINE_CHARS]
        self._stderr.append(line)
        self._events.push(StderrLine(line))

    def _network_refused(self, host: str, port: int) -> None:
        """The sandbox's proxy refused a connection: what the agent tried, said and kept."""
        if self._result.done() or len(self._refused) >= MAX_REFUSALS:
            return
        host = one_line(self._clean(host), HOST_CHARS, shown=False)
        refusal = NetworkRefusal(host, port, time.monotonic() - self._started)
        self._refused.append(refusal)
        self._events.push(NetworkRefused(refusal))

    def _on_dropped(self, what: str, line: bytes | bytearray) -> None:
        """A frame the transport dropped: said with a masked sample of it (masked, then cut)."""
        sample = self._clean(bytes(line[:4096]).decode("utf-8", "replace"))[:NOTE_SAMPLE_CHARS]
        self._note(f"{what}: {sample!r}" if sample else what)

    def _lost_a_message(self) -> None:
        """A message too large to read was dropped: the answer may miss a part, and says so."""
        self._truncated = True

    def _note(self, message: str) -> None:
        """Our own diagnostics about the child, shown with its stderr."""
        self._on_stderr_line(f"[acp-tui] {message}")


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
