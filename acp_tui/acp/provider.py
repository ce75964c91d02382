"""The ACP provider: every `start` spawns a fresh child agent and drives it as an ACP client."""

from __future__ import annotations

import asyncio
from typing import Any

from acp_tui.acp.run import AcpSubagentRun
from acp_tui.core.model import ProviderCapabilities, SubagentRequest
from acp_tui.policy.names import resolve
from acp_tui.settings.provider_config import AcpProviderConfig

__all__ = ["AcpProviderConfig", "AcpSubagentProvider"]


class AcpSubagentProvider:
    # An out-of-process child cannot honour the parent's depth, tool filter or output schema.
    capabilities = ProviderCapabilities(max_depth=False, tool_filter=False, output_schema=False)

    def __init__(self, config: AcpProviderConfig) -> None:
        self.config = config
        chosen = config.permission_policy
        self._policy = resolve(chosen) if isinstance(chosen, str) else chosen
        self._live: set[AcpSubagentRun] = set()

    async def start(self, request: SubagentRequest, *, abort: Any = None) -> AcpSubagentRun:
        return await self._started(AcpSubagentRun(self.config, request, self._policy, abort=abort))

    async def prepare(self, *, cwd: str, presession: bool = False) -> AcpSubagentRun:
        """A spare: a child started in `cwd` and taken through `initialize` (and, with
        `presession`, `session/new` and the options), waiting for a run to `take` it."""
        return await self._started(
            AcpSubagentRun(self.config, None, self._policy, cwd=cwd, presession=presession)
        )

    async def _started(self, run: AcpSubagentRun) -> AcpSubagentRun:
        self._live.add(run)
        await run.start()
        if run.done():
            self._live.discard(run)
        else:
            asyncio.ensure_future(run.result()).add_done_callback(lambda _: self._live.discard(run))
        return run

    @property
    def live(self) -> bool:
        """Whether a run of this provider has yet to end."""
        return bool(self._live)

    async def aclose(self) -> None:
        """Dispose every live run (they end `aborted`)."""
        runs, self._live = list(self._live), set()
        await asyncio.gather(*(run.dispose() for run in runs))
