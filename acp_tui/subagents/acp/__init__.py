"""The ACP subagent backend: each run is a child process driven over stdio as an ACP client."""

from .permissions import AskPolicy, FixedPolicy, PermissionAsk, PermissionChoice, Rule, RulePolicy
from .provider import AcpProviderConfig, AcpSubagentProvider
from .run import AcpSubagentRun

__all__ = [
    "AcpProviderConfig",
    "AcpSubagentProvider",
    "AcpSubagentRun",
    "AskPolicy",
    "FixedPolicy",
    "PermissionAsk",
    "PermissionChoice",
    "Rule",
    "RulePolicy",
]
