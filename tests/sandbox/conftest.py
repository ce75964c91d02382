"""The sandbox tests: skipped, saying why, where bubblewrap cannot run; and with
ACP_TUI_REQUIRE_SANDBOX=1 (as `.ci/run` sets it) such a skip is a failure."""

from __future__ import annotations

from collections.abc import Generator, Iterator

import pytest

from tests.helpers import skip_is_failure
from tests.sandbox.support import SANDBOX_REASON, User, make_user, remove_user


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, None, None]:
    outcome = yield
    skip_is_failure(outcome.get_result(), "ACP_TUI_REQUIRE_SANDBOX", reason_prefix=SANDBOX_REASON)


@pytest.fixture(scope="module")
def unprivileged() -> Iterator[User]:
    """A user of our own, made with `useradd`; skipped (saying why) when the tests do not run as root."""
    user = make_user()
    try:
        yield user
    finally:
        remove_user(user)
