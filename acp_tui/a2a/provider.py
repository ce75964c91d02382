"""The A2A provider: every `start` sends the prompt, as a new task, to the agent at the config's
`url` (see `acp_tui.a2a.run`)."""

from __future__ import annotations

from acp_tui.a2a.run import A2aSubagentRun
from acp_tui.core.model import ProviderCapabilities
from acp_tui.runs.provider import RunProvider


class A2aSubagentProvider(RunProvider[A2aSubagentRun]):
    run_class = A2aSubagentRun
    # A2A carries a message and its parts: no depth, tool filter or output schema the agent must honour.
    capabilities = ProviderCapabilities(max_depth=False, tool_filter=False, output_schema=False)
