"""Hostile-child tests: the `soak` marker, and logging routed as the real commands route it."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import pytest


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "soak: start-and-dispose cycles in bulk (ACP_TUI_SOAK_CYCLES, default 200); "
        "deselect with -m 'not soak'",
    )


@pytest.fixture
def routed_logs(tmp_path: Path) -> Iterator[Path]:
    """Route the root logger to a file the way `acp-tui` and `acp-tui run` do (acp_tui.settings.logs).

    The SDK logs a traceback for every frame it cannot use; hostile children send thousands. Left
    to pytest's log capture, formatting them would be our test's cost, not the product's. The
    previous handlers (pytest's own) are put back afterwards.
    """
    from acp_tui.settings.logs import route_logging

    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    path = route_logging(path=tmp_path / "logs" / "acp-tui.log")
    try:
        yield path
    finally:
        for handler in list(root.handlers):
            root.removeHandler(handler)
            handler.close()
        for handler in handlers:
            root.addHandler(handler)
        root.setLevel(level)
