"""A provider whose every `start` makes a fresh run of one config (`ProviderRun`): the live runs
kept, disposed all at once by `aclose`."""

from __future__ import annotations

import asyncio
import dataclasses
import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from acp_tui.core.model import ProviderCapabilities, SubagentRequest
from acp_tui.policy.ask import PermissionPolicy
from acp_tui.policy.names import resolve
from acp_tui.runs.base import RunBase
from acp_tui.runs.deadlines import Deadlines

if TYPE_CHECKING:
    from acp_tui.settings.provider_config import AcpProviderConfig


class RunProvider:
    capabilities = ProviderCapabilities()

    def __init__(self, config: AcpProviderConfig) -> None:
        self.config = config
        chosen = config.permission_policy
        self.policy = resolve(chosen) if isinstance(chosen, str) else chosen
        self._live: set[RunBase] = set()

    def make_run(self, request: SubagentRequest, *, abort: Any, on_end: Callable[[RunBase], None]) -> RunBase:
        raise NotImplementedError

    async def start(self, request: SubagentRequest, *, abort: Any = None) -> RunBase:
        run = self.make_run(request, abort=abort, on_end=self._live.discard)
        self._live.add(run)
        await run.start()
        return run

    @property
    def live(self) -> bool:
        """Whether a run of this provider has yet to end."""
        return bool(self._live)

    async def aclose(self) -> None:
        """Dispose every live run (they end `aborted`)."""
        runs, self._live = list(self._live), set()
        await asyncio.gather(*(run.dispose() for run in runs))


class ProviderRun(RunBase):
    """A run of a provider's config: in the request's cwd (else the config's, else ours), with the
    config's secrets masked, its clocks, its cap on the answer and its graces."""

    def __init__(
        self,
        config: AcpProviderConfig,
        request: SubagentRequest,
        policy: PermissionPolicy,
        *,
        abort: Any = None,
        on_end: Callable[[RunBase], None] = lambda run: None,
    ) -> None:
        self.config = config
        cwd = request.cwd or config.cwd or os.getcwd()
        self.request = dataclasses.replace(request, cwd=cwd)
        super().__init__(
            cwd=cwd,
            secrets=config.secrets(),
            policy=policy,
            deadlines=Deadlines(
                handshake=config.handshake_timeout,
                cancel_grace=config.cancel_grace,
                run_timeout=config.run_timeout,
                idle_timeout=config.idle_timeout,
            ),
            max_output_chars=config.max_output_chars,
            term_grace=config.term_grace,
            abort=abort,
            on_end=on_end,
        )
