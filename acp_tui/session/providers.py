"""The provider a preset's runs start with, by the preset's `provider`: each one's class among the
public names (`acp_tui.subagents`), which load it, and its protocol's SDK, on first use; and how
its probe describes it (`acp-tui probe`, `p` in the app's F2)."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from acp_tui.acp.probe import Describe
    from acp_tui.core.model import SubagentProvider
    from acp_tui.settings.provider_config import AcpProviderConfig

# A provider's name (a preset's `provider`) -> its class's public name.
PROVIDERS = {
    "acp": "AcpSubagentProvider",
    "a2a": "A2aSubagentProvider",
    "claude": "ClaudeSubagentProvider",
}


# How a provider's probe describes an agent: (module, function), imported when used.
DESCRIBE = {
    "acp": ("acp_tui.acp.probe", "describe_agent"),
    "a2a": ("acp_tui.a2a.probe", "describe_a2a"),
    "claude": ("acp_tui.claude.probe", "describe_claude"),
}


def provider_for(provider: str, config: AcpProviderConfig) -> SubagentProvider:
    """A provider of that name for `config`; ValueError, in one line, for one not built yet."""
    if provider not in PROVIDERS:
        raise ValueError(not_available(provider))
    from acp_tui import subagents

    make: Callable[[AcpProviderConfig], SubagentProvider] = getattr(subagents, PROVIDERS[provider])
    return make(config)


def describer_for(provider: str) -> Describe:
    """How the probe describes an agent of that provider; ValueError, in one line, for one not
    built yet."""
    if provider not in DESCRIBE:
        raise ValueError(not_available(provider))
    module, function = DESCRIBE[provider]
    describe: Describe = getattr(importlib.import_module(module), function)
    return describe


def not_available(provider: str) -> str:
    """Why a preset of a provider not built yet does not run, in one line."""
    return f'provider "{provider}" is not available yet (available: {", ".join(PROVIDERS)})'
