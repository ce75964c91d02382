"""The test A2A agent (`agent_server.py`), served by a child process on 127.0.0.1."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

SERVER = str(Path(__file__).with_name("agent_server.py"))


class AgentServer:
    """One server process: `url` is where its card is discovered."""

    def __init__(self, *args: str) -> None:
        # Not marked as this test session's (see tests.helpers.LEAK_MARK): a module's server outlives
        # each test, and is ended here, by its pid, when the module is done with it.
        env = {k: v for k, v in os.environ.items() if k != "ACP_TUI_TEST_SESSION"}
        self.process = subprocess.Popen(
            [sys.executable, SERVER, *args],
            stdout=subprocess.PIPE,
            env=env,
            text=True,
            start_new_session=True,
        )
        assert self.process.stdout is not None
        port = self.process.stdout.readline().strip()
        assert port.isdigit(), f"the test A2A agent did not start (exit {self.process.poll()})"
        self.url = f"http://127.0.0.1:{port}"

    def close(self) -> None:
        self.process.kill()
        self.process.wait()


@pytest.fixture(scope="module")
def agent() -> Iterator[AgentServer]:
    server = AgentServer()
    yield server
    server.close()


@pytest.fixture
def own_agent() -> Iterator[AgentServer]:
    """A server of the test's own (one that is made to die)."""
    server = AgentServer()
    yield server
    server.close()
