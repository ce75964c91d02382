"""The run every provider shares: its lifecycle, events, result, stop and cleanup.

A provider's run subclasses `RunBase` and writes its conversation only:

- `refusal()`: what the run cannot honour or lacks (an option it does not take, its optional
  extra), in one line, before anything is started: the run ends `error` with it;
- `launch()`: start the child (through a carrier), before anything else; ChildStartError ends the
  run `error` with its message. A run of an agent that runs elsewhere (A2A, over HTTP) has no
  child: it starts nothing here, and everything below holds for it as for any run;
- `converse()`: the conversation, in the run's task group (`self.task_group` for its helpers), to
  an `Outcome`; a stop cancels it (outside a turn), `self.talk`'s `turn`, `aborted` and `failed`
  do the rest;
- `explain(exc)`: what the conversation raised, in one line (the run ends `error` with it); None
  for a bug of ours;
- `wind_down(graceful, on_step)`: end the child (by default: `self.child.end`), to how it ended;
- `result_fields()`: what the provider adds to the result (its agent, session, options...).

Its limits (timeouts, graces, the answer's cap, the secrets to mask) come from the provider's config,
read through `RunLimits`.

The run is one coroutine (`_lifecycle`). The contract has `start()` return a live run and nothing
for the caller to `async with`, so that coroutine is a task of its own, and everything it starts
lives in its anyio task group. Its phase only moves forward (`Phase`). `stop()` (dispose, the abort
event, a timeout, the child gone) only asks (`Talk`): outside a turn it cancels the conversation's
scope; inside one, `turn()` asks the agent to end the turn and gives it the cancel grace. However the
conversation ends, the cleanup runs once, shielded, while the child's helpers (its stderr drain)
still run; then the helpers are cancelled and the result is set. A caller's cancellation is never
swallowed: `dispose()` and `result()` only wait for that task.

The child is spawned before anyio's task group opens: the child boots while anyio's backend loads
(about 30 ms), as it does while the protocol's SDK loads.
"""

from __future__ import annotations

import asyncio
import logging
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, Protocol, cast

import anyio
from anyio.abc import TaskGroup

from acp_tui.core.elicitation import QuestionHandler
from acp_tui.core.events import EventStream
from acp_tui.core.model import (
    EndedBy,
    Finished,
    HiddenUpdate,
    NetworkRefused,
    OutputDelta,
    PermissionDecided,
    QuestionAnswered,
    RunEvent,
    StatusChanged,
    StderrLine,
    Stopping,
    StopStep,
    SubagentResult,
    SubagentStopReason,
    ToolCallChanged,
    ToolCallInfo,
)
from acp_tui.core.text import one_line
from acp_tui.policy.ask import PermissionPolicy
from acp_tui.runs.child import ChildProcess, ChildStartError
from acp_tui.runs.deadlines import Deadlines, Timeouts
from acp_tui.runs.output import OutputBuffer, StderrTail, TextGuard
from acp_tui.runs.permissions import PermissionBroker
from acp_tui.runs.phase import Phase
from acp_tui.runs.questions import QuestionBroker
from acp_tui.runs.talk import Interrupted, Outcome, Talk
from acp_tui.runs.waiting import Waits

ERROR_CHARS = 300  # an error message is one line of at most this

log = logging.getLogger(__name__)


class RunLimits(Timeouts, Protocol):
    """A provider's config, as far as a run goes (`AcpProviderConfig` is one)."""

    @property
    def term_grace(self) -> float: ...
    @property
    def max_output_chars(self) -> int: ...
    def secrets(self) -> list[str]: ...


