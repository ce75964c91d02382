"""Quitting disposes every run and every spare at once (issue 27): with six agents that ignore both
the cancel and SIGTERM, each with a spare waiting for the next round, every disposal starts before
any ends, so the cancel grace and the term grace are paid once for all of them, not once each.
Counted, not timed: the order in which disposals start and process groups end."""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Any

import pytest

from acp_tui.acp.handshake import AcpHandshake
from acp_tui.acp.run import AcpSubagentRun
from acp_tui.runs import child as child_module
from acp_tui.session.attempts import Session
from acp_tui.session.driver import SessionDriver
from acp_tui.session.warm import Spares, Wanted
from acp_tui.settings.provider_config import AcpProviderConfig
from acp_tui.settings.schema import Settings
from tests.helpers import our_live_processes
from tests.session.test_driver import agent, until

AGENTS = 6


async def test_quitting_disposes_runs_and_spares_together(monkeypatch: pytest.MonkeyPatch) -> None:
    order: list[tuple[str, int]] = []  # ("start", disposal) as each begins, ("end", group) as it ends
    started: set[int] = set()
    run_dispose, spare_dispose = AcpSubagentRun.dispose, AcpHandshake.dispose
    terminate_group = child_module.terminate_group

    def begun(thing: object) -> None:
        if id(thing) not in started:  # a second dispose of the same run only waits
            started.add(id(thing))
            order.append(("start", id(thing)))

    async def disposing_run(self: AcpSubagentRun, reason: str | None = None) -> None:
        begun(self)
        await run_dispose(self, reason)

    async def disposing_spare(self: AcpHandshake) -> None:
        if self.run is None:
            begun(self)
        await spare_dispose(self)

    async def ending(child: Any, **kwargs: Any) -> str:
        how = await terminate_group(child, **kwargs)
        order.append((how, child.pid))
        return how

    monkeypatch.setattr(AcpSubagentRun, "dispose", disposing_run)
    monkeypatch.setattr(AcpHandshake, "dispose", disposing_spare)
    monkeypatch.setattr(child_module, "terminate_group", ending)

    presets = [agent(f"stubborn{n}", forever=1, on_cancel="ignore", ignore_term=1) for n in range(AGENTS)]
    settings = Settings(presets=tuple(presets))

    def configure(preset: Any) -> AcpProviderConfig:
        return dataclasses.replace(settings.provider_config(preset), cancel_grace=0.3, term_grace=0.3)

    driver = SessionDriver(lambda attempt: configure(attempt.preset))
    driver.spares = spares = Spares()
    attempts = Session().new_round("go", presets, {p.name: p.policy for p in presets})
    for attempt in attempts:
        attempt.preset = dataclasses.replace(attempt.preset, warm=False)  # this round starts cold
        driver.start(attempt)
    spares.want([Wanted(configure(preset), str(driver_cwd())) for preset in presets])  # the next round's
    await until(lambda: all(attempt.first_output_at is not None for attempt in attempts))  # mid-answer
    assert all(await asyncio.wait_for(asyncio.gather(*(s.ready() for s in spares._spares)), 30))

    await asyncio.wait_for(driver.aclose(), 30)

    starts = [i for i, (what, _) in enumerate(order) if what == "start"]
    ends = [i for i, (what, _) in enumerate(order) if what != "start"]
    assert len(starts) == len(ends) == 2 * AGENTS  # every run, every spare
    assert max(starts) < min(ends)  # all began before any ended: one grace for all
    assert {what for what, _ in order if what != "start"} == {"sigkill"}  # they ignored everything
    assert all(attempt.result is not None for attempt in attempts)
    assert not our_live_processes()


def driver_cwd() -> str:
    import os

    return os.path.abspath(os.getcwd())
