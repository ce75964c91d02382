"""What every provider's `acp-tui probe` shares: a run that stops before any prompt, seen through
(its stderr forwarded, then disposed), and the record it is described by (the ACP probe's keys)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from acp_tui.core.model import StderrLine, SubagentResult, SubagentStopReason
from acp_tui.core.text import one_line
from acp_tui.runs.base import RunBase


async def probed(run: RunBase, on_stderr: Callable[[str], object]) -> tuple[SubagentResult, str | None]:
    """Start `run`, forward its stderr, dispose it: its result, and its error unless it completed."""
    await run.start()
    try:
        async for event in run.events():
            if isinstance(event, StderrLine):
                on_stderr(one_line(event.text))
    finally:
        await run.dispose()
    result = await run.result()
    return result, result.error if result.stop_reason is not SubagentStopReason.COMPLETED else None


def probe_record(result: SubagentResult, error: str | None, *, sandbox: str, **more: Any) -> dict[str, Any]:
    """A probe's record with nothing ACP-specific said: the agent, the error, then `more`."""
    return {
        "agent": result.agent.to_json() if result.agent else None,
        "protocol_version": None,
        "agent_capabilities": {},
        "auth_methods": [],
        "modes": {"current": None, "available": []},
        "config_options": [],
        "error": error,
        "sandbox": sandbox,
        **more,
    }
