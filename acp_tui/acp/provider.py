"""The ACP provider: every `start` spawns a fresh child agent and drives it as an ACP client;
`prepare` starts a spare ahead of its run (a warm start), which `AcpHandshake.take` turns into one."""

from __future__ import annotations

import asyncio

from acp_tui.acp.handshake import AcpHandshake
from acp_tui.acp.run import AcpSubagentRun
from acp_tui.core.model import SubagentRequest
from acp_tui.runs.provider import RunInputs, RunProvider
from acp_tui.settings.provider_config import AcpProviderConfig

__all__ = ["AcpProviderConfig", "AcpSubagentProvider"]


class AcpSubagentProvider(RunProvider[AcpSubagentRun]):
    run_class = AcpSubagentRun

    def __init__(self, config: AcpProviderConfig) -> None:
        super().__init__(config)
        self._spares: set[AcpHandshake] = set()  # spares no run took (yet)

    async def prepare(self, *, cwd: str, presession: bool = False) -> AcpHandshake:
        """A spare: a child started in `cwd` and taken through `initialize` (and, with
        `presession`, `session/new` and the options), waiting for a run to `take` it."""
        spare = AcpHandshake(self.config, cwd, presession=presession, on_take=self._take)
        self._spares.add(spare)
        await spare.prepare()
        return spare

    def _take(self, spare: AcpHandshake, request: SubagentRequest) -> AcpSubagentRun:
        self._spares.discard(spare)
        run = AcpSubagentRun(RunInputs(self.config, request, self.policy), handshake=spare)
        self.keep(run)
        run.begin()
        return run

    @property
    def live(self) -> bool:
        """Whether a run of this provider has yet to end, or a spare to be taken."""
        return bool(self._spares) or super().live

    async def aclose(self) -> None:
        """Dispose every live run (they end `aborted`) and every spare, all at once."""
        spares = list(self._spares)
        self._spares.clear()
        await asyncio.gather(super().aclose(), *(spare.dispose() for spare in spares))
