"""What a provider of child-process runs keeps, whatever its protocol: its config, its permission
policy (a name resolved once), and its runs, those that ended let go at each start; `live` and
`aclose` (every run disposed, all at once) over them."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from acp_tui.policy.names import resolve

if TYPE_CHECKING:
    from acp_tui.runs.base import RunBase
    from acp_tui.settings.provider_config import AcpProviderConfig


class RunsProvider:
    def __init__(self, config: AcpProviderConfig) -> None:
        self.config = config
        chosen = config.permission_policy
        self.policy = resolve(chosen) if isinstance(chosen, str) else chosen
        self._runs: list[RunBase] = []

    def keep(self, run: RunBase) -> None:
        self._runs = [*(kept for kept in self._runs if not kept.done()), run]

    @property
    def live(self) -> bool:
        """Whether a run of this provider has yet to end."""
        return not all(run.done() for run in self._runs)

    async def aclose(self) -> None:
        """Dispose every live run (they end `aborted`), all at once."""
        runs, self._runs = self._runs, []
        await asyncio.gather(*(run.dispose() for run in runs))
