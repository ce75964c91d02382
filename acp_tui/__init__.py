"""acp-tui: supervise delegated ACP subagents (and Codex threads), side by side.

The public names of the core are re-exported here, so `from acp_tui import Subagents` is the way in.
They load on first use: `python -m acp_tui.demo.agent` and `acp-tui run` pay only for what they use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"


if TYPE_CHECKING:
    from acp_tui.a2a.provider import A2aSubagentProvider
    from acp_tui.acp.provider import AcpProviderConfig, AcpSubagentProvider
    from acp_tui.claude.provider import ClaudeSubagentProvider
    from acp_tui.codex.provider import CodexSubagentProvider
    from acp_tui.core.model import (
        Finished,
        HiddenUpdate,
        OutputDelta,
        PermissionDecided,
        PermissionRecord,
        ProviderCapabilities,
        StatusChanged,
        StderrLine,
        SubagentRequest,
        SubagentResult,
        SubagentRun,
        SubagentStopReason,
        UnsupportedCapabilityError,
    )
    from acp_tui.core.registry import Subagents

__all__ = [
    "A2aSubagentProvider",
    "AcpProviderConfig",
    "AcpSubagentProvider",
    "ClaudeSubagentProvider",
    "CodexSubagentProvider",
    "Finished",
    "HiddenUpdate",
    "OutputDelta",
    "PermissionDecided",
    "PermissionRecord",
    "ProviderCapabilities",
    "StatusChanged",
    "StderrLine",
    "SubagentRequest",
    "SubagentResult",
    "SubagentRun",
    "SubagentStopReason",
    "Subagents",
    "UnsupportedCapabilityError",
    "__version__",
]


def __getattr__(name: str) -> Any:
    if name not in __all__ or name == "__version__":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from acp_tui import subagents

    value = getattr(subagents, name)
    globals()[name] = value
    return value
