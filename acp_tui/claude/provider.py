"""The Claude provider: every `start` starts a fresh Claude Code, driven by the Claude Agent SDK
(see `acp_tui.claude.run`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from acp_tui.claude.run import ClaudeSubagentRun
from acp_tui.core.model import ProviderCapabilities, SubagentRequest
from acp_tui.runs.base import RunBase
from acp_tui.runs.provider import RunProvider


class ClaudeSubagentProvider(RunProvider):
    # Claude Code has tool filters and structured output of its own, but this provider passes
    # neither on yet: it claims none.
    capabilities = ProviderCapabilities(max_depth=False, tool_filter=False, output_schema=False)

    def make_run(self, request: SubagentRequest, *, abort: Any, on_end: Callable[[RunBase], None]) -> RunBase:
        return ClaudeSubagentRun(self.config, request, self.policy, abort=abort, on_end=on_end)
