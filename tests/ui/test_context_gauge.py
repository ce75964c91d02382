"""The context gauge: `used` of `size`, to an eighth of a cell, warning near full."""

from __future__ import annotations

from acp_tui.core.model import Usage
from acp_tui.ui.widgets.context_gauge import bar, gauge_level, gauge_text


def test_the_bar_and_the_percent() -> None:
    assert bar(0.0, 4) == "    " and bar(1.0, 4) == "████" and bar(0.5, 4) == "██  "
    assert bar(1 / 32, 4) == "▏   " and bar(2.0, 3) == "███" and bar(-1, 3) == "   "
    assert gauge_text(Usage(used=34_000, size=100_000), width=10) == "ctx ▕███▍      ▏ 34%"
    assert gauge_text(Usage(used=34_000, size=100_000)) == "ctx ▕██    ▏ 34%"
    assert gauge_text(Usage(used=5, size=0)) == "" and gauge_text(None) == ""


def test_the_gauge_warns_near_full() -> None:
    assert gauge_level(None) == gauge_level(Usage(used=79, size=100)) == "gauge"
    assert gauge_level(Usage(used=85, size=100)) == "warn"
    assert gauge_level(Usage(used=99, size=100)) == "full"
