"""The Codex provider: every `start` spawns a fresh `codex app-server` and drives one thread of it."""

from __future__ import annotations

from typing import Any

from acp_tui.codex.run import CodexSubagentRun
from acp_tui.core.model import ProviderCapabilities, SubagentRequest
from acp_tui.runs.provider import RunsProvider

__all__ = ["CodexSubagentProvider"]


class CodexSubagentProvider(RunsProvider):
    # `turn/start` takes a JSON Schema for the final message (`outputSchema`); nothing bounds the
    # depth of Codex's own sub-agents or filters its tools from here.
    capabilities = ProviderCapabilities(max_depth=False, tool_filter=False, output_schema=True)

    async def start(self, request: SubagentRequest, *, abort: Any = None) -> CodexSubagentRun:
        run = CodexSubagentRun(self.config, request, self.policy, abort=abort)
        self.keep(run)
        await run.start()
        return run
