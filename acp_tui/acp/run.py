"""One ACP run: one child, one session, one prompt, one result.

The lifecycle, the events, the stop and the cleanup are every run's (`acp_tui.runs.base.RunBase`);
this is the ACP conversation over a handshake object (`AcpHandshake`): a cold run makes its own
and takes it through `initialize`; a warm one is handed a spare's. Then the session (`session/new`,
or the one a follow-up continues), the options, `session/prompt` as the turn (`session/cancel`
when told to stop), `session/close`, and the stop reason mapped as the RFC says.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from acp_tui.acp.handshake import AcpHandshake
from acp_tui.acp.stop_reasons import map_stop_reason
from acp_tui.core.model import EndedBy, SessionStarted, SubagentStopReason
from acp_tui.runs.phase import Phase
from acp_tui.runs.provider import ProviderRun, RunInputs
from acp_tui.runs.talk import Outcome

if TYPE_CHECKING:
    from acp_tui.acp.session_setup import SessionSetup


class AcpSubagentRun(ProviderRun):
    def __init__(self, inputs: RunInputs, *, handshake: AcpHandshake | None = None) -> None:
        """`handshake`: a spare's, already started (a warm start); else the run makes its own."""
        self.warm = handshake is not None
        super().__init__(inputs, cwd=handshake.cwd if handshake else None)
        self._link = handshake or AcpHandshake(self.config, self.cwd)
        self.adopt_stderr(self._link.tail)
        self.child = self._link.child
        self._link.attach(self)

    @property
    def trace_path(self) -> str | None:
        """Its handshake's trace (a spare's is opened before any run takes it)."""
        trace = self._link.trace
        return str(trace.path) if trace else None

    @property
    def sandboxed(self) -> bool:
        """Confined by bubblewrap (the child we hold is bwrap)."""
        return self.config.sandbox == "workspace"

    @property
    def setup(self) -> SessionSetup | None:
        """The session's setup: what the agent said of itself, its options (once connected)."""
        return self._link.setup

    # The conversation --------------------------------------------------------------------------

    async def launch(self) -> None:
        if not self.warm:
            await self._link.launch()
            self.child = self._link.child

    async def converse(self) -> Outcome:
        link = self._link
        if not self.warm:
            link.connect()
            assert self.task_group is not None
            link.start_helpers(self.task_group)
        self.advance(Phase.INITIALIZING)
        return await self._session_and_turn(link)

    async def explain(self, exc: Exception) -> str | None:
        return await self._link.explain(exc)

    async def _session_and_turn(self, link: AcpHandshake) -> Outcome:
        if self.warm:
            await link.ready.wait()
            if link.failure is not None:
                return self.talk.failed(link.failure)
        else:
            await link.initialize(self.deadlines)
        setup = link.setup
        assert setup is not None
        if link.cwd != self.cwd:  # beyond a link: where the far side said the agent works
            self.cwd = link.cwd
            self.request = dataclasses.replace(self.request, cwd=link.cwd)
        session_id = link.session_id
        if session_id is None:
            session_id = await link.open_session(self.deadlines, continuing=self.request.session_id)
        else:
            link.updates.opened(session_id)
        guard = self.guard
        self.emit(
            SessionStarted(
                guard.json(setup.agent), setup.current_options, guard.json(setup.auth_methods), setup.offered
            )
        )
        self.advance(Phase.PROMPTING)
        link.updates.replaying = False  # what comes from now on answers this prompt
        stop_reason = await self.take_turn(session_id)
        if self.talk.stopping:  # some agents answer end_turn to a cancel: still aborted
            return self.talk.aborted()
        await setup.close(self.config.cancel_grace)
        mapped = map_stop_reason(stop_reason)
        if mapped is SubagentStopReason.ERROR:
            return mapped, f"agent stopped with {stop_reason!r}"
        return mapped, None

    async def take_turn(self, session_id: str) -> str:
        """`session/prompt`, to its stop reason (`session/cancel` if the run is told to stop)."""
        import acp

        conn = self._link.connection
        prompt: list[Any] = [acp.text_block(self.request.prompt)]
        response = await self.talk.turn(
            lambda: conn.prompt(session_id=session_id, prompt=prompt),
            lambda: conn.cancel(session_id=session_id),
        )
        return str(response.stop_reason)

    async def wind_down(self, *, graceful: bool, on_step: Callable[[str], None]) -> EndedBy | None:
        return await self._link.close(graceful=graceful, grace=self.deadlines.grace_left(), on_step=on_step)

    def result_fields(self) -> dict[str, Any]:
        link, guard = self._link, self.guard
        setup, updates = link.setup, link.updates
        return {
            "agent": guard.json(setup.agent) if setup else None,
            "options": setup.current_options if setup else {},
            "usage": updates.usage,
            "auth_methods": guard.json(setup.auth_methods) if setup else (),
            "tool_kinds": dict(updates.tool_kinds),
            "tool_calls": tuple(guard.json(call) for call in updates.tool_calls.all()),
            "session_id": updates.session_id,
            "continuation": setup.continuation if setup else None,
        }
