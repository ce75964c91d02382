"""`--worktree` with a remote preset: the worktree is made on the far side, in `remote_cwd`'s
repository, by the same defused code as at home (run there by our shim); its diff lands in the
local record; `apply` applies it here. A real sshd (tests/remote/support.py)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from tests.helpers import GIT_IDENTITY
from tests.remote.support import FAR_USER, FarHost, far_folder, far_processes


def as_far_user(*argv: str, cwd: Path) -> str:
    done = subprocess.run(
        [shutil.which("runuser") or "runuser", "-u", FAR_USER, "--", *argv],
        cwd=cwd, env={"PATH": "/usr/bin:/bin", "HOME": str(cwd.parent)}, capture_output=True, text=True,
        check=True,
    )  # fmt: skip
    return done.stdout


def test_worktree_round_trip_over_ssh(far_host: FarHost, tmp_path: Path) -> None:
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
    config = tmp_path / "agents.toml"
    config.write_text(
        "[[agent]]\n"
        'name = "far"\ncommand = "python3"\n'
        f"args = {json.dumps([far_host.agent('trying_agent.py')])}\n"
        f"remote = {json.dumps(far_host.url)}\nremote_options = {json.dumps(list(far_host.options))}\n"
        f"remote_cwd = {json.dumps(str(repo))}\n"
    )
    prompt = json.dumps([["write", "made-there.txt"]])
    done = subprocess.run(
        [sys.executable, "-m", "acp_tui", "--config", str(config), "run", "--prompt", prompt, "--worktree",
         "--format", "json"],
        capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    record = json.loads(done.stdout)
    assert record["remote"] == far_host.url
    assert record["worktree"].startswith(f"{far_host.home}/.cache/acp-tui/worktrees/")  # over there
    assert record["cwd"] == record["worktree"]
    assert record["diff_stat"] == {"files": 1, "insertions": 1, "deletions": 0}
    assert "made-there.txt" in record["diff"]
    assert not Path(record["worktree"]).exists()  # removed over there once recorded (not kept)
    assert not (repo / "made-there.txt").exists()  # the far checkout untouched
    assert far_processes() == []  # the worktree server ended with the run
    records = tmp_path / "records.jsonl"
    records.write_text(done.stdout)
    applied = subprocess.run(
        [sys.executable, "-m", "acp_tui", "apply", str(records), "--cwd", str(here)],
        capture_output=True, text=True,
    )  # fmt: skip
    assert applied.returncode == 0, applied.stderr
    assert (here / "made-there.txt").exists()  # applied here
