"""How a pane shows the run events of the shared contract that the core emits as its work lands
(`Stopping`, `UsageReported`, `SessionStarted`), and a run gone silent.

The run here is a stand-in at the UI's seam (the `SubagentRun` protocol), fed event by event: it
speaks no protocol; the core's own tests drive real children.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator

from textual.widgets import Static

from acp_tui.core.model import (
    AgentInfo,
    Cost,
    Finished,
    OutputDelta,
    RunEvent,
    SessionStarted,
    StatusChanged,
    Stopping,
    SubagentResult,
    SubagentStopReason,
    Usage,
    UsageReported,
)
from acp_tui.session.attempts import Session
from acp_tui.ui.app import SupervisorApp
from acp_tui.ui.widgets.run_pane import SILENT_AFTER, RunPane
from acp_tui.ui.widgets.status_badge import StatusBadge
from tests.ui.helpers import scripted_preset, settings, wait_until


class FedRun:
    def __init__(self) -> None:
        self.queue: asyncio.Queue[RunEvent] = asyncio.Queue()
        self.disposed = False

    async def events(self) -> AsyncIterator[RunEvent]:
        while True:
            event = await self.queue.get()
            yield event
            if isinstance(event, Finished):
                return

    async def result(self) -> SubagentResult:
        raise NotImplementedError

    async def dispose(self, reason: str | None = None) -> None:
        self.disposed = True


async def test_stop_steps_usage_and_agent_info_show_on_the_pane() -> None:
    preset = scripted_preset("fed")
    app = SupervisorApp(settings(preset))
    run = FedRun()

    async def start() -> FedRun:
        return run

    async with app.run_test(size=(150, 40)) as pilot:
        [attempt] = Session().new_round("the task", [preset], {"fed": "reject"})
        pane = RunPane(attempt, start)  # type: ignore[arg-type]
        await app.query_one("#runs").mount(pane)
        badge = pane.query_one(StatusBadge)

        def error_line() -> str:
            return str(pane.query_one("#error", Static).render())

        await run.queue.put(StatusChanged("prompting"))
        await run.queue.put(SessionStarted(AgentInfo("fed-agent", "Fed Agent", "1.2.3"), {}))
        await run.queue.put(UsageReported(Usage(1234, 200_000, Cost(0.031, "USD"))))
        await run.queue.put(OutputDelta("partial"))
        await wait_until(pilot, lambda: badge.status == "prompting" and pane.attempt.usage is not None)
        pane._tick()
        assert str(pane.query_one("#usage", Static).render()).strip() == "1.2k/200k tok 0.03 USD"
        assert "Fed Agent 1.2.3" in str(pane.border_title)

        pane.attempt.last_output_at = time.monotonic() - SILENT_AFTER - 30
        pane._tick()
        assert str(pane.query_one("#elapsed", Static).render()).startswith("silent 4")

        await run.queue.put(Stopping("cancel-sent"))
        await wait_until(pilot, lambda: badge.status == "cancelling")
        assert error_line() == "cancelling" and pane.has_class("-state-cancelling")
        await run.queue.put(Stopping("sigterm"))
        await wait_until(pilot, lambda: error_line() == "sent SIGTERM")
        await run.queue.put(Stopping("sigkill"))
        await wait_until(pilot, lambda: error_line() == "killed (ignored cancel)")
        result = SubagentResult(SubagentStopReason.ABORTED, "partial", error="timed out", ended_by="sigkill")
        await run.queue.put(Finished(result))
        await wait_until(pilot, lambda: pane.result is not None)
        assert badge.status == "aborted"  # not cancelled by the user: the stop reason itself
        assert error_line() == "timed out · killed (ignored cancel)"
