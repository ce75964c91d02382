"""acp-tui: supervise delegated ACP subagents, side by side.

The public names of the core are re-exported here, so `from acp_tui import Subagents` is the way in.
"""

from .subagents import (
    AcpProviderConfig,
    AcpSubagentProvider,
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
    Subagents,
    SubagentStopReason,
    UnsupportedCapabilityError,
)

__version__ = "0.1.0"

__all__ = [
    "AcpProviderConfig",
    "AcpSubagentProvider",
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
