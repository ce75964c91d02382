"""The real app in a real pseudo-terminal: what reaches the terminal, and a terminal that goes away.

The app runs as a child process whose controlling terminal is the pty's slave side; the test
reads every byte it writes on the master side (a reader thread, so the app never blocks on a full
pty). Closing the master is closing the terminal window: the kernel sends SIGHUP.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import signal
import struct
import subprocess
import sys
import termios
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.helpers import SCRIPTED_AGENT, our_live_processes

HOSTILE_AGENT = str(Path(__file__).with_name("hostile_agent.py"))
ROOT = Path(__file__).parents[2]

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a Linux pty and /proc")


class Terminal:
    def __init__(self, master: int, process: subprocess.Popen[bytes]) -> None:
        self.master = master
        self.process = process
        self.output = bytearray()
        self._lock = threading.Lock()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        while True:
            try:
                data = os.read(self.master, 65536)
            except OSError:
                return
            if not data:
                return
            with self._lock:
                self.output += data

    def seen(self) -> bytes:
        with self._lock:
            return bytes(self.output)

    def wait_for(self, condition: object) -> None:
        """Until `condition()` holds while the app runs; the test's timeout is the only clock."""
        while not condition():  # type: ignore[operator]
            assert self.process.poll() is None, f"the app exited with {self.process.returncode}"
            time.sleep(0.02)

    def type(self, data: bytes) -> None:
        os.write(self.master, data)


def _become_terminal_owner() -> None:
    os.setsid()
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


@contextmanager
def in_a_pty(
    argv: list[str], cwd: Path, columns: int = 120, rows: int = 40, typed: bytes = b""
) -> Iterator[Terminal]:
    """`argv` (run by our Python) on a pseudo-terminal of its own, as its controlling terminal;
    `typed` is typed before it starts (the terminal then in its cooked mode, as a shell leaves it)."""
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))
    os.write(master, typed)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TERM": "xterm-256color"}
    process = subprocess.Popen(
        [sys.executable, *argv],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        preexec_fn=_become_terminal_owner,
        env=env,
        cwd=cwd,
    )
    os.close(slave)
    terminal = Terminal(master, process)
    try:
        yield terminal
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        with contextlib.suppress(OSError):  # closed by the test already
            os.close(master)


@contextmanager
def app_in_a_pty(config: Path, columns: int = 120, rows: int = 40, typed: bytes = b"") -> Iterator[Terminal]:
    with in_a_pty(["-m", "acp_tui", "--config", str(config)], ROOT, columns, rows, typed) as terminal:
        yield terminal


def agents_file(directory: Path, agents: dict[str, list[str]]) -> Path:
    """A config of exactly these agents (the demo set is not added), each `python SCRIPT OPTIONS`."""
    path = directory / "agents.toml"
    path.write_text(
        "warm = false\n\n"  # the processes counted are the runs' (spares have a test of their own)
        + "".join(
            f"[[agent]]\nname = {json.dumps(name)}\ncommand = {json.dumps(sys.executable)}\n"
            f"args = {json.dumps(args)}\n\n"
            for name, args in agents.items()
        )
    )
    return path


def children_of(pid: int) -> list[int]:
    found = []
    for pid_text, cmd in our_live_processes():
        try:
            with open(f"/proc/{pid_text}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        if int(stat[stat.rfind(b")") + 2 :].split()[1]) == pid and "watchdog" not in cmd:
            found.append(pid_text)
    return found


def test_closing_the_terminal_with_live_runs_ends_everything(tmp_path: Path) -> None:
    marks = [tmp_path / f"agent{n}.jsonl" for n in range(2)]
    config = agents_file(
        tmp_path,
        {
            "stubborn": [
                SCRIPTED_AGENT,
                "forever=1",
                "on_cancel=ignore",
                "ignore_term=1",
                f"record={marks[0]}",
            ],
            "steady": [SCRIPTED_AGENT, "forever=1", "delay=0.1", f"record={marks[1]}"],
        },
    )
    with app_in_a_pty(config) as terminal:
        terminal.wait_for(lambda: b"send to" in terminal.seen())
        terminal.type(b"\r")  # Enter: both agents start
        terminal.wait_for(lambda: all(m.exists() and "session/prompt" in m.read_text() for m in marks))
        app = terminal.process.pid
        agents_pids = children_of(app)
        assert len(agents_pids) == 2
        os.close(terminal.master)  # the window is closed: SIGHUP
        terminal.process.wait()  # the test's timeout is the only clock
        for pid in agents_pids:
            stat = Path(f"/proc/{pid}/stat")
            assert not stat.exists() or stat.read_text().split()[2] in "ZX"


