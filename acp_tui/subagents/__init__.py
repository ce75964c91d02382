"""The core: the RFC's subagent seam and its ACP backend. Never imports textual."""

from .acp import AcpProviderConfig, AcpSubagentProvider, AcpSubagentRun
from .model import (
    Finished,
    HiddenUpdate,
    OutputDelta,
    PermissionDecided,
    PermissionOptionInfo,
    PermissionRecord,
    ProviderCapabilities,
    RunEvent,
    StatusChanged,
    StderrLine,
    SubagentProvider,
    SubagentRequest,
    SubagentResult,
    SubagentRun,
    SubagentStopReason,
    UnsupportedCapabilityError,
)
from .registry import Subagents

__all__ = [
    "AcpProviderConfig",
    "AcpSubagentProvider",
    "AcpSubagentRun",
    "Finished",
    "HiddenUpdate",
    "OutputDelta",
    "PermissionDecided",
    "PermissionOptionInfo",
    "PermissionRecord",
    "ProviderCapabilities",
    "RunEvent",
    "StatusChanged",
    "StderrLine",
    "SubagentProvider",
    "SubagentRequest",
    "SubagentResult",
    "SubagentRun",
    "SubagentStopReason",
    "Subagents",
    "UnsupportedCapabilityError",
]
