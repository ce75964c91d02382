"""The garbage collector's long passes where no key waits: Python keeps the young passes (every
50,000 allocations), and the older ones, due at Python's pace, run just after a key's frame is
painted or when no key has come for a while; Python's thresholds come back as the app ends."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from acp_tui.acp.sdk import import_acp
from acp_tui.ui import collector
from acp_tui.ui.app import SupervisorApp
from tests.ui.helpers import scripted_preset, settings, wait_until


class Passes:
    """Each pass of the collector as it starts: its generation, and whether a key was at work."""

    def __init__(self) -> None:
        self.app = SupervisorApp(settings(scripted_preset("one")))
        self.seen: list[tuple[int, bool]] = []

    def heard(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self.seen.append((info["generation"], self.app.key_order.busy))

    def older(self) -> list[tuple[int, bool]]:
        return [seen for seen in self.seen if seen[0] > 0]


@pytest.fixture
def passes() -> Iterator[Passes]:
    import_acp()  # (not by the app's preload, which pauses the collector while it imports)
    heard = Passes()
    gc.callbacks.append(heard.heard)
    try:
        yield heard
    finally:
        gc.callbacks.remove(heard.heard)


class Young:
    """An object the collector tracks (an empty list may come from Python's free list: not counted)."""


def young_passes(passes: Passes, count: int) -> None:
    """`count` young passes as allocation starts them (objects kept past the threshold, let go)."""
    young = len([seen for seen in passes.seen if seen[0] == 0])
    for _ in range(count * 4):
        if len([seen for seen in passes.seen if seen[0] == 0]) >= young + count:
            return
        kept = [Young() for _ in range(collector.YOUNG_GENERATION + 10)]
        del kept
    raise AssertionError(f"{count} young passes not seen")


async def test_python_starts_no_older_pass_while_the_app_runs(passes: Passes) -> None:
    before = gc.get_threshold()
    async with passes.app.run_test() as pilot:
        await pilot.pause()
        assert gc.get_threshold() == (collector.YOUNG_GENERATION, collector.NEVER, collector.NEVER)
        passes.seen.clear()
        young_passes(passes, collector.OLDER_EVERY + 2)  # at Python's pace, a middle pass would have run
        assert passes.older() == []
    assert gc.get_threshold() == before


async def test_a_pass_that_is_due_runs_after_the_frame_of_a_key(
    passes: Passes, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(collector, "QUIET", 3600.0)  # not for want of keys
    async with passes.app.run_test() as pilot:
        await pilot.pause()
        passes.seen.clear()
        young_passes(passes, collector.OLDER_EVERY)
        assert passes.older() == []
        await pilot.press("f1")
        await wait_until(pilot, lambda: bool(passes.older()))
        assert passes.older() == [(1, False)]  # one, once the key's work was done


async def test_passes_that_are_due_run_when_no_key_comes(
    passes: Passes, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(collector, "QUIET", 0.05)
    async with passes.app.run_test() as pilot:
        await pilot.pause()
        for _ in range(collector.OLDER_EVERY):
            gc.collect(1)  # as if we had run that many middle passes: a full one is due
        passes.seen.clear()
        await wait_until(pilot, lambda: bool(passes.older()))
        assert passes.older()[0] == (2, False)


async def test_no_pass_runs_while_the_collector_is_paused(
    passes: Passes, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As the SDK's import pauses it, in a thread, right after the first frame: a pass then would go
    through all that import made, the runs a key started waiting for it."""
    monkeypatch.setattr(collector, "QUIET", 3600.0)
    async with passes.app.run_test() as pilot:
        await pilot.pause()
        passes.seen.clear()
        young_passes(passes, collector.OLDER_EVERY)
        gc.disable()
        try:
            passes.app.collector.collect_due()
        finally:
            gc.enable()
        assert passes.older() == []
        passes.app.collector.collect_due()
        assert passes.older() == [(1, False)]
