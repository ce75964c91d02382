"""The one run lifecycle, for the app and for `acp-tui run`.

`SessionDriver.start(attempt)` prepares the attempt (its worktree when isolated, its provider in the seam),
starts its run through `Subagents` (so the capability check always happens), follows the run's
events onto the attempt, records the worktree's change once, and ends with the attempt's result.
Whoever watches the attempt (a pane, the headless printer) consumes `attempt.events`: the run's own
events, the driver's (`WorktreeReady`, `ChangeRecorded`), and `Finished` last, once the change is
recorded.

`cancel()` works at every phase: while the worktree is being made or the provider set up, nothing
is spawned and the attempt ends `aborted`; once the run exists, it is disposed. Every path, a bug of
ours included, ends with the run disposed and the attempt's result set.

Its tasks (each attempt's drive, the cancels asked for from plain code) live in one task group
(`core.tasks.TaskHost`), which `aclose()` joins.

The runs' vocabulary (`core.model`) is imported where a run is driven: the app makes its driver
before its first frame, which shows no run.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import os
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from acp_tui.core.costs import over_budget
from acp_tui.core.registry import Subagents
from acp_tui.core.tasks import TaskHost
from acp_tui.session.asks import AskQueue, PendingAsk
from acp_tui.session.attempts import ChangeRecorded, WorktreeReady
from acp_tui.session.providers import provider_for

if TYPE_CHECKING:
    from pathlib import Path

    import anyio

    from acp_tui.core.model import SubagentRequest, SubagentResult, SubagentRun
    from acp_tui.session.attempts import Attempt, AttemptEvent
    from acp_tui.session.warm import Spares
    from acp_tui.settings.provider_config import AcpProviderConfig
    from acp_tui.workspace.far import FarIsolation
    from acp_tui.workspace.worktrees import Isolation, Origin, Worktree

log = logging.getLogger(__name__)

# The core's config for an attempt, made once its worktree (if any) exists: the owner's settings,
# policy, tracing and sandbox decide it.
Configure = Callable[["Attempt"], "AcpProviderConfig"]


class _Cancelled(Exception):
    """The attempt was cancelled while it was being prepared."""


class SessionDriver:
    def __init__(
        self,
        configure: Configure,
        *,
        timeout: float | None = None,
        keep_worktrees: bool = False,
        isolation_root: Path | None = None,
    ) -> None:
        self.configure = configure
        self.timeout = timeout  # `acp-tui run --timeout`: every run is disposed after it
        self.keep_worktrees = keep_worktrees
        self.subagents = Subagents()
        self.asks = AskQueue(self._attempt_of)
        self.asks.listen(self._ask_changed)
        self.isolation: Isolation | None = None  # made at the first isolated attempt
        self.far_isolations: dict[tuple[str, tuple[str, ...]], FarIsolation] = {}  # by remote and options
        self.base: str | None = None  # where far worktrees start (`--base`; local ones: their origin)
        self.origins: dict[str, Origin] = {}  # checkouts found, by the cwd they hold (never failures)
        self.attempts: list[Attempt] = []
        self.spares: Spares | None = None  # warm starts, when the owner wants them
        self.on_change: Callable[[Attempt], None] = lambda attempt: None  # a state to show again
        self._isolation_root = isolation_root
        self._looking: dict[str, asyncio.Future[Origin]] = {}
        self._preparing: dict[Attempt, anyio.CancelScope] = {}  # attempts making their worktree
        self._tasks = TaskHost("acp-tui session driver")

    # The lifecycle, from the outside ----------------------------------------------------------

    def start(self, attempt: Attempt) -> None:
        """Start driving the attempt; its events come on `attempt.events`."""
        self.attempts.append(attempt)
        attempt.driven = True
        self._tasks.start_soon(self._drive(attempt))

    def refuse(self, attempt: Attempt, message: str) -> None:
        """End the attempt `error` without running anything (what it needs cannot be had)."""
        from acp_tui.core.model import Finished, SubagentResult, SubagentStopReason

        self.attempts.append(attempt)
        result = SubagentResult(SubagentStopReason.ERROR, "", error=message)
        attempt.result, attempt.phase = result, "ended"
        attempt.events.push(Finished(result))
        self._changed(attempt)

    async def cancel(
        self, attempt: Attempt, reason: str | None = "cancelled by the user", *, by_user: bool = True
    ) -> None:
        """Stop the attempt however far it got; returns once its run (if any) is disposed."""
        if attempt.finished:
            return
        if attempt.cancel_reason is None:
            self._mark_cancelled(attempt, reason, by_user=by_user)
            self._changed(attempt)
        if attempt.run is not None:
            await attempt.run.dispose(attempt.cancel_reason)

    def _mark_cancelled(self, attempt: Attempt, reason: str | None, *, by_user: bool) -> None:
        attempt.cancel_reason = reason
        attempt.cancelled_by_user = by_user
        attempt.phase = "cancelling"
        attempt.cancelled.set()
        if attempt in self._preparing:  # its worktree is not made: nothing runs
            self._preparing[attempt].cancel()

    async def fail(self, attempt: Attempt, message: str) -> None:
        """End the attempt as `error` with `message` (its watcher failed): its run is disposed."""
        attempt.failure = message
        await self.cancel(attempt, message, by_user=False)

    def cancel_soon(self, attempt: Attempt, reason: str | None, *, by_user: bool = False) -> None:
        """`cancel`, from where nothing can await it (a signal handler, a timer)."""
        self._tasks.start_soon(self.cancel(attempt, reason, by_user=by_user))

    async def wait(self, attempt: Attempt) -> SubagentResult:
        """The attempt's result once it ended (its change recorded)."""
        await attempt.ended.wait()
        assert attempt.result is not None
        return attempt.result

    async def close(self, attempt: Attempt) -> str | None:
        """The attempt leaves the screen: stopped if live, its worktree removed unless kept; what
        could not be removed, in one line."""
        if attempt.live and attempt.driven:
            await self.cancel(attempt, "closed by the user")
            await self.wait(attempt)
        return await self.drop_worktree(attempt)

    async def drop_worktree(self, attempt: Attempt) -> str | None:
        """Remove the attempt's worktree (recorded first if it was not), unless kept; what could
        not be removed, in one line."""
        worktree = attempt.worktree
        if worktree is None or worktree.removed:
            return None
        await self.record(attempt)
        return await worktree.remove()

    async def record(self, attempt: Attempt) -> None:
        """Record the worktree's change, once, whoever asks first (the end of the run, a close)."""
        worktree = attempt.worktree
        if worktree is None:
            return
        async with attempt.record_lock:
            if attempt.change is None and not worktree.removed:
                from acp_tui.workspace.worktrees import time_left

                run_timeout = attempt.config.run_timeout if attempt.config is not None else None
                attempt.change = await worktree.record(
                    timeout=time_left(attempt.spawned_at or attempt.started_at, self.timeout, run_timeout),
                    max_file_bytes=attempt.preset.max_file_bytes,
                )

    async def aclose(self) -> list[str]:
        """Quit: every live attempt stopped at once (one cancel grace and one term grace for all),
        each one's change recorded, every worktree not kept removed. Lines for what was left."""
        live = [attempt for attempt in self.attempts if attempt.live]
        for attempt in live:
            if attempt.cancel_reason is None:
                self._mark_cancelled(attempt, "the app quit", by_user=False)
        await asyncio.gather(  # every run at once, spares and runs taken from them too
            self.subagents.aclose(), self.spares.aclose() if self.spares else asyncio.sleep(0)
        )
        await asyncio.gather(*(self.wait(attempt) for attempt in live if attempt.driven))
        # A checkout still being looked for (its attempt was cancelled meanwhile): a short git, let
        # finish rather than cancelled (a git killed as the loop closes can hang the close).
        await asyncio.gather(*self._looking.values(), return_exceptions=True)
        await self._tasks.aclose()
        far = await asyncio.gather(*(isolation.aclose() for isolation in self.far_isolations.values()))
        left = [line for lines in far for line in lines]
        if self.isolation is None:
            return left
        return left + await self.isolation.aclose()

    # Driving one attempt ------------------------------------------------------------------------

    async def _drive(self, attempt: Attempt) -> None:
        from acp_tui.core.model import SubagentResult, SubagentStopReason

        try:
            await self._drive_to_the_end(attempt)
        finally:
            if attempt.result is None:  # cancelled from outside (the loop closing): aborted
                attempt.result = SubagentResult(SubagentStopReason.ABORTED, "", error=attempt.cancel_reason)
                attempt.phase = "ended"
            attempt.ended.set()

    async def _drive_to_the_end(self, attempt: Attempt) -> None:
        from acp_tui.core.model import Finished, SubagentResult, SubagentStopReason

        failure = None
        try:
            result = await self._prepare_and_run(attempt)
        except Exception as exc:  # a bug of ours still ends the attempt, and says so
            log.exception("driving an attempt failed")
            failure = f"internal error: {type(exc).__name__}: {exc}"
            result = SubagentResult(SubagentStopReason.ERROR, "", error=failure)
        finally:
            run = attempt.run
            if run is not None:  # whatever happened above, nothing of the run is left
                with contextlib.suppress(Exception):
                    await asyncio.shield(run.dispose(failure))
        if failure is not None and attempt.run is not None:  # its partial answer is kept
            kept = await attempt.run.result()
            result = dataclasses.replace(kept, stop_reason=SubagentStopReason.ERROR, error=failure)
        if attempt.worktree is not None:
            await self.record(attempt)
            if attempt.change is not None:
                attempt.events.push(ChangeRecorded(attempt.change))
        if attempt.failure is not None:
            result = dataclasses.replace(result, stop_reason=SubagentStopReason.ERROR, error=attempt.failure)
        attempt.result = result
        attempt.phase = "ended"
        attempt.asks_waiting = 0
        attempt.events.push(Finished(result))
        self._changed(attempt)

    async def _prepare_and_run(self, attempt: Attempt) -> SubagentResult:
        from acp_tui.core.model import Finished, SubagentRequest, SubagentResult, SubagentStopReason

        attempt.phase = "preparing"
        self._changed(attempt)
        name = f"attempt {attempt.id}"
        try:
            cwd, continuing = attempt.workdir, None
            if attempt.previous is not None:  # a follow-up: in its conversation's cwd and worktree
                cannot = attempt.previous.cannot_follow_up()
                if cannot is not None:
                    return SubagentResult(SubagentStopReason.ERROR, "", error=f"cannot continue: {cannot}")
                continuing = attempt.previous.session_id
                if attempt.worktree is not None:
                    attempt.worktree.change = None  # recorded again when this turn ends
                    attempt.events.push(WorktreeReady(attempt.worktree))
            elif attempt.isolated:
                worktree = await self._worktree_unless_cancelled(attempt)
                attempt.worktree = worktree
                attempt.events.push(WorktreeReady(worktree))
                cwd = str(worktree.cwd)
            if attempt.cancelled.is_set():
                raise _Cancelled
            config = self.configure(attempt)
            if attempt.worktree is not None:
                config = confined_to(attempt.worktree, config)
            attempt.config = config
            await self.subagents.register(name, provider_for(attempt.preset.provider, config))
            request = SubagentRequest(prompt=attempt.prompt, cwd=cwd, session_id=continuing)
            attempt.spawned_at = time.monotonic()
            run: SubagentRun | None = await self._warm_run(attempt, name, request)
            if run is None:
                run = await self.subagents.start(name, request)
        except _Cancelled:
            return SubagentResult(SubagentStopReason.ABORTED, "", error=attempt.cancel_reason)
        except Exception as exc:  # no worktree, a capability refused, a policy the core lacks
            from acp_tui.workspace.git import IsolationError

            if isinstance(exc, IsolationError):
                message = f"no worktree: {exc}"
            elif isinstance(exc, ValueError | KeyError):
                message = str(exc)
            else:
                raise
            return SubagentResult(SubagentStopReason.ERROR, "", error=message)
        attempt.run = run
        attempt.trace = getattr(run, "trace_path", None)
        attempt.cwd = getattr(run, "cwd", None)
        if attempt.cancelled.is_set():  # the cancel came while the run was spawning
            self._tasks.start_soon(run.dispose(attempt.cancel_reason))
        timer = None
        if self.timeout is not None:
            reason = f"timed out after {self.timeout:g} s"
            timer = asyncio.get_running_loop().call_later(self.timeout, self.cancel_soon, attempt, reason)
        try:
            async for event in run.events():
                if isinstance(event, Finished):
                    attempt.trace = getattr(run, "trace_path", None) or attempt.trace  # opened late
                    attempt.cwd = getattr(run, "cwd", None) or attempt.cwd  # a far side's, known late
                    return event.result
                self._follow(attempt, event)
                attempt.events.push(event)
        finally:
            if timer is not None:
                timer.cancel()
            with contextlib.suppress(KeyError):
                await self.subagents.unregister(name)  # the run is over: its provider goes too
        return await run.result()

    async def _warm_run(self, attempt: Attempt, name: str, request: SubagentRequest) -> SubagentRun | None:
        """The spare made for exactly this run, taken (after the seam's capability check), if any."""
        if self.spares is None or attempt.config is None or not attempt.preset.spared:
            return None
        self.subagents.check(name, request)  # refused: the spare stays one
        cwd = attempt.config.cwd_for(request.cwd)
        spare = await self.spares.take(attempt.config, cwd, follow_up=request.session_id is not None)
        if spare is None:
            return None
        try:
            run = spare.take(request)
        except ValueError:  # it ended as it was taken: the run starts cold (quit disposes the spare)
            return None
        attempt.warm = True
        return run

    def reopen_worktree(self, attempt: Attempt) -> None:
        """A recorded turn's worktree again, for its follow-up (`attempt.worktree`), or why it cannot
        be (`attempt.worktree_error`: gone, not ours, its cwd outside it; then nothing runs)."""
        from acp_tui.workspace.git import IsolationError
        from acp_tui.workspace.worktrees import Isolation

        if attempt.recorded_worktree is None:
            return
        if attempt.preset.remote is not None:  # not a folder here, whatever its path says
            attempt.worktree_error = f"its worktree was on the far side of {attempt.preset.remote}"
            return
        if self.isolation is None:
            self.isolation = Isolation(self._isolation_root)
        try:
            attempt.worktree = self.isolation.reopen(*attempt.recorded_worktree)
        except IsolationError as exc:
            attempt.worktree_error = str(exc)

    async def _worktree_unless_cancelled(self, attempt: Attempt) -> Worktree:
        """The attempt's worktree; _Cancelled if the attempt is cancelled first."""
        import anyio

        with anyio.CancelScope() as self._preparing[attempt]:
            try:
                if not attempt.cancelled.is_set():
                    return await self._worktree_for(attempt)
            finally:
                del self._preparing[attempt]
        raise _Cancelled

    async def _worktree_for(self, attempt: Attempt) -> Worktree:
        from acp_tui.workspace.worktrees import Isolation, find_origin

        preset = attempt.preset
        if preset.remote is not None:  # made over there, in remote_cwd's checkout
            from acp_tui.workspace.far import FarIsolation

            key = (preset.remote, tuple(preset.remote_options))
            if key not in self.far_isolations:
                self.far_isolations[key] = FarIsolation(*key, connect_timeout=preset.handshake_timeout)
            return await self.far_isolations[key].add(
                preset.remote_cwd, attempt.agent, base=self.base, keep=self.keep_worktrees
            )

        where = isolation_cwd(attempt)
        origin = self.origins.get(where)
        if origin is None:
            # One look per checkout for attempts that start together; a failure is not kept.
            looking = self._looking.get(where)
            if looking is None:
                looking = self._looking[where] = asyncio.get_running_loop().create_task(find_origin(where))
                looking.add_done_callback(lambda _: self._looking.pop(where, None))
            origin = await asyncio.shield(looking)
            self.origins[where] = origin
        if self.isolation is None:
            self.isolation = Isolation(self._isolation_root)  # its start prunes what a crash left
        worktree = await self.isolation.add(origin, attempt.agent)
        if self.keep_worktrees:
            worktree.keep()
        return worktree

    def _follow(self, attempt: Attempt, event: AttemptEvent) -> None:
        """What an event of the run changes in the attempt."""
        from acp_tui.core.model import (
            CommandsOffered,
            HiddenUpdate,
            NetworkRefused,
            OutputDelta,
            PermissionDecided,
            SessionStarted,
            StatusChanged,
            Stopping,
            ToolCallChanged,
            UsageReported,
        )

        if isinstance(event, OutputDelta):
            attempt.last_output_at = time.monotonic()
            attempt.first_output_at = attempt.first_output_at or attempt.last_output_at
        elif isinstance(event, StatusChanged):
            if event.status in ("spawning", "initializing", "prompting") and attempt.phase != "cancelling":
                attempt.phase = event.status
                if event.status == "prompting":  # started: what waits for the runs starting goes on
                    self._changed(attempt)
            elif event.status == "cancelling":
                attempt.phase = "cancelling"
        elif isinstance(event, Stopping):
            attempt.stop_step = event.step
            attempt.phase = "cancelling"
        elif isinstance(event, HiddenUpdate):
            attempt.hidden[event.kind] += 1
        elif isinstance(event, PermissionDecided):
            attempt.live_permissions.append(event.record)
        elif isinstance(event, UsageReported):
            attempt.usage = event.usage
            attempt.first_usage = attempt.first_usage or event.usage
            over = over_budget(attempt.spent, attempt.preset.budget_usd)
            if over is not None and attempt.cancel_reason is None:  # past its budget: it stops
                self.cancel_soon(attempt, over)
            self._changed(attempt)  # what the session has spent changed
        elif isinstance(event, ToolCallChanged):
            attempt.live_tool_calls[event.call.id] = event.call
        elif isinstance(event, NetworkRefused):
            attempt.live_network_refused.append(event.refusal)
        elif isinstance(event, CommandsOffered):
            attempt.commands = event.commands
            self._changed(attempt)
        elif isinstance(event, SessionStarted):
            attempt.agent_info = event.agent
            attempt.options = dict(event.options)
            attempt.offered = event.offered

    def _attempt_of(self, run: object) -> Attempt | None:
        return next((attempt for attempt in self.attempts if attempt.run is run), None)

    # Watchers ------------------------------------------------------------------------------------

    def _ask_changed(self, pending: PendingAsk) -> None:
        attempt = pending.attempt
        if attempt is not None and attempt.live:
            attempt.asks_waiting = self.asks.waiting_for(attempt)
            self._changed(attempt)

    def _changed(self, attempt: Attempt) -> None:
        try:
            self.on_change(attempt)
        except Exception:  # a watcher's failure is the watcher's
            log.exception("a watcher of an attempt failed")


