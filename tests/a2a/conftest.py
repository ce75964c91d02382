"""The test A2A agent (`agent_server.py`), served by a child process on 127.0.0.1. Without the A2A
SDK (and uvicorn, which serves it) the tests skip, saying why; with ACP_TUI_REQUIRE_A2A=1 (as
`.ci/run` sets it) such a skip is a failure."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from collections.abc import Generator, Iterator
from pathlib import Path

import pytest

from tests.helpers import LEAK_MARK, skip_is_failure

SERVER = str(Path(__file__).with_name("agent_server.py"))
A2A_REASON = "a2a:"  # how every skip for a missing SDK begins


def skip_without_a2a() -> None:
    for module, install in (("a2a", "pip install 'acp-tui[a2a]'"), ("uvicorn", "pip install uvicorn")):
        if importlib.util.find_spec(module) is None:
            pytest.skip(f"{A2A_REASON} {module} is not installed ({install})")


@pytest.fixture(autouse=True)
def a2a_sdk() -> None:
    skip_without_a2a()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, None, None]:
    outcome = yield
    skip_is_failure(outcome.get_result(), "ACP_TUI_REQUIRE_A2A", reason_prefix=A2A_REASON)


class AgentServer:
    """One server process: `url` is where its card is discovered."""

    def __init__(self, *args: str) -> None:
        # Not marked as this test session's (see tests.helpers.LEAK_MARK): a module's server outlives
        # each test, and is ended here, by its pid, when the module is done with it.
        env = {k: v for k, v in os.environ.items() if k != LEAK_MARK.partition("=")[0]}
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
