"""Fixtures of the containment tests: a checkout in a temporary repository, worktrees under a
temporary user cache dir, and (as root) an unprivileged user of the test's own."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.containment.support import (
    User,
    checkout_with_an_edit,
    isolated_cache,
    make_user,
    remove_user,
    scratch_tmpdir,
)

cache_home = pytest.fixture(autouse=True)(isolated_cache)
scratch = pytest.fixture(autouse=True)(scratch_tmpdir)
repo = pytest.fixture(checkout_with_an_edit)


@pytest.fixture(scope="session")
def unprivileged() -> Iterator[User]:
    """A user of our own, made with `useradd`; skipped (saying why) when the tests do not run as root."""
    user = make_user()
    try:
        yield user
    finally:
        remove_user(user)
