"""Every test runs with folders of its own, and ends with no process of ours left running."""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from acp_tui.settings import paths
from tests.helpers import our_live_processes


@pytest.fixture(scope="session", autouse=True)
def session_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The same for what a module's or the session's fixtures run, before any test's own."""
    with paths.rooted_at(tmp_path_factory.mktemp("acp-session-home")) as home:
        yield home


@pytest.fixture(autouse=True)
def acp_home(session_home: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """acp-tui's folders (config, cache, state, log: `acp_tui.settings.paths`) under a new folder, for
    the test and every `acp-tui` process it starts: no test reads the user's presets or writes into
    the user's cache."""
    with paths.rooted_at(tmp_path_factory.mktemp("acp-home")) as home:
        yield home


@pytest.fixture(autouse=True)
def no_process_left_behind() -> Iterator[None]:
    yield
    leaked = our_live_processes()
    for pid, _ in leaked:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    assert not leaked, f"processes left running: {leaked}"
