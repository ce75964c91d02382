"""Every test ends with no process of ours left running."""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Iterator

import pytest

from tests.helpers import our_live_processes


@pytest.fixture(autouse=True)
def no_process_left_behind() -> Iterator[None]:
    yield
    leaked = our_live_processes()
    for pid, _ in leaked:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    assert not leaked, f"processes left running: {leaked}"
