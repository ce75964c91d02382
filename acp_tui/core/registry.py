"""The seam: named providers, a capability check before anything starts, reload by re-registering."""

from __future__ import annotations

from dataclasses import fields
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # (the model loads with the first run: the app's driver holds a registry before)
    from acp_tui.core.model import SubagentProvider, SubagentRequest, SubagentRun


class Subagents:
    def __init__(self) -> None:
        self._providers: dict[str, SubagentProvider] = {}

    def __contains__(self, name: object) -> bool:
        return name in self._providers

    async def register(self, name: str, provider: SubagentProvider) -> None:
        """Serve `name` with `provider`. A taken name is a reload: the old provider is closed first."""
        old = self._providers.pop(name, None)
        if old is not None:
            await old.aclose()
        self._providers[name] = provider

    async def unregister(self, name: str) -> None:
        old = self._providers.pop(name)
        await old.aclose()

    async def start(self, name: str, request: SubagentRequest, *, abort: Any = None) -> SubagentRun:
        self.check(name, request)
        return await self._providers[name].start(request, abort=abort)

    def check(self, name: str, request: SubagentRequest) -> None:
        """Refuse, before anything is spawned, a request for a capability the provider lacks
        (`UnsupportedCapabilityError`); `KeyError` for an unknown name."""
        from acp_tui.core.model import UnsupportedCapabilityError

        provider = self._providers[name]
        for capability in fields(provider.capabilities):
            asked = getattr(request, capability.name) is not None
            if asked and not getattr(provider.capabilities, capability.name):
                raise UnsupportedCapabilityError(name, capability.name)

    async def aclose(self) -> None:
        """Close every provider at once (disposing their live runs): quitting with N runs that
        ignore cancel takes one cancel grace and one term grace, not N of each."""
        import asyncio

        providers, self._providers = list(self._providers.values()), {}
        await asyncio.gather(*(provider.aclose() for provider in providers))
