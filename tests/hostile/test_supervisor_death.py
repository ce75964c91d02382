"""When acp-tui itself dies by SIGKILL, no child of its runs may keep running.

A real `acp-tui run` and a real app (under a pseudo-terminal) start stubborn children: a wrapper
launcher whose grandchild ignores session/cancel, SIGTERM and the end of stdin, and the demo's
`stubborn` persona (only SIGKILL ends it). Once they are live we SIGKILL acp-tui and require every
process group it started to be gone: nothing but the watchdog can end them. How soon is a figure
for `benchmarks/`; the test's timeout is its only clock. The children inherit the test session's
mark (tests/helpers.py), which is how we find them; acp-tui's watchdog has a scrubbed environment
of its own and is found by its command line instead: it must be gone afterwards too.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import pty
import signal
import struct
import subprocess
import sys
import termios
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.helpers import SCRIPTED_AGENT, our_live_processes

READY_TIMEOUT = 30.0


def write_config(tmp_path: Path, record: Path) -> Path:
    wrapped = [
        SCRIPTED_AGENT,
        "wrapper=1",
        "forever=1",
        "on_cancel=ignore",
        "ignore_term=1",
        "delay=0.2",
        f"record={record}",
        "stderr_at_prompt=READY wrapped",
    ]
    stubborn = ["-m", "acp_tui.demo.agent", "--persona", "stubborn", "--delay", "0.2"]
    python = json.dumps(sys.executable)
    config = tmp_path / "agents.toml"
    config.write_text(
        'prompt = "keep going"\n'
        f'[[agent]]\nname = "wrapped"\ncommand = {python}\nargs = {json.dumps(wrapped)}\n'
        f'[[agent]]\nname = "stubborn"\ncommand = {python}\nargs = {json.dumps(stubborn)}\n'
    )
    return config


def stat_fields(pid: int) -> list[bytes]:
    """The fields of /proc/PID/stat after the command name: state, ppid, pgrp, ..."""
    with open(f"/proc/{pid}/stat", "rb") as f:
        stat = f.read()
    return stat[stat.rfind(b")") + 2 :].split()


def live_groups(pgids: set[int]) -> dict[int, list[int]]:
    """Which of `pgids` still have a live (not zombie) member, any process of the machine."""
    found: dict[int, list[int]] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError, IndexError, ValueError):
            fields = stat_fields(int(entry.name))
            if fields[0] not in (b"Z", b"X") and int(fields[2]) in pgids:
                found.setdefault(int(fields[2]), []).append(int(entry.name))
    return found


def children_of_the_session(supervisor: int) -> dict[int, list[tuple[int, str]]]:
    """Our marked processes other than the supervisor, by process group."""
    groups: dict[int, list[tuple[int, str]]] = {}
    for pid, cmdline in our_live_processes():
        if pid == supervisor:
            continue
        with contextlib.suppress(OSError, IndexError, ValueError):
            groups.setdefault(int(stat_fields(pid)[2]), []).append((pid, cmdline))
    return groups


def watchdogs_of(supervisor: int) -> list[int]:
    """acp-tui's watchdog processes started by `supervisor` (unmarked, found by command line)."""
    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError, IndexError, ValueError):
            with open(f"/proc/{entry.name}/cmdline", "rb") as f:
                cmdline = f.read()
            if b"watchdog.py" in cmdline and int(stat_fields(int(entry.name))[1]) == supervisor:
                found.append(int(entry.name))
    return found


def ignores_sigterm(pid: int) -> bool:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("SigIgn:"):
                return bool(int(line.split()[1], 16) & (1 << (signal.SIGTERM - 1)))
    return False


def wait_for(condition: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)


def stubborn_groups_ready(supervisor: int, record: Path, each: int = 1) -> Callable[[], bool]:
    """`each` groups of both children live and stubborn (the app adds a warm spare per agent): the
    wrapper's grandchild got the prompt, the demo ignores SIGTERM (it sets that up once its code runs)."""

    def ready() -> bool:
        groups = children_of_the_session(supervisor)
        wrapped = [g for g in groups.values() if any("wrapper=1" in c for _, c in g)]
        demo = [g for g in groups.values() if any("--persona stubborn" in c for _, c in g)]
        return (
            len(wrapped) == each
            and all(len(g) == 2 for g in wrapped)  # the launcher and its grandchild, one group
            and len(demo) == each
            and all(ignores_sigterm(pid) for g in demo for pid, _ in g)
            and record.exists()
            and "session/prompt" in record.read_text()
        )

    return ready


