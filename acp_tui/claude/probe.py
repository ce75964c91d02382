"""`acp-tui probe` for a Claude preset: start Claude Code in an empty temporary directory, take it
through `initialize`, say what it is and offers (its models, its permission modes), and dispose it.
No prompt is ever sent.

The record has the ACP probe's keys: the models and the permission modes are its config options,
`model` and `mode`."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from acp_tui.claude.run import ClaudeSubagentRun
from acp_tui.core.model import SubagentStopReason
from acp_tui.runs.probe import probe_record, probed, run_keys
from acp_tui.runs.talk import Outcome

if TYPE_CHECKING:
    from claude_agent_sdk import ClaudeSDKClient

    from acp_tui.settings.provider_config import AcpProviderConfig


class ProbeRun(ClaudeSubagentRun):
    """A run whose turn is never taken: Claude Code is initialized, then the run ends."""

    async def prompt(self, client: ClaudeSDKClient) -> Outcome:
        return SubagentStopReason.COMPLETED, None


async def describe_claude(
    config: AcpProviderConfig, on_stderr: Callable[[str], object] = lambda _: None
) -> tuple[dict[str, Any], bool]:
    """The probe's record of Claude Code, and whether it was initialized."""
    run, result, error = await probed(ProbeRun, config, on_stderr)
    stream = run.turn_stream
    offered = run.guard.json(stream.offered)
    record = probe_record(result.agent, error, offered=offered, commands=stream.commands)
    return {**record, **run_keys(config)}, stream.agent is not None and error is None
