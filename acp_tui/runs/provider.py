"""What every provider of runs shares: `RunProvider`, whose every `start` makes a fresh run of one
config (its runs kept, disposed all at once by `aclose`); `ProviderRun`, a run of that config for
one request (`RunInputs`); `Conversation`, what a run speaking another protocol than ACP keeps of its
agent, for its events and its result."""

from __future__ import annotations

import asyncio
import dataclasses
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from acp_tui.core.model import (
    AgentInfo,
    EndedBy,
    PermissionOptionInfo,
    ProviderCapabilities,
    SubagentRequest,
    Usage,
    UsageReported,
)
from acp_tui.policy.ask import PermissionAsk, PermissionPolicy
from acp_tui.policy.names import resolve
from acp_tui.runs.base import RunBase
from acp_tui.runs.tool_calls import ToolCalls
from acp_tui.runs.trace import TraceWriter, open_trace

if TYPE_CHECKING:
    from acp_tui.settings.provider_config import AcpProviderConfig

R = TypeVar("R", bound="ProviderRun")


@dataclasses.dataclass(frozen=True)
class RunInputs:
    """What a run is made of: its provider's config, the request, the policy that answers its
    permission requests, and what aborts it (an event; None: nothing but its own stop)."""

    config: AcpProviderConfig
    request: SubagentRequest
    policy: PermissionPolicy
    abort: Any = None


class RunProvider(Generic[R]):
    # An out-of-process agent cannot honour the parent's depth, tool filter or output schema,
    # unless its protocol carries them (a provider that passes one on says so).
    capabilities = ProviderCapabilities(max_depth=False, tool_filter=False, output_schema=False)

    run_class: type[R]  # what each start makes

    def __init__(self, config: AcpProviderConfig) -> None:
        self.config = config
        chosen = config.permission_policy
        self.policy = resolve(chosen) if isinstance(chosen, str) else chosen
        self._runs: list[RunBase] = []  # its runs, those that ended let go at each start

    def make_run(self, request: SubagentRequest, *, abort: Any) -> R:
        return self.run_class(RunInputs(self.config, request, self.policy, abort))

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
    trace when the config asks for one (`start_trace`), closed once its child has ended; what its
    conversation raised, said in one line (`explain`: the handshake's timeout, the agent gone)."""

    step = "initialize"  # what the conversation waits for: its failure names it

    def __init__(self, inputs: RunInputs, *, cwd: str | None = None) -> None:
        self.config = config = inputs.config
        cwd = cwd or config.cwd_for(inputs.request.cwd)
        self.request = dataclasses.replace(inputs.request, cwd=cwd)
        super().__init__(
            config, inputs.policy, cwd=cwd, abort=inputs.abort, questions=config.question_handler
        )
        self.trace: TraceWriter | None = None

    @property
    def trace_path(self) -> str | None:
        return str(self.trace.path) if self.trace else None

    def untaken(self, agent: str, options: Sequence[str], mcp_servers_from: str) -> str | None:
        """What of the config `agent` does not take, in one line (a `refusal`): an option not among
        `options`, or MCP servers (it reads its own, from `mcp_servers_from`); None when nothing."""
        unknown = sorted(set(self.config.options) - set(options))
        if unknown:
            return f"{agent} takes no option {', '.join(unknown)} (it takes {', '.join(options)})"
        if self.config.mcp_servers:
            return f"{agent} takes its MCP servers from {mcp_servers_from}, not from mcp_servers"
        return None

    def start_trace(self) -> TraceWriter | None:
        """The run's trace (None: not asked for, or not writable), named after its child, if any."""
        self.trace = open_trace(self.config, self.pid, self.stderr.note)
        return self.trace

    async def explain(self, exc: Exception) -> str | None:
        if isinstance(exc, TimeoutError):
            timeout = self.config.handshake_timeout
            unreached = self.child.unreached(timeout) if self.child else None  # a link never up
            return unreached or f"handshake timed out after {timeout:g} s (no answer to {self.step})"
        if isinstance(exc, ConnectionError | OSError | EOFError):
            return await self.why_gone()
        return None

    async def wind_down(self, *, graceful: bool, on_step: Callable[[str], None]) -> EndedBy | None:
        try:
            return await super().wind_down(graceful=graceful, on_step=on_step)
        finally:
            if self.trace is not None:
                self.trace.close()


class Conversation:
    """What a run keeps of its agent's conversation, whatever the protocol: the agent and the
    options it runs with, its session (what a follow-up resumes), its usage, and its tool calls in
    ACP's shape (merged by id, followed as the run's events, each one's kind counted once)."""

    def __init__(self, run: RunBase) -> None:
        self.run = run
        self.agent: AgentInfo | None = None
        self.options: dict[str, str] = {}
        self.session_id: str | None = None
        self.usage: Usage | None = None
        self.tool_calls = ToolCalls()
        self.tool_kinds: Counter[str] = Counter()

    def announce(self, call: Mapping[str, Any]) -> None:
        """A tool call the agent makes, or goes on with (`toolCallId` and `kind`, at least)."""
        if self.tool_calls.get(call["toolCallId"]) is None:
            self.tool_kinds[call["kind"]] += 1
        self.follow(call)

    def follow(self, fields: Mapping[str, Any]) -> None:
        self.run.tool_call_changed(self.tool_calls.merge(fields))

    def ask(self, call: Mapping[str, Any], options: Sequence[PermissionOptionInfo]) -> PermissionAsk:
        """A permission request (`tool_call` fields) as the policy decides it: merged into what
        was announced, and followed."""
        ask = self.tool_calls.ask(call, options, self.run.cwd)
        self.follow({"toolCallId": call["toolCallId"]})
        return ask

    def report(self, usage: Usage) -> None:
        self.usage = usage
        self.run.emit(UsageReported(usage))

    def result_fields(self) -> dict[str, Any]:
        guard = self.run.guard
        return {
            "agent": guard.json(self.agent),
            "options": guard.json(self.options),
            "usage": self.usage,
            "tool_kinds": dict(self.tool_kinds),
            "tool_calls": tuple(guard.json(call) for call in self.tool_calls.all()),
            "session_id": self.session_id,
            "continuation": "resume" if self.session_id else None,
        }
