"""The Codex provider: every `start` spawns a fresh `codex app-server` and drives one thread of it."""

from __future__ import annotations

import asyncio
from typing import Any

from acp_tui.codex.run import CodexSubagentRun
from acp_tui.core.model import ProviderCapabilities, SubagentRequest
from acp_tui.policy.names import resolve
from acp_tui.runs.base import RunBase
from acp_tui.settings.provider_config import AcpProviderConfig

__all__ = ["CodexSubagentProvider"]


class CodexSubagentProvider:
    # `turn/start` takes a JSON Schema for the final message (`outputSchema`); nothing bounds the
    # depth of Codex's own sub-agents or filters its tools from here.
    capabilities = ProviderCapabilities(max_depth=False, tool_filter=False, output_schema=True)

    def __init__(self, config: AcpProviderConfig) -> None:
        self.config = config
        chosen = config.permission_policy
        self._policy = resolve(chosen) if isinstance(chosen, str) else chosen
        self._runs: list[RunBase] = []  # its runs, those that ended let go at each start

    async def start(self, request: SubagentRequest, *, abort: Any = None) -> CodexSubagentRun:
        run = CodexSubagentRun(self.config, request, self._policy, abort=abort)
        self._runs = [*(kept for kept in self._runs if not kept.done()), run]
        await run.start()
        return run

    @property
    def live(self) -> bool:
        """Whether a run of this provider has yet to end."""
        return not all(run.done() for run in self._runs)

    async def aclose(self) -> None:
        """Dispose every live run (they end `aborted`), all at once."""
        runs, self._runs = self._runs, []
        await asyncio.gather(*(run.dispose() for run in runs))
