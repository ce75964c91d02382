"""The Codex provider: every `start` spawns a fresh `codex app-server` and drives one thread of it
(see `acp_tui.codex.run`)."""

from __future__ import annotations

from acp_tui.codex.run import CodexSubagentRun
from acp_tui.core.model import ProviderCapabilities
from acp_tui.runs.provider import RunProvider


class CodexSubagentProvider(RunProvider[CodexSubagentRun]):
    run_class = CodexSubagentRun
    # `turn/start` takes a JSON Schema for the final message (`outputSchema`); nothing bounds the
    # depth of Codex's own sub-agents or filters its tools from here.
    capabilities = ProviderCapabilities(max_depth=False, tool_filter=False, output_schema=True)
