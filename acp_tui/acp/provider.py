"""The ACP provider: every `start` spawns a fresh child agent and drives it as an ACP client;
`prepare` starts a spare ahead of its run (a warm start), which `AcpHandshake.take` turns into one."""

from __future__ import annotations

import asyncio
from typing import Any

from acp_tui.acp.handshake import AcpHandshake
from acp_tui.acp.run import AcpSubagentRun
from acp_tui.core.model import ProviderCapabilities, SubagentRequest
from acp_tui.policy.names import resolve
from acp_tui.runs.base import RunBase
from acp_tui.settings.provider_config import AcpProviderConfig

__all__ = ["AcpProviderConfig", "AcpSubagentProvider"]


class AcpSubagentProvider:
    # An out-of-process child cannot honour the parent's depth, tool filter or output schema.
    capabilities = ProviderCapabilities(max_depth=False, tool_filter=False, output_schema=False)

    def __init__(self, config: AcpProviderConfig) -> None:
        self.config = config
        chosen = config.permission_policy
        self._policy = resolve(chosen) if isinstance(chosen, str) else chosen
        self._runs: set[RunBase] = set()  # live runs: each leaves the set as it ends
        self._spares: set[AcpHandshake] = set()  # spares no run took (yet)

    async def start(self, request: SubagentRequest, *, abort: Any = None) -> AcpSubagentRun:
        run = AcpSubagentRun(self.config, request, self._policy, abort=abort, on_end=self._runs.discard)
        self._runs.add(run)
        await run.start()
        return run

    async def prepare(self, *, cwd: str, presession: bool = False) -> AcpHandshake:
        """A spare: a child started in `cwd` and taken through `initialize` (and, with
        `presession`, `session/new` and the options), waiting for a run to `take` it."""
        spare = AcpHandshake(self.config, cwd, presession=presession, on_take=self._take)
        self._spares.add(spare)
        await spare.prepare()
        return spare

    def _take(self, spare: AcpHandshake, request: SubagentRequest) -> AcpSubagentRun:
        self._spares.discard(spare)
        run = AcpSubagentRun(self.config, request, self._policy, handshake=spare, on_end=self._runs.discard)
        self._runs.add(run)
        run.begin()
        return run

    @property
    def live(self) -> bool:
        """Whether a run of this provider has yet to end, or a spare to be taken."""
        return bool(self._runs or self._spares)

    async def aclose(self) -> None:
        """Dispose every live run (they end `aborted`) and every spare, all at once."""
        runs, spares = list(self._runs), list(self._spares)
        self._spares.clear()
        await asyncio.gather(*(run.dispose() for run in runs), *(spare.dispose() for spare in spares))
