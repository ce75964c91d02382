"""Helpers of the containment tests: the attacking agent on a command line, `acp-tui run`, and
running a piece of Python as an unprivileged user (as root only: the permission checks root skips)."""

from __future__ import annotations

import contextlib
import json
import os
import pwd
import shlex
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from acp_tui.cli.main import main
from acp_tui.settings import paths
from tests.helpers import GIT_IDENTITY, LEAK_MARK

HERE = Path(__file__).parent
ROOT = HERE.parent.parent
GIT_AGENT = str(HERE / "git_agent.py")


def attacker(name: str, script: str) -> str:
    """An `--agent` spec: the stdlib agent that runs `script` (sh) in its cwd, then answers."""
    return f"{name}={shlex.join([sys.executable, GIT_AGENT, script])}"


def run(*args: str) -> Result:
    return CliRunner().invoke(main, ["run", *args], catch_exceptions=False)


def records(result: Result) -> dict[str, dict[str, Any]]:
    return {record["name"]: record for record in map(json.loads, result.stdout.splitlines())}


def worktree_paths(root: Path, user: User | None = None) -> list[str]:
    listing = user_git(user, root, "worktree", "list", "--porcelain")
    return [line.split(" ", 1)[1] for line in listing.splitlines() if line.startswith("worktree ")]


def objects_of(repo: Path) -> set[str]:
    """Every file of a repository's object store (loose objects and packs)."""
    store = repo / ".git" / "objects"
    return {str(p.relative_to(store)) for p in store.rglob("*") if p.is_file()}


# An unprivileged user ---------------------------------------------------------------------------


@dataclass(frozen=True)
class User:
    name: str
    uid: int
    gid: int
    python: str  # a Python 3.11+ this user may run (ours may sit in root's home)


def make_user() -> User:
    if os.geteuid() != 0:
        pytest.skip("not root: the unprivileged variant needs root to create its user")
    python = next(
        (
            candidate
            for candidate in ("/usr/bin/python3", "/usr/local/bin/python3", "/usr/bin/python3.11")
            if os.path.exists(candidate) and _runs_as_nobody(candidate)
        ),
        None,
    )
    if python is None:
        pytest.skip("no Python 3.11+ outside root's home for the unprivileged user")
    name = f"acpt{os.getpid() % 100000}"
    subprocess.run(["useradd", "--no-create-home", "--shell", "/bin/sh", "--user-group", name], check=True)
    entry = pwd.getpwnam(name)
    return User(name, entry.pw_uid, entry.pw_gid, python)


def _runs_as_nobody(python: str) -> bool:
    check = "import sys; assert sys.version_info >= (3, 11)"
    try:
        done = subprocess.run([python, "-c", check], user="nobody", capture_output=True, timeout=20)
    except (OSError, subprocess.SubprocessError, KeyError):
        return False
    return done.returncode == 0


def remove_user(user: User) -> None:
    subprocess.run(["userdel", user.name], check=False, capture_output=True)


@contextlib.contextmanager
def home_of(user: User | None, tmp_path: Path) -> Any:
    """A folder the user owns (under /tmp: pytest's own is root's alone), removed afterwards."""
    if user is None:
        folder = tmp_path / "home"
        folder.mkdir()
        yield folder
        return
    folder = Path(tempfile.mkdtemp(prefix="acp-tui-user-", dir="/tmp"))
    os.chown(folder, user.uid, user.gid)
    try:
        yield folder
    finally:
        subprocess.run(["chmod", "-R", "u+rwx", str(folder)], check=False)
        shutil.rmtree(folder, ignore_errors=True)


def run_python(user: User | None, code: str, *args: str, home: Path) -> subprocess.CompletedProcess[str]:
    """`code` in a fresh Python, as `user` (or as we are), with this tree on its path."""
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "PYTHONPATH": str(ROOT),
        "XDG_CACHE_HOME": str(home / "cache"),
        LEAK_MARK.split("=", 1)[0]: LEAK_MARK.split("=", 1)[1],
    }
    python = sys.executable if user is None else user.python
    owner: dict[str, Any] = {} if user is None else {"user": user.uid, "group": user.gid, "extra_groups": []}
    return subprocess.run(
        [python, "-c", code, *args], env=env, cwd=home, capture_output=True, text=True, timeout=40, **owner
    )


def user_git(user: User | None, repo: Path, *args: str) -> str:
    owner: dict[str, Any] = {} if user is None else {"user": user.uid, "group": user.gid, "extra_groups": []}
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(repo.parent)}
    done = subprocess.run(
        ["git", *GIT_IDENTITY, *args], cwd=repo, env=env, capture_output=True, text=True, check=True, **owner
    )
    return done.stdout


def committed_repo(root: Path, files: dict[str, str], user: User | None = None) -> Path:
    """A new repository at `root` (owned by `user`, else by us) with `files` committed."""
    root.mkdir()
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    if user is not None:
        for path in [root, *root.rglob("*")]:
            os.chown(path, user.uid, user.gid)
    user_git(user, root, "init", "-q", "-b", "main")
    user_git(user, root, "add", "-A")
    user_git(user, root, "commit", "-q", "-m", "first")
    return root


def checkout_with_an_edit(tmp_path: Path) -> Path:
    """A checkout with a few committed files, and one uncommitted change of the user's."""
    root = committed_repo(
        tmp_path / "checkout", {"README.md": "# Project\n\nA line.\n", "src/app.py": "print('hello')\n"}
    )
    (root / "README.md").write_text("# Project\n\nA line.\nThe user's own edit, not committed.\n")
    return root


def isolated_cache(acp_home: Path) -> Path:
    """Where our worktrees go: under the test's own folders (`acp_home`, tests/conftest.py)."""
    return paths.worktrees_dir()


def scratch_tmpdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Our temporary folders (the private git directories) go under the test's: what is left is seen,
    and what a crash leaves goes with the test's folder."""
    folder = tmp_path / "tmp"
    folder.mkdir()
    monkeypatch.setenv("TMPDIR", str(folder))
    monkeypatch.setattr(tempfile, "tempdir", None)
    return folder
