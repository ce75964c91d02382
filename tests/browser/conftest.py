"""`acp-tui serve` under test: a real server process, plain HTTP clients, and headless Chromium.

The browser is Debian's `chromium`, driven by Playwright (which must not fetch browsers of its own).
Where it or the web extra is missing, the tests skip with the reason; with
ACP_TUI_REQUIRE_BROWSER=1 (CI) such a skip is a failure.
"""

from __future__ import annotations

import json
import os
import re
import select
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import our_live_processes, skip_is_failure

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]
PROMPT = "Hello from the browser"
READY = "no run yet"  # the header's subtitle, set at the end of the app's on_mount: keys reach the prompt
STOP_WAIT = 30.0  # seconds for the server to end its tabs and itself (each tab has 10 s to quit)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    outcome: Any = yield
    skip_is_failure(outcome.get_result(), "ACP_TUI_REQUIRE_BROWSER")


@pytest.fixture
def web_extra() -> None:
    pytest.importorskip("textual_serve", reason="the web extra is not installed: pip install 'acp-tui[web]'")


@pytest.fixture
def browser(tmp_path: Path) -> Iterator[Any]:
    """Per test: the leak check would count a browser kept across tests (it carries the session's mark)."""
    if not os.access(CHROMIUM, os.X_OK):
        pytest.skip(f"no {CHROMIUM}: apt-get install chromium")
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    pytest.importorskip("textual_serve", reason="the web extra is not installed: pip install 'acp-tui[web]'")
    with sync_api.sync_playwright() as playwright:
        env = isolated_env(tmp_path / "browser")  # its crash reports and caches stay in there
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, env=env)
        yield chromium
        chromium.close()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def isolated_env(root: Path) -> dict[str, str]:
    """Our environment (the test session's mark included) with a home and XDG folders of its own."""
    dirs = {
        name: root / name.lower()
        for name in ("HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME", "XDG_DATA_HOME")
    }
    dirs["ACP_TUI_HOME"] = root / "acp-tui"  # acp-tui's own folders (logs too) under the root as well
    for path in dirs.values():
        path.mkdir(parents=True, exist_ok=True)
    return {**os.environ, **{name: str(path) for name, path in dirs.items()}}


@dataclass
class Served:
    process: subprocess.Popen[str]
    url: str
    name: str  # the host the URL names: one of our own, `acp-tui-<random>.localhost`
    port: int
    token: str
    root: Path  # home, XDG folders, config

    @property
    def netloc(self) -> str:
        """What the Host header of a request to us must say (a plain client connects to 127.0.0.1)."""
        return f"{self.name}:{self.port}"

    def others(self) -> list[tuple[int, str]]:
        """The server's live descendants: the tabs' apps and their agents (not the browser's)."""
        ours = dict(our_live_processes())
        parents = {pid: parent_of(pid) for pid in ours}
        found, frontier = {}, {self.process.pid}
        while frontier:
            frontier = {pid for pid, parent in parents.items() if parent in frontier and pid not in found}
            found.update((pid, ours[pid]) for pid in frontier)
        return sorted(found.items())

    def stop(self, sig: int = signal.SIGINT) -> int:
        self.process.send_signal(sig)
        return self.process.wait(STOP_WAIT)


def parent_of(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return 0
    return int(stat[stat.rfind(b")") + 2 :].split()[1])


def read_line(process: subprocess.Popen[str], timeout: float) -> str:
    assert process.stdout is not None
    ready, _, _ = select.select([process.stdout], [], [], timeout)
    return process.stdout.readline() if ready else ""


def start_server(root: Path, *args: str, port: int | None = None) -> Served:
    """`python -m acp_tui ARGS` (ARGS holding `serve`), `--port` added; returns once the URL is printed."""
    port = port or free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "acp_tui", *args, "--port", str(port)],
        cwd=root,
        env=isolated_env(root),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    line = read_line(process, 30)
    found = re.search(r"http://(acp-tui-[0-9a-f]{16}\.localhost):(\d+)/\?token=([\w-]+)", line)
    if found is None:
        process.kill()
        _, err = process.communicate()
        pytest.fail(f"no URL printed: {line!r}, stderr: {err!r}")
    assert int(found[2]) == port
    return Served(process, found[0], found[1], port, found[3], root)


@pytest.fixture
def serve_with(tmp_path: Path) -> Iterator[Any]:
    """Start servers; every one still running at the end is stopped (SIGINT) and must exit 0."""
    started: list[Served] = []

    def start(*args: str, port: int | None = None) -> Served:
        served = start_server(tmp_path, *args, port=port)
        started.append(served)
        return served

    yield start
    for served in started:
        if served.process.poll() is None:
            try:
                assert served.stop() == 0
            finally:
                if served.process.poll() is None:
                    served.process.kill()
                    served.process.wait()
        served.process.communicate()


def wait_gone(pids: list[int], timeout: float) -> list[int]:
    """Wait (on pidfds: no polling) until every pid has exited; return those still alive."""
    fds = {}
    for pid in pids:
        try:
            fds[os.pidfd_open(pid)] = pid
        except ProcessLookupError:
            continue
    deadline = time.monotonic() + timeout
    try:
        while fds and (left := deadline - time.monotonic()) > 0:
            ready, _, _ = select.select(list(fds), [], [], left)
            for fd in ready:
                os.close(fd)
                del fds[fd]
        return sorted(fds.values())
    finally:
        for fd in fds:
            os.close(fd)


def wait_until(condition: Callable[[], bool], what: str, timeout: float = 60.0) -> None:
    """Until `condition()` holds, checked every 20 ms: for what no event tells, such as a file an agent
    writes. (The app's drawing is no proof that an agent answered: the answer view may paint late.)"""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


def prompts_received(work: Path) -> list[Any]:
    """The prompts the agents working in `work` received (`record=received.jsonl`), in order."""
    try:
        lines = (work / "received.jsonl").read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        return []
    messages = [json.loads(line) for line in lines if line.endswith("}")]  # a line being written: next time
    return [m["params"]["prompt"] for m in messages if m.get("method") == "session/prompt"]


def write_config(root: Path, *agent_args: str, names: tuple[str, ...] = ("scribe",)) -> tuple[Path, Path]:
    """A config of scripted (stdlib) agents working in `root/work` (each records what it receives
    there: `prompts_received`); returns (config, work).
    """
    from tests.helpers import SCRIPTED_AGENT

    work = root / "work"
    work.mkdir(exist_ok=True)
    q = json.dumps  # a TOML basic string, for what we write here
    args = ", ".join(q(a) for a in (SCRIPTED_AGENT, "record=received.jsonl", *agent_args))
    agents = "".join(
        f"[[agent]]\nname = {q(name)}\ncommand = {q(sys.executable)}\nargs = [{args}]\ncwd = {q(str(work))}\n"
        for name in names
    )
    config = root / "agents.toml"
    # No warm spares: each tab runs exactly the agents it was asked for (spares: tests/conversations).
    config.write_text(f"prompt = {q(PROMPT)}\nwarm = false\n{agents}", encoding="utf-8")
    return config, work
