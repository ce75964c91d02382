"""Bugs of the run lifecycle, each with the test that failed before its fix (issue 18)."""

from __future__ import annotations

import asyncio
from dataclasses import replace

import acp_tui.acp.client  # noqa: F401  (the SDK loaded: its import must not count as silence)
from acp_tui import AcpSubagentProvider, SubagentRequest, SubagentStopReason
from acp_tui.core.events import EventStream
from acp_tui.core.model import Cost, Finished, OutputDelta, Usage, UsageReported
from acp_tui.policy.ask import PermissionAsk
from acp_tui.policy.rules import AskPolicy
from tests.helpers import scripted


async def test_the_idle_timeout_waits_while_a_person_answers_a_permission_request() -> None:
    answered = asyncio.Event()

    async def person(ask: PermissionAsk) -> str | None:
        await asyncio.sleep(1.5)  # a person reading the request: longer than the idle timeout
        answered.set()
        return ask.options[0].option_id

    config = replace(scripted(permission="normal"), permission_policy=AskPolicy(person), idle_timeout=0.6)
    run = await AcpSubagentProvider(config).start(SubagentRequest(prompt="go"))
    result = await asyncio.wait_for(run.result(), 10)
    assert result.stop_reason is SubagentStopReason.COMPLETED, result.error
    assert answered.is_set()
    assert "[permission:" in result.output


async def test_a_silent_agent_still_ends_at_its_idle_timeout() -> None:
    config = replace(scripted(pause=30), idle_timeout=0.3)
    run = await AcpSubagentProvider(config).start(SubagentRequest(prompt="go"))
    result = await asyncio.wait_for(run.result(), 10)
    assert result.stop_reason is SubagentStopReason.ABORTED and result.error == "silent for 0.3 s"


async def test_unread_usage_reports_are_coalesced() -> None:
    stream: EventStream[object] = EventStream()
    for used in range(10_000):
        stream.push(UsageReported(Usage(used, 100_000, Cost(used / 1000, "USD"))))
    stream.push(OutputDelta("x"))
    stream.push(UsageReported(Usage(20_000, 100_000)))
    stream.push(Finished(result=None))  # type: ignore[arg-type]
    seen = [event async for event in stream]
    usages = [event for event in seen if isinstance(event, UsageReported)]
    assert [u.usage.used for u in usages] == [20_000]
    assert len(stream._items) == 0 and len(seen) == 3
