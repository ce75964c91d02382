"""What flows through the seam: requests, results, stop reasons, capabilities and run events.

Plain dataclasses on purpose: this module is imported before any child is spawned, so it must cost
nothing (no pydantic, no ACP SDK).
"""

from __future__ import annotations

import enum
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, TypeAlias


class SubagentStopReason(enum.StrEnum):
    COMPLETED = "completed"
    MAX_TOKENS = "max-tokens"
    REFUSAL = "refusal"
    ABORTED = "aborted"
    ERROR = "error"


RunStatus: TypeAlias = Literal["spawning", "initializing", "prompting", "finished"]


@dataclass(frozen=True)
class SubagentRequest:
    """One task for one subagent. The three asks are start-time capabilities a provider may lack."""

    prompt: str
    cwd: str | None = None
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

    def to_json(self) -> dict[str, Any]:
        return {
            "title": self.title,
            "kind": self.kind,
            "options": [{"option_id": o.option_id, "name": o.name, "kind": o.kind} for o in self.options],
            "decision": self.decision,
            "option_id": self.option_id,
            "rule": self.rule,
            "at": round(self.at, 3),
        }


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
class Finished:
    result: SubagentResult


RunEvent: TypeAlias = StatusChanged | OutputDelta | HiddenUpdate | PermissionDecided | StderrLine | Finished


class SubagentRun(Protocol):
    """One delegated task: a handle the caller watches, awaits and disposes."""

    def events(self) -> AsyncIterator[RunEvent]: ...

    async def result(self) -> SubagentResult: ...

    async def dispose(self, reason: str | None = None) -> None: ...


class SubagentProvider(Protocol):
    capabilities: ProviderCapabilities

    async def start(self, request: SubagentRequest, *, abort: Any = None) -> SubagentRun: ...

    async def aclose(self) -> None: ...
