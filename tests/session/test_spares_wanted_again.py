"""The spares are asked for again at each run's end (its follow-up's spare): with 64 runs, comparing
every spare with every config wanted each time grew as the square of the runs. A config handed again
unchanged is the same object, and a spare finds it without comparing configs."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from pathlib import Path

import pytest

from acp_tui.session.asks import AskQueue
from acp_tui.session.warm import Spares, Wanted
from acp_tui.settings.provider_config import AcpProviderConfig
from acp_tui.ui.next_runs import NextRuns
from tests.ui.helpers import scripted_preset, settings


def test_the_config_of_an_unchanged_preset_and_policy_is_the_same_object() -> None:
    chosen = settings(scripted_preset("one"), scripted_preset("two", policy="allow"))
    next_runs = NextRuns(lambda: chosen, AskQueue())
    one = chosen.preset("one")
    config = next_runs.config_for(one, "reject")
    assert next_runs.config_for(replace(one), "reject") is config  # an equal preset, made anew
    assert next_runs.config_for(one, "allow") is not config
    next_runs.trace_dir = "/tmp/traces"
    traced = next_runs.config_for(one, "reject")
    assert traced is not config and traced.trace_dir == "/tmp/traces"
    assert next_runs.config_for(replace(one, args=("other",)), "reject").args == ("other",)


async def test_spares_wanted_again_compare_no_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    chosen = settings(*(scripted_preset(name, forever=1) for name in ("a", "b", "c")))
    next_runs = NextRuns(lambda: chosen, AskQueue())

    def wanted() -> list[Wanted]:
        return [Wanted(next_runs.config_for(preset, "reject"), str(tmp_path)) for preset in chosen.presets]

    spares = Spares()
    try:
        spares.want(wanted())
        first = list(spares._spares)
        compared: list[int] = []
        equal = AcpProviderConfig.__eq__
        monkeypatch.setattr(AcpProviderConfig, "__eq__", lambda a, b: compared.append(1) or equal(a, b))
        spares.want(wanted())
        assert spares._spares == first and compared == []
        # An equal config made anew (a reload that changed nothing) keeps its spare too.
        spares.want([replace(item, config=replace(item.config)) for item in wanted()])
        assert spares._spares == first
    finally:
        await asyncio.wait_for(spares.aclose(), 20)
