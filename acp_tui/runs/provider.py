"""What every provider of runs shares: `RunProvider`, whose every `start` makes a fresh run of one
config (its runs kept, disposed all at once by `aclose`), and `ProviderRun`, a run of that config
for one request."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from acp_tui.core.model import EndedBy, ProviderCapabilities, SubagentRequest
from acp_tui.policy.ask import PermissionPolicy
from acp_tui.policy.names import resolve
from acp_tui.runs.base import RunBase
from acp_tui.runs.trace import TraceWriter, open_trace

if TYPE_CHECKING:
    from acp_tui.settings.provider_config import AcpProviderConfig

R = TypeVar("R", bound=RunBase)


class RunProvider(Generic[R]):
    # An out-of-process agent cannot honour the parent's depth, tool filter or output schema,
    # unless its protocol carries them (a provider that passes one on says so).
    capabilities = ProviderCapabilities(max_depth=False, tool_filter=False, output_schema=False)

    def __init__(self, config: AcpProviderConfig) -> None:
        self.config = config
        chosen = config.permission_policy
        self.policy = resolve(chosen) if isinstance(chosen, str) else chosen
        self._runs: list[RunBase] = []  # its runs, those that ended let go at each start

    def make_run(self, request: SubagentRequest, *, abort: Any) -> R:
        raise NotImplementedError

    async def start(self, request: SubagentRequest, *, abort: Any = None) -> R:
        run = self.make_run(request, abort=abort)
        self.keep(run)
        await run.start()
        return run

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


class ProviderRun(RunBase):
    """A run of a provider's config for one request: in `cwd` when given (a spare's), else the
    request's, else the config's, else ours; its limits and secrets the config's; its protocol
    trace when the config asks for one (`start_trace`), closed once its child has ended."""

    def __init__(
        self,
        config: AcpProviderConfig,
        request: SubagentRequest,
        policy: PermissionPolicy,
        *,
        abort: Any = None,
        cwd: str | None = None,
    ) -> None:
        self.config = config
        cwd = cwd or config.cwd_for(request.cwd)
        self.request = dataclasses.replace(request, cwd=cwd)
        super().__init__(config, policy, cwd=cwd, abort=abort, questions=config.question_handler)
        self.trace: TraceWriter | None = None

    @property
    def trace_path(self) -> str | None:
        return str(self.trace.path) if self.trace else None

    def start_trace(self) -> TraceWriter | None:
        """The run's trace (None: not asked for, or not writable), named after its child, if any."""
        self.trace = open_trace(self.config, self.pid, self.stderr.note)
        return self.trace

    async def wind_down(self, *, graceful: bool, on_step: Callable[[str], None]) -> EndedBy | None:
        try:
            return await super().wind_down(graceful=graceful, on_step=on_step)
        finally:
            if self.trace is not None:
                self.trace.close()
