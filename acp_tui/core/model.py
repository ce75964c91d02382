"""What flows through the seam: requests, results, stop reasons, capabilities and run events.

Plain dataclasses on purpose: this module is imported before any child is spawned, so it must cost
nothing (no pydantic, no ACP SDK).
"""

from __future__ import annotations

import enum
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeAlias

if TYPE_CHECKING:
    from acp_tui.core.elicitation import ElicitationRecord


class SubagentStopReason(enum.StrEnum):
    COMPLETED = "completed"
    MAX_TOKENS = "max-tokens"
    REFUSAL = "refusal"
    ABORTED = "aborted"
    ERROR = "error"


def stop_word(reason: str) -> str:
    """How a stop reason reads on the screen: one word for a run that was stopped before it ended,
    `cancelled` (the records keep the RFC's `aborted`)."""
    return "cancelled" if reason == SubagentStopReason.ABORTED else reason


# `cancelling`: dispose (or the abort event) was asked for while the run was live.
RunStatus: TypeAlias = Literal["spawning", "initializing", "prompting", "cancelling", "finished"]
# The steps of ending a live run, as they happen: `session/cancel` sent, SIGTERM to the group (and
# every process carrying the run's mark), SIGKILL to what was left.
StopStep: TypeAlias = Literal["cancel-sent", "sigterm", "sigkill"]
# How the child's processes ended: by themselves (after stdin closed, or honouring the cancel), or
# signalled. None: nothing was ever spawned.
EndedBy: TypeAlias = Literal["exit", "sigterm", "sigkill"]
# How a session is continued in a fresh child: `session/resume`, else `session/load`.
Continuation: TypeAlias = Literal["resume", "load"]


@dataclass(frozen=True)
class SubagentRequest:
    """One task for one subagent. The three asks are start-time capabilities a provider may lack."""

    prompt: str
    cwd: str | None = None
    # The agent's session to continue (a follow-up): reached again by `session/resume`, else
    # `session/load`, in a fresh child; None: a new session.
    session_id: str | None = None
    max_depth: int | None = None
    tool_filter: Any = None
    output_schema: Any = None


@dataclass(frozen=True)
class ProviderCapabilities:
    max_depth: bool = False
    tool_filter: bool = False
    output_schema: bool = False


class UnsupportedCapabilityError(ValueError):
    """The request asks for a start-time capability the provider does not have."""

    def __init__(self, provider: str, capability: str) -> None:
        super().__init__(f"provider {provider!r} does not support the {capability!r} capability")
        self.provider = provider
        self.capability = capability


@dataclass(frozen=True)
class PermissionOptionInfo:
    option_id: str
    name: str
    kind: str


@dataclass(frozen=True)
class PermissionRecord:
    """One permission request and how it was answered."""

    title: str
    kind: str | None
    options: tuple[PermissionOptionInfo, ...]
    decision: str  # the chosen option's kind, or "cancelled"
    option_id: str | None
    rule: str  # what decided: "reject", "allow", a rule's name, or "cancelled"
    at: float  # seconds since the run started
    content: str = ""  # the tool call's content or diff, as text, when the agent sent one
    # What a rule needs to decide again later (the policy lab's dry-run): the tool call's raw input
    # as the agent sent it (JSON-shaped, masked) and the paths of its `locations`.
    raw_input: Any = None
    locations: tuple[str, ...] = ()
    waited_s: float = 0.0  # from the request to its answer (a person deciding takes a while)


@dataclass(frozen=True)
class NetworkRefusal:
    """A connection a confined agent tried to a host its preset does not open (`sandbox_network`)."""

    host: str  # as the agent named it
    port: int
    at: float  # seconds since the run started


@dataclass(frozen=True)
class ToolCallInfo:
    """A tool call as it stands (`acp_tui.runs.tool_calls` merges it): its fields so far, and when it
    started and ended (`time.monotonic()`)."""

    id: str
    title: str | None
    kind: str | None
    status: str  # pending | in_progress | completed | failed
    raw_input: Any
    paths: tuple[str, ...]  # its locations, then the paths of its `diff` content
    content: str  # as a person reads it (see `content_text`)
    started_at: float
    ended_at: float | None

    @property
    def failed(self) -> bool:
        return self.status == "failed"

    @property
    def label(self) -> str:
        """Its title, else what it is: never a bare id (a uuid tells a person nothing)."""
        return self.title or f"an untitled {self.kind or 'tool'} call"

    @property
    def duration_s(self) -> float | None:
        return None if self.ended_at is None else self.ended_at - self.started_at


@dataclass(frozen=True)
class Cost:
    amount: float
    currency: str


@dataclass(frozen=True)
class Usage:
    """The last `usage_update` of a session: context tokens used of `size`, and the cost so far."""

    used: int
    size: int
    cost: Cost | None = None


@dataclass(frozen=True)
class AgentInfo:
    """The child's `agentInfo` from `initialize`."""

    name: str
    title: str | None = None
    version: str | None = None


@dataclass(frozen=True)
class AuthMethodInfo:
    """One of the `authMethods` an agent advertised. `type`: `agent`, `env_var`, `terminal`, ..."""

    id: str
    name: str
    description: str | None = None
    type: str | None = None
    vars: tuple[str, ...] = ()  # for `env_var`: the variables the agent reads
    args: tuple[str, ...] = ()  # for `terminal`: what to add to the agent's command line to log in


