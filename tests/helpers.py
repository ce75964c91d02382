"""Test helpers: scripted and demo agents as provider configs, and finding processes we left."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from acp_tui import AcpProviderConfig
from acp_tui.process.watchdog import read_environ, read_proc

HERE = Path(__file__).parent
SCRIPTED_AGENT = str(HERE / "scripted_agent.py")
FEATURES_AGENT = str(HERE / "features_agent.py")

# Every process this test session starts inherits this mark, grandchildren included: after each
# test, any live process carrying it (other than pytest itself) is a leak. (Its name must not look
# like a credential, or no agent would inherit it: see `credential_shaped`.)
LEAK_MARK = f"ACP_TUI_TEST_MARK={os.getpid()}"
os.environ["ACP_TUI_TEST_MARK"] = str(os.getpid())

# Credential-shaped names (docs/reliability.md, "Secrets"), written independently of the code under
# test: marker words anywhere, short words only as a whole `_`-separated part, and the session's own
# names apart.
CREDENTIAL_MARKERS = ("KEY", "SECRET", "TOKEN", "PASSWORD", "PASSWD", "PASSPHRASE", "CREDENTIAL", "COOKIE")
CREDENTIAL_PARTS = ("PASS", "AUTH", "SESSION")
NOT_CREDENTIALS = ("DBUS_SESSION_BUS_ADDRESS", "DESKTOP_SESSION", "SESSION_MANAGER", "SSH_AUTH_SOCK")


def credential_shaped(name: str) -> bool:
    upper = name.upper()
    if any(marker in upper for marker in CREDENTIAL_MARKERS):
        return True
    if name in NOT_CREDENTIALS or name.startswith("XDG_SESSION_"):
        return False
    parts = upper.split("_")
    return any(part in CREDENTIAL_PARTS for part in parts) or "PWD" in parts[1:]


def scripted(*, policy: str = "reject", **options: object) -> AcpProviderConfig:
    args = [SCRIPTED_AGENT, *(f"{key}={value}" for key, value in options.items())]
    return AcpProviderConfig(
        command=sys.executable, args=args, permission_policy=policy, term_grace=0.3, cancel_grace=0.5
    )


def featured(**options: object) -> AcpProviderConfig:
    """The agent that offers what ACP 1.21 added: commands, questions, costs, boolean options."""
    args = [FEATURES_AGENT, *(f"{key}={value}" for key, value in options.items())]
    return AcpProviderConfig(command=sys.executable, args=args, term_grace=0.3, cancel_grace=0.5)


def demo(persona: str, *extra: str, policy: str = "reject") -> AcpProviderConfig:
    return AcpProviderConfig(
        command=sys.executable,
        args=["-m", "acp_tui.demo.agent", "--persona", persona, *extra],
        permission_policy=policy,
        term_grace=0.3,
        cancel_grace=0.5,
    )


def skip_is_failure(report: Any, variable: str, *, reason_prefix: str = "") -> None:
    """Make `report` a failure when it is a skip (whose reason starts with `reason_prefix`) and
    `variable` is 1: CI sets it once it installed what the tests need, so a skip there means broken."""
    if not (report.skipped and os.environ.get(variable) == "1"):
        return
    reason = str(report.longrepr[2] if isinstance(report.longrepr, tuple) else report.longrepr)
    if reason.removeprefix("Skipped: ").startswith(reason_prefix):
        report.outcome = "failed"
        report.longrepr = f"{variable}=1, yet skipped: {reason}"


def unhurried(config: AcpProviderConfig) -> AcpProviderConfig:
    """The same agent with graces no loaded machine runs out of: whether it was signalled
    (`ended_by`) then says whether it honoured the cancel, not how busy the machine was."""
    return dataclasses.replace(config, cancel_grace=10.0, term_grace=10.0)


def our_live_processes() -> list[tuple[int, str]]:
    """Live (not zombie) processes started by this test session."""
    found = []
    mark = LEAK_MARK.encode()
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        pid = int(entry.name)
        environ, proc = read_environ(pid), read_proc(pid)  # (as the watchdog reads them)
        if environ is None or proc is None or proc.dead or mark not in environ:
            continue
        cmdline = ""
        with contextlib.suppress(OSError), open(f"/proc/{pid}/cmdline", "rb") as f:
            cmdline = f.read().replace(b"\0", b" ").decode(errors="replace")
        found.append((pid, cmdline))
    return found


# Real git in temporary repositories, with an identity of its own (never the user's config).
GIT_IDENTITY = ("-c", "user.name=acp-tui tests", "-c", "user.email=tests@acp-tui.invalid")


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", *GIT_IDENTITY, *args], cwd=repo, capture_output=True, text=True, check=True)
    return done.stdout


def read_trace(path: str | Path) -> list[dict[str, Any]]:
    """A protocol trace's entries as plain dicts (the product reads them with `lab.trace_file`)."""
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]
