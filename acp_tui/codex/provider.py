"""The Codex provider: every `start` spawns a fresh `codex app-server` and drives one thread of it
(see `acp_tui.codex.run`)."""

from __future__ import annotations

from typing import Any

from acp_tui.codex.run import CodexSubagentRun
from acp_tui.core.model import ProviderCapabilities, SubagentRequest
from acp_tui.runs.provider import RunProvider


class CodexSubagentProvider(RunProvider[CodexSubagentRun]):
    # `turn/start` takes a JSON Schema for the final message (`outputSchema`); nothing bounds the
    # depth of Codex's own sub-agents or filters its tools from here.
    capabilities = ProviderCapabilities(max_depth=False, tool_filter=False, output_schema=True)

    def make_run(self, request: SubagentRequest, *, abort: Any) -> CodexSubagentRun:
        return CodexSubagentRun(self.config, request, self.policy, abort=abort)
