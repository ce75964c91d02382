"""What the sandbox and subreaper tests share: bwrap's presence, the trying agent, processes found
by their command line, and an unprivileged user of the test's own (as root) to supervise as."""

from __future__ import annotations

import contextlib
import json
import os
import pwd
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from acp_tui import AcpProviderConfig, AcpSubagentProvider, SubagentRequest, SubagentStopReason
from tests.helpers import LEAK_MARK

ROOT = Path(__file__).resolve().parents[2]
TRYING_AGENT = str(Path(__file__).with_name("trying_agent.py"))
SUPERVISE = str(Path(__file__).with_name("supervise.py"))
NETWORK_WAYS = str(Path(__file__).with_name("network_ways.py"))
SANDBOX_REASON = "sandbox:"  # how every skip for a missing or refused bwrap begins


@cache
def bwrap_missing() -> str | None:
    """Why the sandbox cannot run here (the skip's printed reason), or None."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return f"{SANDBOX_REASON} bubblewrap (bwrap) is not installed (apt install bubblewrap)"
    trial = [bwrap, "--ro-bind", "/", "/", "--unshare-pid", "--cap-drop", "ALL", "--", "true"]
    done = subprocess.run(trial, capture_output=True, text=True, timeout=20)
    if done.returncode != 0:
        return f"{SANDBOX_REASON} bwrap cannot run here: {done.stderr.strip()}"
    return None


def need_bwrap() -> None:
    if (reason := bwrap_missing()) is not None:
        pytest.skip(reason)


def trying(*, sandbox: str = "workspace", python: str = sys.executable, **fields: Any) -> AcpProviderConfig:
    """The trying agent as a provider config (confined unless `sandbox="none"`)."""
    config = AcpProviderConfig(command=python, args=[TRYING_AGENT], term_grace=0.3, cancel_grace=0.5)
    return replace(config, sandbox=sandbox, **fields)


def tries(*steps: Sequence[Any]) -> str:
    """The prompt that makes the trying agent try `steps` in order."""
    return json.dumps([list(step) for step in steps])


def outcomes(output: str) -> list[str]:
    return list(json.loads(output))


async def answer(config: AcpProviderConfig, steps: Sequence[Sequence[Any]], cwd: Path) -> list[str]:
    """What the trying agent says of `steps`, tried in `cwd` (the run must complete)."""
    run = await AcpSubagentProvider(config).start(SubagentRequest(tries(*steps), cwd=str(cwd)))
    result = await run.result()
    assert result.stop_reason is SubagentStopReason.COMPLETED, result.error
    return outcomes(result.output)


def acp_tui_run(prompt: str, cwd: Path) -> list[str]:
    """`acp-tui run --sandbox` of the trying agent with `prompt`, in `cwd`."""
    agent = f"trying={sys.executable} {TRYING_AGENT}"
    return [
        sys.executable,
        "-m",
        "acp_tui",
        "run",
        "--sandbox",
        "--agent",
        agent,
        "--prompt",
        prompt,
        "--cwd",
        str(cwd),
    ]


@contextlib.contextmanager
def outside_tmp(prefix: str, owner: User | None = None) -> Iterator[Path]:
    """A folder outside /tmp (the sandbox's /tmp is private, so what lies there is hidden anyway):
    a real test of what the sandbox hides. Removed afterwards."""
    folder = Path(tempfile.mkdtemp(prefix=prefix, dir="/var/tmp")).resolve()
    if owner is not None:
        os.chown(folder, owner.uid, owner.gid)
    try:
        yield folder
    finally:
        subprocess.run(["chmod", "-R", "u+rwx", str(folder)], check=False)
        shutil.rmtree(folder, ignore_errors=True)


# An unprivileged user of our own -------------------------------------------------------------------


@dataclass(frozen=True)
class User:
    name: str
    uid: int
    gid: int
    python: str  # a Python 3.11 the user may run (ours may sit in root's home)


def make_user() -> User:
    """A user made with `useradd` for this test session; skipped (saying why) when not root."""
    if os.geteuid() != 0:
        pytest.skip("not root: the unprivileged variant needs root to create its user")
    python = next((p for p in ("/usr/bin/python3", "/usr/local/bin/python3") if _runs_ours(p)), None)
    if python is None:
        pytest.skip(f"no Python {sys.version_info[0]}.{sys.version_info[1]} outside root's home")
    name = f"acpsbx{os.getpid() % 100000}"
    try:
        entry = pwd.getpwnam(name)  # made by another module of this session
    except KeyError:
        useradd = ["useradd", "--no-create-home", "--shell", "/bin/sh", "--user-group", name]
        subprocess.run(useradd, check=True)
        entry = pwd.getpwnam(name)
    return User(name, entry.pw_uid, entry.pw_gid, python)


def remove_user(user: User) -> None:
    """Once its last process is gone (a supervisor's watchdog may take a moment to exit)."""
    deadline = time.monotonic() + 5
    while _processes_of(user.uid) and time.monotonic() < deadline:
        time.sleep(0.05)
    subprocess.run(["userdel", "--force", user.name], check=False, capture_output=True)


def _processes_of(uid: int) -> list[int]:
    pids = []
    for entry in os.scandir("/proc"):
        with contextlib.suppress(OSError):
            if entry.name.isdigit() and entry.stat().st_uid == uid:
                pids.append(int(entry.name))
    return pids


def _runs_ours(python: str) -> bool:
    """A Python of our minor version the user `nobody` can run (so it reads our venv's packages)."""
    check = f"import sys; assert sys.version_info[:2] == {tuple(sys.version_info[:2])}"
    try:
        done = subprocess.run([python, "-c", check], user="nobody", capture_output=True, timeout=20)
    except (OSError, subprocess.SubprocessError, KeyError):
        return False
    return done.returncode == 0


def supervise_as(
    user: User | None, job: dict[str, Any], *, home: Path, timeout: float = 60, script: str = SUPERVISE
) -> subprocess.Popen[str]:
    """`supervise.py` (a supervisor of one run of the trying agent), or another `script` of ours
    given a JSON job, in a fresh Python, as `user` (or as we are), with this tree and our venv's
    packages on its path; stdout piped."""
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "PYTHONPATH": f"{ROOT}{os.pathsep}{sysconfig.get_paths()['purelib']}",
        "XDG_CACHE_HOME": str(home / ".cache"),
        "XDG_STATE_HOME": str(home / ".local" / "state"),
        LEAK_MARK.split("=", 1)[0]: LEAK_MARK.split("=", 1)[1],
    }
    python = sys.executable if user is None else user.python
    owner: dict[str, Any] = {} if user is None else {"user": user.uid, "group": user.gid, "extra_groups": []}
    return subprocess.Popen(
        [python, script, json.dumps(job)],
        env=env,
        cwd=home,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        **owner,
    )


def read_json_line(process: subprocess.Popen[str]) -> dict[str, Any]:
    assert process.stdout is not None
    line = process.stdout.readline()
    if not line:
        process.wait(10)
        assert process.stderr is not None
        said = process.stderr.read()
        raise AssertionError(f"the supervisor said nothing (exit {process.returncode}): {said}")
    return dict(json.loads(line))