@dataclass(frozen=True)
class ConfigOptionInfo:
    """A session config option as the agent offers it: `values` are the value ids (`true`/`false`
    for a boolean option). Agents with modes only get one, `mode`, made from their modes."""

    id: str
    name: str
    category: str | None
    current: str
    values: tuple[str, ...]
    type: Literal["select", "boolean"] = "select"  # a boolean option is a switch: on or off


@dataclass(frozen=True)
class CommandInfo:
    """A slash command the agent offers (`available_commands_update`): the person types
    `/name args` in the prompt, and it goes to the agent as that text."""

    name: str
    description: str
    hint: str | None = None  # what to type after the name, when the command takes input


@dataclass(frozen=True)
class AgentSessionInfo:
    """One of the sessions an agent keeps (`session/list`); `updated` as the agent wrote it (ISO 8601)."""

    session_id: str
    cwd: str
    title: str | None = None
    updated: str | None = None


@dataclass(frozen=True)
class SubagentResult:
    stop_reason: SubagentStopReason
    output: str
    error: str | None = None
    exit_code: int | None = None
    hidden: dict[str, int] = field(default_factory=dict)
    permissions: list[PermissionRecord] = field(default_factory=list)
    duration_s: float = 0.0
    stderr_tail: list[str] = field(default_factory=list)
    # The answer is incomplete: it hit the run's cap, or a message too large to read was dropped.
    truncated: bool = False
    ended_by: EndedBy | None = None
    agent: AgentInfo | None = None
    options: dict[str, str] = field(default_factory=dict)  # config option id -> current value id
    usage: Usage | None = None
    auth_methods: tuple[AuthMethodInfo, ...] = ()
    # Tool kinds (`edit`, `execute`, ...) of the tool calls the agent announced, counted: a run that
    # edited without one permission request had a policy with nothing to decide.
    tool_kinds: dict[str, int] = field(default_factory=dict)
    tool_calls: tuple[ToolCallInfo, ...] = ()  # every tool call as it stood at the end
    session_id: str | None = None  # the agent's session (a follow-up can continue it)
    # How the agent's session can be reached again: `resume`, `load`, or None (it offers neither).
    continuation: Continuation | None = None
    # The connections the sandbox refused (a host list in `sandbox_network`), the first ones.
    network_refused: tuple[NetworkRefusal, ...] = ()
    # The agent's questions to the person (`elicitation/create`), each with its answer.
    elicitations: tuple[ElicitationRecord, ...] = ()


# Run events: what a pane or the headless printer consumes, in order, ending with Finished.


@dataclass(frozen=True)
class StatusChanged:
    status: RunStatus


@dataclass(frozen=True)
class OutputDelta:
    text: str


@dataclass(frozen=True)
class HiddenUpdate:
    kind: str


@dataclass(frozen=True)
class PermissionDecided:
    record: PermissionRecord


@dataclass(frozen=True)
class StderrLine:
    text: str


@dataclass(frozen=True)
class Stopping:
    """A step of ending a live run (see `StopStep`), as it happens."""

    step: StopStep


@dataclass(frozen=True)
class SessionStarted:
    """The session exists and our options are set: who the agent is and how it is configured."""

    agent: AgentInfo | None
    options: dict[str, str]
    auth_methods: tuple[AuthMethodInfo, ...] = ()
    offered: tuple[ConfigOptionInfo, ...] = ()  # what a chooser may offer for the next runs


@dataclass(frozen=True)
class UsageReported:
    usage: Usage


@dataclass(frozen=True)
class ToolCallChanged:
    """A tool call was announced or changed (its card is hidden from the answer, not lost)."""

    call: ToolCallInfo


@dataclass(frozen=True)
class NetworkRefused:
    """The sandbox refused a connection of the agent's (see `NetworkRefusal`)."""

    refusal: NetworkRefusal


@dataclass(frozen=True)
class CommandsOffered:
    """The slash commands the agent offers now (`available_commands_update`), as it last said."""

    commands: tuple[CommandInfo, ...]


@dataclass(frozen=True)
class QuestionAnswered:
    """An agent's question to the person was answered (or declined, or cancelled)."""

    record: ElicitationRecord


@dataclass(frozen=True)
class Finished:
    result: SubagentResult


RunEvent: TypeAlias = (
    StatusChanged
    | OutputDelta
    | HiddenUpdate
    | PermissionDecided
    | StderrLine
    | Stopping
    | SessionStarted
    | UsageReported
    | ToolCallChanged
    | NetworkRefused
    | CommandsOffered
    | QuestionAnswered
    | Finished
)


class SubagentRun(Protocol):
    """One delegated task: a handle the caller watches, awaits and disposes."""

    def events(self) -> AsyncIterator[RunEvent]: ...

    async def result(self) -> SubagentResult: ...

    async def dispose(self, reason: str | None = None) -> None: ...


class SubagentProvider(Protocol):
    capabilities: ProviderCapabilities

    async def start(self, request: SubagentRequest, *, abort: Any = None) -> SubagentRun: ...

    async def aclose(self) -> None: ...
