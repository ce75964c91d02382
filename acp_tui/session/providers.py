"""What a preset's `provider` picks: the provider its runs start with, and how `acp-tui probe` (and
the app's agents screen) describes its agent. Each is imported when first used."""

from __future__ import annotations

from typing import TYPE_CHECKING

from acp_tui.settings.schema import not_available

if TYPE_CHECKING:
    from acp_tui.acp.probe import Describe
    from acp_tui.core.model import SubagentProvider
    from acp_tui.settings.provider_config import AcpProviderConfig


def provider_for(provider: str, config: AcpProviderConfig) -> SubagentProvider:
    """A provider of that name for `config`; ValueError, in one line, for one not built yet."""
    if provider == "acp":
        from acp_tui.acp.provider import AcpSubagentProvider

        return AcpSubagentProvider(config)
    if provider == "codex":
        from acp_tui.codex.provider import CodexSubagentProvider

        return CodexSubagentProvider(config)
    raise ValueError(not_available(provider))


def describer_for(provider: str) -> Describe:
    """How an agent of that provider is probed; ValueError, in one line, for one not built yet."""
    if provider == "acp":
        from acp_tui.acp.probe import describe_agent

        return describe_agent
    if provider == "codex":
        from acp_tui.codex.probe import describe_codex

        return describe_codex
    raise ValueError(not_available(provider))