def kill_and_wait_for_the_groups(supervisor: subprocess.Popen[bytes], expected: int = 2) -> None:
    groups = set(children_of_the_session(supervisor.pid))
    watchdogs = watchdogs_of(supervisor.pid)
    assert len(groups) == expected, groups
    assert supervisor.pid not in groups  # each child leads a group of its own
    assert len(watchdogs) == 1, watchdogs
    os.kill(supervisor.pid, signal.SIGKILL)
    while live_groups(groups):
        time.sleep(0.005)
    supervisor.wait(5)
    # The watchdog did its job and is gone too.
    wait_for(
        lambda: (
            not any(
                os.path.exists(f"/proc/{pid}") and stat_fields(pid)[0] not in (b"Z", b"X")
                for pid in watchdogs
            )
        ),
        2.0,
        "the watchdog to exit",
    )


@pytest.fixture
def reaper() -> Iterator[list[subprocess.Popen[bytes]]]:
    """Whatever happens in the test, the supervisors it started are killed and reaped."""
    started: list[subprocess.Popen[bytes]] = []
    yield started
    for process in started:
        if process.poll() is None:
            process.kill()
        process.wait(5)


def test_sigkill_of_a_real_acp_tui_run_ends_every_child_group(
    tmp_path: Path, reaper: list[subprocess.Popen[bytes]]
) -> None:
    record = tmp_path / "wrapped.jsonl"
    config = write_config(tmp_path, record)
    supervisor = subprocess.Popen(
        [sys.executable, "-m", "acp_tui", "run", "--config", str(config), "--prompt", "keep going"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        cwd=tmp_path,
    )
    reaper.append(supervisor)
    assert supervisor.stderr is not None
    forwarded: list[bytes] = []
    threading.Thread(target=lambda: forwarded.extend(supervisor.stderr or ()), daemon=True).start()

    wait_for(stubborn_groups_ready(supervisor.pid, record), READY_TIMEOUT, "both stubborn children")
    # Headless forwards the agents' stderr: both are in their turn, streaming.
    wait_for(lambda: any(b"[wrapped] READY wrapped" in line for line in forwarded), 5, "the wrapped prompt")
    wait_for(
        lambda: any(b"[stubborn] demo agent: prompt" in line for line in forwarded), 10, "the demo prompt"
    )

    kill_and_wait_for_the_groups(supervisor)
    assert our_live_processes() == []


def test_sigkill_of_the_real_app_ends_every_child_group(
    tmp_path: Path, reaper: list[subprocess.Popen[bytes]]
) -> None:
    record = tmp_path / "wrapped.jsonl"
    config = write_config(tmp_path, record)
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 140, 0, 0))
    env = {**os.environ, "TERM": "xterm-256color", "COLUMNS": "140", "LINES": "40"}
    supervisor = subprocess.Popen(
        [sys.executable, "-m", "acp_tui", "--config", str(config)],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        env=env,
        cwd=tmp_path,
        start_new_session=True,
    )
    reaper.append(supervisor)
    os.close(slave)
    screen = bytearray()

    def drain() -> None:  # the app must never block on a full terminal
        with contextlib.suppress(OSError):
            while chunk := os.read(master, 1 << 16):
                screen.extend(chunk)

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    try:
        wait_for(lambda: b"wrapped" in screen and b"stubborn" in screen, READY_TIMEOUT, "the app's welcome")
        time.sleep(0.3)  # the prompt bar takes the focus once mounted
        os.write(master, b"\r")  # Enter: fan the prompt out
        # Each agent's run and the warm spare started in its place once the prompt took the first.
        ready = stubborn_groups_ready(supervisor.pid, record, each=2)
        wait_for(ready, READY_TIMEOUT, "both stubborn children and their spares")
        time.sleep(0.5)  # the demo is past its handshake by now: streaming in its endless turn
        kill_and_wait_for_the_groups(supervisor, expected=4)
    finally:
        os.close(master)
        reader.join(5)
    assert our_live_processes() == []
