"""The Claude provider: every `start` starts a fresh Claude Code, driven by the Claude Agent SDK
(see `acp_tui.claude.run`)."""

from __future__ import annotations

from acp_tui.claude.run import ClaudeSubagentRun
from acp_tui.core.model import ProviderCapabilities
from acp_tui.runs.provider import RunProvider


class ClaudeSubagentProvider(RunProvider[ClaudeSubagentRun]):
    run_class = ClaudeSubagentRun
    # Claude Code has tool filters and structured output of its own, but this provider passes
    # neither on yet: it claims none.
    capabilities = ProviderCapabilities(max_depth=False, tool_filter=False, output_schema=False)
