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
        self._runs: list[RunBase] = []  # its runs, those that ended let go at each start
        self._spares: set[AcpHandshake] = set()  # spares no run took (yet)

    async def start(self, request: SubagentRequest, *, abort: Any = None) -> AcpSubagentRun:
        run = AcpSubagentRun(self.config, request, self._policy, abort=abort)
        self._keep(run)
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
        run = AcpSubagentRun(self.config, request, self._policy, handshake=spare)
        self._keep(run)
        run.begin()
        return run

    def _keep(self, run: RunBase) -> None:
        self._runs = [*(kept for kept in self._runs if not kept.done()), run]

    @property
    def live(self) -> bool:
        """Whether a run of this provider has yet to end, or a spare to be taken."""
        return bool(self._spares) or not all(run.done() for run in self._runs)

    async def aclose(self) -> None:
        """Dispose every live run (they end `aborted`) and every spare, all at once."""
        runs, spares = self._runs, list(self._spares)
        self._runs = []
        self._spares.clear()
        await asyncio.gather(*(run.dispose() for run in runs), *(spare.dispose() for spare in spares))
