"""What a preset's `provider` picks: the provider its runs start with (each one's class among the
public names, `acp_tui.subagents`), and how `acp-tui probe` and the app's agents screen describe its
agent. Each is loaded, with its protocol's SDK, on first use."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from acp_tui.acp.probe import Describe
    from acp_tui.core.model import SubagentProvider
    from acp_tui.settings.provider_config import AcpProviderConfig
    from acp_tui.settings.schema import Provider

# A provider's name (a preset's `provider`) -> its class's public name.
PROVIDERS: dict[Provider, str] = {
    "acp": "AcpSubagentProvider",
    "a2a": "A2aSubagentProvider",
    "claude": "ClaudeSubagentProvider",
    "codex": "CodexSubagentProvider",
}
# A provider's name -> how its agent is probed: (module, function).
DESCRIBERS: dict[Provider, tuple[str, str]] = {
    "acp": ("acp_tui.acp.probe", "describe_agent"),
    "a2a": ("acp_tui.a2a.probe", "describe_a2a"),
    "claude": ("acp_tui.claude.probe", "describe_claude"),
    "codex": ("acp_tui.codex.probe", "describe_codex"),
}


def provider_for(provider: Provider, config: AcpProviderConfig) -> SubagentProvider:
    """A provider of that name for `config`."""
    from acp_tui import subagents

    make: Callable[[AcpProviderConfig], SubagentProvider] = getattr(subagents, PROVIDERS[provider])
    return make(config)


def describer_for(provider: Provider) -> Describe:
    """How an agent of that provider is probed."""
    module, function = DESCRIBERS[provider]
    describe: Describe = getattr(importlib.import_module(module), function)
    return describe
