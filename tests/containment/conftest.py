"""Fixtures of the containment tests: a checkout in a temporary repository, worktrees under a
temporary user cache dir, and (as root) an unprivileged user of the test's own."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.containment.support import User, make_user, remove_user
from tests.helpers import git


@pytest.fixture(autouse=True)
def cache_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "cache-home"
    monkeypatch.setenv("XDG_CACHE_HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config-home"))
    return home / "acp-tui" / "worktrees"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A checkout with a few committed files, and one uncommitted change of the user's."""
    root = tmp_path / "checkout"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    (root / "README.md").write_text("# Project\n\nA line.\n")
    (root / "src").mkdir()
    (root / "src" / "app.py").write_text("print('hello')\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "first")
    (root / "README.md").write_text("# Project\n\nA line.\nThe user's own edit, not committed.\n")
    return root


@pytest.fixture(scope="session")
def unprivileged() -> Iterator[User]:
    """A user of our own, made with `useradd`; skipped (saying why) when the tests do not run as root."""
    user = make_user()
    try:
        yield user
    finally:
        remove_user(user)
