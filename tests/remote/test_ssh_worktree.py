"""`--worktree` with a remote preset: the worktree is made on the far side, in `remote_cwd`'s
repository, by the same defused code as at home (run there by our shim); its diff lands in the
local record; `apply` applies it here. A real sshd (tests/remote/support.py)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.helpers import GIT_IDENTITY
from tests.remote.support import (
    FAR_USER,
    FarHost,
    agents_toml,
    far_folder,
    far_processes,
    worktree_round_trip,
)


def as_far_user(*argv: str, cwd: Path) -> str:
    done = subprocess.run(
        [shutil.which("runuser") or "runuser", "-u", FAR_USER, "--", *argv],
        cwd=cwd, env={"PATH": "/usr/bin:/bin", "HOME": str(cwd.parent)}, capture_output=True, text=True,
        check=True,
    )  # fmt: skip
    return done.stdout


@pytest.mark.parametrize("sandbox", ["none", "workspace"])
def test_worktree_round_trip_over_ssh(far_host: FarHost, tmp_path: Path, sandbox: str) -> None:
    """Confined too: the worktree's view (its own git directory, the repository's objects read-only)
    is made over there, where the worktree is."""
    repo = far_folder("far-repo")
    as_far_user("git", "init", "-q", "-b", "main", cwd=repo)
    (repo / "README").write_text("far checkout\n")
    subprocess.run(["chown", "-R", FAR_USER, str(repo)], check=True)
    as_far_user("git", *GIT_IDENTITY, "add", "README", cwd=repo)
    as_far_user("git", *GIT_IDENTITY, "commit", "-q", "-m", "base", cwd=repo)
    here = tmp_path / "here"
    trust = tmp_path / "gitconfig"  # the far user's repository, cloned by root: git wants it trusted
    trust.write_text("[safe]\n\tdirectory = *\n")
    clone = ["git", "clone", "-q", str(repo), str(here)]
    trusted = {**os.environ, "GIT_CONFIG_GLOBAL": str(trust)}
    subprocess.run(clone, check=True, capture_output=True, env=trusted)
    argv = ["python3", far_host.agent("trying_agent.py")]
    options = list(far_host.options)
    config = agents_toml(
        tmp_path, "far", argv, far_host.url, remote_options=options, remote_cwd=str(repo), sandbox=sandbox
    )
    record = worktree_round_trip(config, here)
    assert record["remote"] == far_host.url
    assert record["worktree"].startswith(f"{far_host.home}/.cache/acp-tui/worktrees/")  # over there
    assert "made-there.txt" in record["diff"]
    assert not Path(record["worktree"]).exists()  # removed over there once recorded (not kept)
    assert not (repo / "made-there.txt").exists()  # the far checkout untouched
    assert far_processes() == []  # the worktree server ended with the run