def isolation_cwd(attempt: Attempt) -> str:
    """The checkout an isolated run comes from: its preset's cwd, else ours (the demo's scratch dir
    only kept writes out of the checkout, which a worktree does)."""
    preset = attempt.preset
    return os.path.abspath(attempt.workdir or (None if preset.create_cwd else preset.cwd) or os.getcwd())


def confined_to(worktree: Worktree, config: AcpProviderConfig) -> AcpProviderConfig:
    """A sandboxed run's config in `worktree`: the worktree writable, the repository's objects
    read-only, its git on a git directory of its own (see `process.sandbox.worktree_view`)."""
    if config.sandbox == "none":
        return config
    from acp_tui.process.sandbox import worktree_view

    origin = worktree.origin
    writable, readable, git_dirs = worktree_view(
        worktree.path, origin.common_dir / "objects", worktree.admin, worktree.own_git_dir()
    )
    return dataclasses.replace(
        config,
        sandbox_writable=(*config.sandbox_writable, *writable),
        sandbox_readable=(*config.sandbox_readable, *readable),
        sandbox_git_dirs={**config.sandbox_git_dirs, **git_dirs},
    )


def preload_backend() -> None:
    """Import what the first attempt needs (the SDK and our client of it), e.g. off a UI's thread."""
    from acp_tui.acp.sdk import import_acp

    import_acp()
    import acp_tui.acp.client  # noqa: F401
