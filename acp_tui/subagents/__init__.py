"""The core's public names: the RFC's subagent seam (`acp_tui.core`), its ACP backend (`acp_tui.acp`)
and the sibling providers (`acp_tui.a2a`, `acp_tui.claude`, `acp_tui.codex`).

Names are loaded on first use, so that a child agent of ours or a short command pays only for what it
touches.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_EXPORTS = {
    "A2aSubagentProvider": "acp_tui.a2a.provider",
    "ClaudeSubagentProvider": "acp_tui.claude.provider",
    "AcpProviderConfig": "acp_tui.acp.provider",
    "AcpSubagentProvider": "acp_tui.acp.provider",
    "CodexSubagentProvider": "acp_tui.codex.provider",
    "AcpSubagentRun": "acp_tui.acp.run",
    "AgentInfo": "acp_tui.core.model",
    "AuthMethodInfo": "acp_tui.core.model",
    "ConfigOptionInfo": "acp_tui.core.model",
    "Cost": "acp_tui.core.model",
    "Finished": "acp_tui.core.model",
    "HiddenUpdate": "acp_tui.core.model",
    "NetworkRefusal": "acp_tui.core.model",
    "NetworkRefused": "acp_tui.core.model",
    "OutputDelta": "acp_tui.core.model",
    "PermissionDecided": "acp_tui.core.model",
    "PermissionOptionInfo": "acp_tui.core.model",
    "PermissionRecord": "acp_tui.core.model",
    "ProviderCapabilities": "acp_tui.core.model",
    "RunEvent": "acp_tui.core.model",
    "SessionStarted": "acp_tui.core.model",
    "StatusChanged": "acp_tui.core.model",
    "StderrLine": "acp_tui.core.model",
    "Stopping": "acp_tui.core.model",
    "SubagentProvider": "acp_tui.core.model",
    "SubagentRequest": "acp_tui.core.model",
    "SubagentResult": "acp_tui.core.model",
    "SubagentRun": "acp_tui.core.model",
    "SubagentStopReason": "acp_tui.core.model",
    "Subagents": "acp_tui.core.registry",
    "UnsupportedCapabilityError": "acp_tui.core.model",
    "Usage": "acp_tui.core.model",
    "UsageReported": "acp_tui.core.model",
    "ToolCallChanged": "acp_tui.core.model",
    "ToolCallInfo": "acp_tui.core.model",
}

if TYPE_CHECKING:
    from acp_tui.a2a.provider import A2aSubagentProvider
    from acp_tui.acp.provider import AcpProviderConfig, AcpSubagentProvider
    from acp_tui.acp.run import AcpSubagentRun
    from acp_tui.claude.provider import ClaudeSubagentProvider
    from acp_tui.codex.provider import CodexSubagentProvider
    from acp_tui.core.model import (
        AgentInfo,
        AuthMethodInfo,
        ConfigOptionInfo,
        Cost,
        Finished,
        HiddenUpdate,
        NetworkRefusal,
        NetworkRefused,
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
        ToolCallChanged,
        ToolCallInfo,
        UnsupportedCapabilityError,
        Usage,
        UsageReported,
    )
    from acp_tui.core.registry import Subagents

__all__ = [
    "A2aSubagentProvider",
    "AcpProviderConfig",
    "AcpSubagentProvider",
    "AcpSubagentRun",
    "AgentInfo",
    "AuthMethodInfo",
    "ClaudeSubagentProvider",
    "CodexSubagentProvider",
    "ConfigOptionInfo",
    "Cost",
    "Finished",
    "HiddenUpdate",
    "NetworkRefusal",
    "NetworkRefused",
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
    "ToolCallChanged",
    "ToolCallInfo",
    "UnsupportedCapabilityError",
    "Usage",
    "UsageReported",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
