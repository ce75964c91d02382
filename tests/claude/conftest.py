"""The Claude tests need the Claude Agent SDK and a Claude Code CLI (the SDK's wheel bundles one on
most platforms), the sandbox's test bubblewrap: without them they skip, saying why. With
ACP_TUI_REQUIRE_CLAUDE=1 and ACP_TUI_REQUIRE_SANDBOX=1 (as `.ci/run` sets them) such a skip is a
failure."""

from __future__ import annotations

import importlib.util
import shutil
from collections.abc import Generator

import pytest

from acp_tui.compat import claude_bundled_cli
from tests.helpers import skip_is_failure
from tests.sandbox.support import SANDBOX_REASON

CLAUDE_REASON = "claude:"  # how every skip for a missing SDK or CLI begins


def missing() -> str | None:
    if importlib.util.find_spec("claude_agent_sdk") is None:
        return f"{CLAUDE_REASON} the Claude Agent SDK is not installed (pip install 'acp-tui[claude]')"
    if claude_bundled_cli() is None and shutil.which("claude") is None:
        return f"{CLAUDE_REASON} the Claude Agent SDK bundles no Claude Code CLI here, and none is on PATH"
    return None


@pytest.fixture(autouse=True)
def claude_cli() -> None:
    reason = missing()
    if reason is not None:
        pytest.skip(reason)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, None, None]:
    outcome = yield
    report = outcome.get_result()
    skip_is_failure(report, "ACP_TUI_REQUIRE_CLAUDE", reason_prefix=CLAUDE_REASON)
    skip_is_failure(report, "ACP_TUI_REQUIRE_SANDBOX", reason_prefix=SANDBOX_REASON)
