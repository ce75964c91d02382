"""The provider a preset's runs start with, by the preset's `provider` (imported when first used)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from acp_tui.settings.schema import not_available

if TYPE_CHECKING:
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
