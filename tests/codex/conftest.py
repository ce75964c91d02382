"""The codex tests: the real `codex app-server` (npm's @openai/codex, which `.ci/run` installs pinned
into .cache/codex) against a stand-in of the model API on 127.0.0.1. Where codex is not installed
they skip saying so; with ACP_TUI_REQUIRE_CODEX=1 (CI) such a skip is a failure."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Generator, Iterator
from pathlib import Path

import pytest

from tests.helpers import skip_is_failure
from tests.standins.openai_responses import ResponsesStandIn

REPO = Path(__file__).resolve().parents[2]
PINNED = REPO / ".cache" / "codex" / "node_modules" / ".bin" / "codex"
CODEX_REASON = "codex:"  # how a skip for a missing codex begins
# Codex refuses to set its helpers up in a home under the temporary folder (and says so on stderr).
HOMES_UNDER = "/var/tmp"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, None, None]:
    outcome = yield
    skip_is_failure(outcome.get_result(), "ACP_TUI_REQUIRE_CODEX", reason_prefix=CODEX_REASON)


@pytest.fixture(scope="session")
def codex() -> str:
    """The codex binary: the pinned one of .cache/codex, else one on PATH."""
    found = str(PINNED) if PINNED.exists() else shutil.which("codex")
    if found is None:
        pytest.skip(f"{CODEX_REASON} not installed (`bash .ci/run` installs it into .cache/codex)")
    return found


@pytest.fixture
def stand_in() -> Iterator[ResponsesStandIn]:
    with ResponsesStandIn() as server:
        yield server


@pytest.fixture
def codex_home(stand_in: ResponsesStandIn) -> Iterator[Path]:
    """A Codex home of the test's own, whose model is the stand-in."""
    home = Path(tempfile.mkdtemp(prefix="acp-tui-codex-", dir=HOMES_UNDER))
    try:
        stand_in.write_codex_home(home)
        yield home
    finally:
        shutil.rmtree(home, ignore_errors=True)