def test_an_enter_typed_before_the_app_holds_the_terminal_sends_and_the_terminal_is_given_back(
    tmp_path: Path,
) -> None:
    """The terminal's cooked mode turned that Enter into a newline (ctrl+j: a new line in the prompt)."""
    config = agents_file(tmp_path, {"echo": [SCRIPTED_AGENT, "text=said {prompt}"]})
    with app_in_a_pty(config, typed=b"\r") as terminal:
        before = termios.tcgetattr(terminal.master)
        assert before[0] & termios.ICRNL and before[3] & termios.ICANON  # cooked, as the shell left it
        terminal.wait_for(lambda: b"said Explain" in terminal.seen() and b"1 completed" in terminal.seen())
        terminal.type(b"\x03")  # ctrl+c: nothing live, it quits at once
        terminal.process.wait(timeout=20)
        assert termios.tcgetattr(terminal.master) == before  # the terminal's own mode again


def test_keys_typed_before_the_prompts_text_box_is_there_type_into_it_in_order(tmp_path: Path) -> None:
    """The first frame draws the prompt's stand-in; keys typed before the text box replaces it (here
    before the app even holds the terminal, and at the first frame) wait for the box, then type."""
    config = agents_file(tmp_path, {"echo": [SCRIPTED_AGENT, "text=said {prompt}"]})
    config.write_text('prompt = "go"\n' + config.read_text())
    with app_in_a_pty(config, typed=b"abc") as terminal:
        terminal.wait_for(lambda: b"send to" in terminal.seen())
        terminal.type(b"def\r")
        terminal.wait_for(lambda: b"said goabcdef" in terminal.seen() and b"1 completed" in terminal.seen())
        terminal.type(b"\x03")
        terminal.process.wait(timeout=20)


def test_sigterm_is_honoured_with_live_runs(tmp_path: Path) -> None:
    config = agents_file(tmp_path, {"steady": [SCRIPTED_AGENT, "forever=1", "delay=0.1"]})
    with app_in_a_pty(config) as terminal:
        terminal.wait_for(lambda: b"send to" in terminal.seen())
        terminal.type(b"\r")
        terminal.wait_for(lambda: bool(children_of(terminal.process.pid)))
        terminal.process.send_signal(signal.SIGTERM)
        terminal.process.wait(timeout=3)
    assert [cmd for _, cmd in our_live_processes() if "watchdog" not in cmd] == []


def test_no_escape_sequence_from_an_agent_reaches_the_terminal_raw(tmp_path: Path) -> None:
    config = agents_file(tmp_path, {"hostile": [HOSTILE_AGENT, "stage=complete"]})
    with app_in_a_pty(config, columns=200, rows=50) as terminal:
        terminal.wait_for(lambda: b"send to" in terminal.seen())
        terminal.type(b"\r")
        terminal.wait_for(lambda: b"completed" in terminal.seen())
        # The agent's text reaches the screen (a pane first painted at its end shows its answer at
        # the answer's next step, a moment later)...
        terminal.wait_for(lambda: b"pwned-title" in terminal.seen())
        terminal.type(b"e")  # the stderr view, with its escape-laden line
        terminal.wait_for(lambda: b"stderr:" in terminal.seen())
        terminal.type(b"\x03")  # ctrl+c
        terminal.process.wait(timeout=10)
    seen = terminal.seen()
    for raw in (b"\x1b]0;pwned", b"\x1b]52;c;cHduZWQ=", b"\x1b[2J \x1b[6n", "\u202e".encode()):
        assert raw not in seen, f"{raw!r} reached the terminal raw"  # ...but never as a sequence
    assert b"\\x1b]52;c;cHduZWQ=" in seen
