"""Spares: children started ahead of their runs, so that a run need not wait for its agent to boot.

Agents take from a fraction of a second to five (measured: Codex 1.3 s, OpenCode 5.2 s) to answer
`initialize` and `session/new`. The owner says which spares it wants (`want`): one per agent of the
next round, each for its exact config and cwd, with its session already opened when it is a fresh
round's, through `initialize` only when it is for a follow-up (which continues a session). A run
`take`s the spare that matches it exactly, or starts cold. A spare serves one run; spares no longer
wanted (an agent unchecked, its preset or the worktree box changed, a reload) and spares idle for
`idle` seconds are disposed, as is everything at `aclose`. A spare is a handshake object
(`acp_tui.acp.handshake.AcpHandshake`): its child, connected; taking it makes a run over it.
Starting and disposing spares happen in the background, in one task group (`core.tasks.TaskHost`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from acp_tui.core.tasks import TaskHost

if TYPE_CHECKING:
    from acp_tui.acp.handshake import AcpHandshake
    from acp_tui.acp.provider import AcpSubagentProvider
    from acp_tui.settings.provider_config import AcpProviderConfig

log = logging.getLogger(__name__)
WARM_IDLE = 600.0  # seconds a spare waits before it is disposed (settings: `warm_idle`)


@dataclass(frozen=True, eq=True)
class Wanted:
    """A spare to keep ready: for runs of `config` in `cwd`; `follow_up` ones continue a session."""

    config: AcpProviderConfig
    cwd: str
    follow_up: bool = False


@dataclass(eq=False)
class _Spare:
    wanted: Wanted
    provider: AcpSubagentProvider
    handshake: AcpHandshake | None = None  # once its child is spawned
    idle: asyncio.TimerHandle | None = field(default=None, repr=False)
    started: asyncio.Event = field(default_factory=asyncio.Event, repr=False)  # spawned, or failed

    async def ready(self) -> bool:
        """Once its child has answered `initialize` (and opened its session) or failed: whether
        it can serve a run."""
        await self.started.wait()
        if self.handshake is None:
            return False
        await self.handshake.ready.wait()
        return self.handshake.failure is None


def _identity(item: Wanted) -> tuple[int, str, bool]:
    return id(item.config), item.cwd, item.follow_up


def _among(item: Wanted, by_identity: dict[tuple[int, str, bool], Wanted], items: Sequence[Wanted]) -> bool:
    """Whether `item` is one of `items`: at once where its config is the same object, else compared
    (configs hold dicts: compared, never hashed)."""
    return _identity(item) in by_identity or item in items


class Spares:
    def __init__(self, *, idle: float = WARM_IDLE) -> None:
        self.idle = idle
        self._spares: list[_Spare] = []
        self._taken: list[AcpSubagentProvider] = []  # they hold the runs taken from spares
        self._tasks = TaskHost("acp-tui spares")
        self._closed = False

    def want(self, wanted: Sequence[Wanted], *, start: bool = True) -> None:
        """Keep one spare ready for each of `wanted` (started in the background, unless not
        `start` yet); dispose the rest. The owner asks again at each run's end: a config it hands
        again unchanged is the same object, found at once (64 runs ending compared every spare with
        every config wanted, each time)."""
        if self._closed:
            return
        asked = {_identity(item): item for item in wanted}
        # A spare whose agent exited while it waited is replaced, not kept counting as ready.
        gone = [
            spare
            for spare in self._spares
            if (spare.handshake and spare.handshake.done()) or not _among(spare.wanted, asked, wanted)
        ]
        for spare in gone:
            self._retire(spare)
        if not start:
            return
        have = [spare.wanted for spare in self._spares]
        held = {_identity(item): item for item in have}
        for item in wanted:
            if not _among(item, held, have):
                have.append(item)
                held[_identity(item)] = item
                self._start(item)

    async def take(self, config: AcpProviderConfig, cwd: str, *, follow_up: bool) -> AcpHandshake | None:
        """The spare for a run of `config` in `cwd`, if there is one (it is no longer a spare then:
        `take` it to make the run). One still being spawned is waited for, a moment: a run that
        started cold beside it had two agents boot at once (Enter at the first frame: four agents
        booting for three runs on two cores)."""
        wanted = Wanted(config, cwd, follow_up)
        spare = next((spare for spare in self._spares if spare.wanted == wanted), None)
        if spare is None:
            return None
        await spare.started.wait()
        if spare not in self._spares or spare.handshake is None or spare.handshake.done():
            return None  # taken meanwhile, retired, failed or ended: the run starts cold
        self._spares.remove(spare)
        if spare.idle is not None:
            spare.idle.cancel()
        self._taken = [p for p in self._taken if p.live] + [spare.provider]
        return spare.handshake

    async def aclose(self) -> None:
        """Every spare disposed, and every run taken from one."""
        self._closed = True
        providers = [spare.provider for spare in self._spares] + self._taken
        for spare in self._spares:
            if spare.idle is not None:
                spare.idle.cancel()
        self._spares, self._taken = [], []
        await asyncio.gather(*(provider.aclose() for provider in providers), self._tasks.aclose())

    def _start(self, wanted: Wanted) -> None:
        from acp_tui.acp.provider import AcpSubagentProvider

        spare = _Spare(wanted, AcpSubagentProvider(wanted.config))
        self._spares.append(spare)
        self._tasks.start_soon(self._prepare(spare))

    async def _prepare(self, spare: _Spare) -> None:
        try:
            spare.handshake = await spare.provider.prepare(
                cwd=spare.wanted.cwd, presession=not spare.wanted.follow_up
            )
        except Exception:  # a spare that cannot start: its runs start cold, and say why then
            log.exception("a spare could not start")
            self._retire(spare)
            return
        finally:
            spare.started.set()
        if spare not in self._spares:  # retired (or all closed) while it started
            await spare.provider.aclose()
            return
        spare.idle = asyncio.get_running_loop().call_later(self.idle, self._retire, spare)

    def _retire(self, spare: _Spare) -> None:
        """A spare no longer wanted (or idle too long): disposed, in the background."""
        if spare in self._spares:
            self._spares.remove(spare)
        if spare.idle is not None:
            spare.idle.cancel()
        self._tasks.start_soon(spare.provider.aclose())
