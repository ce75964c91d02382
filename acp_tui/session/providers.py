"""The provider of a config, by the name its preset says it speaks (`provider`): each registers in
the seam under that name's class, imported only when a run of it is made."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from acp_tui.core.model import SubagentProvider
    from acp_tui.settings.provider_config import AcpProviderConfig


def provider_for(config: AcpProviderConfig) -> SubagentProvider:
    if config.provider == "a2a":
        from acp_tui.a2a.provider import A2aSubagentProvider

        return A2aSubagentProvider(config)
    if config.provider == "claude":
        from acp_tui.claude.provider import ClaudeSubagentProvider

        return ClaudeSubagentProvider(config)
    from acp_tui.acp.provider import AcpSubagentProvider

    return AcpSubagentProvider(config)