class RunBase:
    def __init__(
        self,
        limits: RunLimits,
        policy: PermissionPolicy,
        *,
        cwd: str,
        abort: Any = None,
        questions: QuestionHandler | None = None,
    ) -> None:
        """`questions`: who answers the agent's questions to the person (None: they are declined)."""
        self.cwd = cwd
        self.phase = Phase.NEW
        self.deadlines = deadlines = Deadlines.of(limits)
        self.term_grace = limits.term_grace
        secrets = limits.secrets()
        self.guard = TextGuard(secrets)
        self.output = OutputBuffer(
            secrets, limits.max_output_chars, lambda text: self.emit(OutputDelta(text))
        )
        self.stderr = StderrTail(self.guard, lambda line: self.emit(StderrLine(line)))
        # What waits for an answer (a policy deciding, a person answering): one halt cuts it all short.
        self.waits = Waits(asker=self)
        self.permissions = PermissionBroker(
            policy, self.guard, deadlines, self.waits, on_record=lambda r: self.emit(PermissionDecided(r))
        )
        self.questions = QuestionBroker(
            questions, self.guard, deadlines, self.waits, on_record=lambda r: self.emit(QuestionAnswered(r))
        )
        self.talk = Talk(deadlines, self._step)
        self.hidden: Counter[str] = Counter()
        self.child: ChildProcess | None = None
        self.heard = False  # any frame from the agent yet
        self.ended_by: EndedBy | None = None
        self._abort = abort
        self._events: EventStream[RunEvent] = EventStream()
        # Plain asyncio events: they exist before the spawn, where anyio's backend is not loaded yet.
        self._spawned = asyncio.Event()
        self._ended = asyncio.Event()
        self.task_group: TaskGroup | None = None  # while the run converses: for its helpers
        self._result: SubagentResult | None = None
        self._root: asyncio.Task[None] | None = None

    def adopt_stderr(self, tail: StderrTail) -> None:
        """The tail of a child started ahead of the run (a spare): the lines it kept, then its next
        ones, are the run's."""
        tail.on_line, self.stderr = self.stderr.on_line, tail
        for line in tail.lines:
            tail.on_line(line)

    # The public face ---------------------------------------------------------------------------

    @property
    def pid(self) -> int | None:
        """The child's pid, which is also its process group id."""
        return self.child.leader.pid if self.child else None

    def events(self) -> AsyncIterator[RunEvent]:
        return aiter(self._events)

    async def result(self) -> SubagentResult:
        await self._ended.wait()
        assert self._result is not None
        return self._result

    def done(self) -> bool:
        return self._result is not None

    async def start(self) -> None:
        """Start the run; return once its child runs or has failed to start (a run without a
        child: once it is under way)."""
        self.begin()
        await self._spawned.wait()

    def begin(self) -> None:
        """Start the run's coroutine (see the module's docstring: a task of its own)."""
        if self._abort is not None and self._abort.is_set():
            self.talk.stop(None)  # pre-abort: nothing is spawned, no prompt is sent
        self._root = asyncio.get_running_loop().create_task(self._lifecycle(), name="acp-tui run")

    async def dispose(self, reason: str | None = None) -> None:
        """Stop the run however far it got, and return once its processes are gone."""
        self.stop(reason)
        if self._root is None:
            self._finish((SubagentStopReason.ABORTED, reason))
        await self._ended.wait()

    def stop(self, reason: str | None = None) -> None:
        """Ask the run to stop (dispose, the abort event, a timeout): it ends `aborted`, `reason`
        its error. From any task, any number of times: the first reason is the one kept."""
        if self.done() or not self.talk.stop(reason):
            return
        self.waits.halt()
        if self._root is not None:
            self.advance(Phase.CANCELLING)

    def child_gone(self) -> None:
        """The child is gone (it exited while something still holds its pipes, or its output
        ended before its turn did): the conversation is over."""
        self.waits.halt()
        self.talk.cut()

    # For the provider --------------------------------------------------------------------------

    def refusal(self) -> str | None:
        """Why this run cannot start as asked, in one line; None when it can."""
        return None

    async def launch(self) -> None:
        """Start the child (`self.child`), if the run has one; ChildStartError says why it could
        not be."""

    async def converse(self) -> Outcome:
        raise NotImplementedError

    async def explain(self, exc: Exception) -> str | None:
        """Why the conversation failed with `exc`, in one line; None for a bug of ours (raised)."""
        return None

    async def wind_down(self, *, graceful: bool, on_step: Callable[[str], None]) -> EndedBy | None:
        if self.child is None:
            return None
        return await self.child.end(graceful=graceful, term_grace=self.term_grace, on_step=on_step)

    def result_fields(self) -> dict[str, Any]:
        return {}

    def emit(self, event: RunEvent) -> None:
        if not self.done():
            self._events.push(event)

    def advance(self, phase: Phase) -> None:
        """Move to `phase`, and say so; a phase behind the current one is not news."""
        if phase > self.phase:
            self.phase = phase
            self._events.push(StatusChanged(phase.status))

    def hide(self, kind: str) -> None:
        """An update that is not the answer: counted, never shown."""
        self.hidden[kind] += 1
        self.emit(HiddenUpdate(kind))

    def tool_call_changed(self, call: ToolCallInfo | None) -> None:
        """A tool call as it stands now (`acp_tui.runs.tool_calls` merges it), guarded, for those
        who follow the run's activity; None (no usable id) is not news."""
        if call is not None:
            self.emit(ToolCallChanged(self.guard.json(call)))

    def heard_from_agent(self) -> None:
        self.heard = True
        self.deadlines.heard()

    # The lifecycle -----------------------------------------------------------------------------

    async def _lifecycle(self) -> None:
        outcome = self.talk.aborted()
        try:
            if not self.talk.stopping:
                outcome = await self._live()
        except Exception as exc:  # a bug of ours still ends the run cleanly, and says so
            log.exception("run failed")
            outcome = (SubagentStopReason.ERROR, f"internal error: {type(exc).__name__}: {exc}")
        finally:
            self._spawned.set()
            self._finish(outcome)

    async def _live(self) -> Outcome:
        self.advance(Phase.SPAWNING)
        try:
            refused = self.refusal()
            if refused is not None:  # nothing is started for a run that cannot go as asked
                return SubagentStopReason.ERROR, refused
            await self.launch()
        except ChildStartError as exc:
            return SubagentStopReason.ERROR, str(exc)
        finally:
            self._spawned.set()
        if self.child is not None:  # what its sandbox refuses, told as the run's
            self.child.clock = self.deadlines.elapsed
            self.child.on_refused = lambda refusal: self.emit(NetworkRefused(refusal))
        outcome = self.talk.aborted()
        async with anyio.create_task_group() as self.task_group:
            try:
                await asyncio.sleep(0)  # let runs started alongside spawn too, before what comes next
                outcome = await self._conversation()
            finally:
                with anyio.CancelScope(shield=True):
                    await self._clean_up()
                self.task_group.cancel_scope.cancel()  # the helpers (stderr drain, watchers) end here
        return outcome

    async def _conversation(self) -> Outcome:
        assert self.task_group is not None
        if self._abort is not None:
            self.task_group.start_soon(self._stop_when, self._abort.wait)  # the caller's signal
        self.task_group.start_soon(self._stop_when, self.deadlines.expired)  # run and idle timeouts
        with self.talk.scope():
            try:
                return await self.converse()
            except Interrupted:
                pass
            except Exception as exc:
                said = await self.explain(exc)
                if said is None:
                    raise
                return self.talk.failed(said)
        if self.talk.stopping:
            return self.talk.aborted()
        return self.talk.failed(await self.why_gone())

    async def why_gone(self) -> str:
        """Why the agent went before the conversation ended, in one line: its child's exit code or
        signal and last stderr line (`child_gone`); a run without a child lost its connection."""
        if self.child is None:
            return "the agent closed the connection"
        return await self.child.why_broken(heard=self.heard)

    async def _stop_when(self, said: Callable[[], Awaitable[object]]) -> None:
        """Stop the run once `said()` returns (a timeout's reason, or an abort event's True); the
        lifecycle does the rest, as for dispose()."""
        reason = await said()
        self.stop(reason if isinstance(reason, str) else None)

    async def _clean_up(self) -> None:
        """End the child; whatever fails here, the result still comes."""
        self.waits.halt()
        # The agent may exit by itself on stdin's end, unless it was told to stop and did not end
        # its turn within the grace: then it is signalled at once. After a turn the agent ended, a
        # SIGTERM to a process that stays up on stdin's end is housekeeping, not a stop: no
        # `Stopping` step (the result still says `ended_by`).
        talk = self.talk
        graceful = talk.turn_ended or not talk.stopping
        quiet = talk.turn_ended and not talk.stopping
        try:
            self.ended_by = await self.wind_down(
                graceful=graceful, on_step=(lambda step: None) if quiet else self._step
            )
        except Exception:
            log.exception("cleanup of a run failed")

    def _step(self, step: str) -> None:
        self.emit(Stopping(cast(StopStep, step)))

    def _finish(self, outcome: Outcome) -> None:
        if self._result is not None:
            return
        stop_reason, error = outcome
        self._result = SubagentResult(
            stop_reason=stop_reason,
            output=self.output.close(),
            error=one_line(self.guard(error), ERROR_CHARS, shown=False) if error else error,
            exit_code=self.child.leader.returncode if self.child else None,
            hidden=dict(self.hidden),
            permissions=list(self.permissions.records),
            duration_s=self.deadlines.elapsed(),
            stderr_tail=list(self.stderr.lines),
            truncated=self.output.truncated,
            ended_by=self.ended_by,
            network_refused=tuple(self.child.refused) if self.child else (),
            elicitations=tuple(self.questions.records),
            **self.result_fields(),
        )
        self.advance(Phase.FINISHED)
        self._events.push(Finished(self._result))
        self._ended.set()
