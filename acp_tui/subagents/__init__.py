"""The core: the RFC's subagent seam and its ACP backend. Never imports textual.

Names are loaded on first use, so that a child agent of ours or a short command pays only for what it
touches.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_EXPORTS = {
    "AcpProviderConfig": ".acp.provider",
    "AcpSubagentProvider": ".acp.provider",
    "AcpSubagentRun": ".acp.run",
    "AgentInfo": ".model",
    "AuthMethodInfo": ".model",
    "ConfigOptionInfo": ".model",
    "Cost": ".model",
    "Finished": ".model",
    "HiddenUpdate": ".model",
    "OutputDelta": ".model",
    "PermissionDecided": ".model",
    "PermissionOptionInfo": ".model",
    "PermissionRecord": ".model",
    "ProviderCapabilities": ".model",
    "RunEvent": ".model",
    "SessionStarted": ".model",
    "StatusChanged": ".model",
    "StderrLine": ".model",
    "Stopping": ".model",
    "SubagentProvider": ".model",
    "SubagentRequest": ".model",
    "SubagentResult": ".model",
    "SubagentRun": ".model",
    "SubagentStopReason": ".model",
    "Subagents": ".registry",
    "UnsupportedCapabilityError": ".model",
    "Usage": ".model",
    "UsageReported": ".model",
}

if TYPE_CHECKING:
    from .acp.provider import (
        AcpProviderConfig,
        AcpSubagentProvider,
    )
    from .acp.run import (
        AcpSubagentRun,
    )
    from .model import (
        AgentInfo,
        AuthMethodInfo,
        ConfigOptionInfo,
        Cost,
        Finished,
        HiddenUpdate,
        OutputDelta,
        PermissionDecided,
        PermissionOptionInfo,
        PermissionRecord,
        ProviderCapabilities,
        RunEvent,
        SessionStarted,
        StatusChanged,
        StderrLine,
        Stopping,
        SubagentProvider,
        SubagentRequest,
        SubagentResult,
        SubagentRun,
        SubagentStopReason,
        UnsupportedCapabilityError,
        Usage,
        UsageReported,
    )
    from .registry import (
        Subagents,
    )

__all__ = [
    "AcpProviderConfig",
    "AcpSubagentProvider",
    "AcpSubagentRun",
    "AgentInfo",
    "AuthMethodInfo",
    "ConfigOptionInfo",
    "Cost",
    "Finished",
    "HiddenUpdate",
    "OutputDelta",
    "PermissionDecided",
    "PermissionOptionInfo",
    "PermissionRecord",
    "ProviderCapabilities",
    "RunEvent",
    "SessionStarted",
    "StatusChanged",
    "StderrLine",
    "Stopping",
    "SubagentProvider",
    "SubagentRequest",
    "SubagentResult",
    "SubagentRun",
    "SubagentStopReason",
    "Subagents",
    "UnsupportedCapabilityError",
    "Usage",
    "UsageReported",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value
