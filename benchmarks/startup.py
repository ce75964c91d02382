"""Start-up: `acp-tui` (demo presets) to first painted frame, and to the first answer chunk after Enter.

    python benchmarks/startup.py [--pairs N] [--settle SECONDS]

Measured in a real pseudo-terminal (stdlib `pty`, 160x45, TERM=xterm-256color), as a user sees it:
the app is spawned on the pty's slave side and we read the master side, strip the escape sequences,
and look for text.

- first frame: from spawn until the prompt bar's "send to:" label has been painted.
- first chunk: we press Enter ("\\r") as soon as the first frame is there (or after --settle
  seconds), and time until "You asked" (the start of the demo answers) has been painted.
  Then ctrl+c quits the app, which disposes every run; the benchmark checks nothing is left.

References, in the same rounds (rotating which goes first):
- minimal_app.py: the least Textual app with an input and a label, to its first frame (the floor
  Textual itself sets; the target is absolute: < 1.0 s).
- bare_client.py --first-chunk: spawns the same three demo agents, imports the SDK, initialize,
  session/new, prompt; time from its spawn to the first answer chunk of any agent. Target: the
  app's Enter-to-first-chunk within 1.2x of it.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import os
import re
import select
import shlex
import signal
import struct
import subprocess
import sys
import tempfile
import termios
import time

from _common import (
    BARE_CLIENT,
    HERE,
    PY,
    acp_tui_command,
    end_progress,
    header,
    kill_marked,
    median,
    ratios,
    rotating,
    table,
    verdict,
    wait_no_marked_processes,
)

COLS, ROWS = 160, 45
ANSI = re.compile(
    rb"\x1b\[[0-9;?<>=!]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[()*+][0-9A-Za-z]|\x1b[=>78NOPc]"
)
FRAME_MARK = b"send to:"
ANSWER_MARK = b"You asked"
TIMEOUT = 60.0


class PtyApp:
    """A program on a pseudo-terminal, whose painted text we can wait for."""

    def __init__(self, argv: list[str], env: dict[str, str]) -> None:
        master, slave = os.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLS, 0, 0))
        self.master = master
        self.started = time.perf_counter()
        self.proc = subprocess.Popen(
            argv,
            stdin=slave,
            stdout=slave,
            stderr=slave,
            env=env,
            start_new_session=True,
            preexec_fn=lambda: fcntl.ioctl(0, termios.TIOCSCTTY, 0),
        )
        os.close(slave)
        self.screen = b""  # everything painted so far, escape sequences stripped
        self._raw = b""

    def wait_for(self, text: bytes, since: int = 0, timeout: float = TIMEOUT) -> float:
        """perf_counter() when `text` was first painted after offset `since` of the stripped output."""
        deadline = time.perf_counter() + timeout
        while text not in self.screen[since:]:
            left = deadline - time.perf_counter()
            if left <= 0:
                raise TimeoutError(f"{text!r} not painted within {timeout} s")
            ready, _, _ = select.select([self.master], [], [], min(left, 0.5))
            if ready:
                try:
                    data = os.read(self.master, 1 << 16)
                except OSError:
                    raise TimeoutError("the app closed its terminal") from None
                now = time.perf_counter()
                self._raw += data
                # Strip only up to the last ESC that could start an unfinished sequence.
                cut = self._raw.rfind(b"\x1b")
                if cut == -1 or len(self._raw) - cut > 64:
                    cut = len(self._raw)
                self.screen += ANSI.sub(b"", self._raw[:cut])
                self._raw = self._raw[cut:]
                if text in self.screen[since:]:
                    return now
        return time.perf_counter()

    def send(self, data: bytes) -> float:
        now = time.perf_counter()
        os.write(self.master, data)
        return now

    def drain(self) -> None:
        while select.select([self.master], [], [], 0)[0]:
            try:
                if not os.read(self.master, 1 << 16):
                    return
            except OSError:
                return

    def close(self, quit_key: bytes = b"\x03", timeout: float = 20.0) -> None:
        """Quit the way a user does, and wait for the process; force it only if it hangs."""
        with contextlib.suppress(OSError):
            self.send(quit_key)
        deadline = time.perf_counter() + timeout
        while self.proc.poll() is None and time.perf_counter() < deadline:
            self.drain()
            time.sleep(0.02)
        if self.proc.poll() is None:
            print(f"warning: {self.proc.args[0]} did not quit within {timeout} s; killed", file=sys.stderr)
            self.proc.kill()
            self.proc.wait()
        os.close(self.master)


def app_env(config_home: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update(TERM="xterm-256color", COLUMNS=str(COLS), LINES=str(ROWS), XDG_CONFIG_HOME=config_home)
    env.pop("TEXTUAL", None)
    return env


def measure_app(env: dict[str, str], settle: float, out: dict[str, list[float]]) -> float:
    app = PtyApp(acp_tui_command(), env)
    try:
        frame_at = app.wait_for(FRAME_MARK)
        if settle:
            time.sleep(settle)
            app.drain()
        since = len(app.screen)
        enter_at = app.send(b"\r")
        chunk_at = app.wait_for(ANSWER_MARK, since=since)
    finally:
        app.close()
    out["frame"].append(frame_at - app.started)
    out["chunk"].append(chunk_at - enter_at)
    return frame_at - app.started


def measure_minimal(env: dict[str, str]) -> float:
    app = PtyApp([PY, str(HERE / "minimal_app.py")], env)
    try:
        return app.wait_for(FRAME_MARK) - app.started
    finally:
        app.close()


def demo_commands() -> list[str]:
    from acp_tui.settings.presets import demo_presets

    return [shlex.join([preset.command, *preset.args]) for preset in demo_presets()]


def measure_bare(prompt: str, commands: list[str]) -> float:
    argv = [PY, BARE_CLIENT, "--prompt", prompt, "--first-chunk", "--stop"]
    for command in commands:
        argv += ["--agent", command]
    start = time.perf_counter()
    done = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, timeout=TIMEOUT)
    first = [line for line in done.stdout.splitlines() if line.startswith("first-chunk ")]
    if not first:
        raise RuntimeError(f"the bare client saw no chunk: rc={done.returncode} {done.stdout[:200]!r}")
    return float(first[0].split()[1]) - start


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--pairs", type=int, default=10, help="rounds (default 10)")
    parser.add_argument("--settle", type=float, default=0.0, help="seconds between first frame and Enter")
    args = parser.parse_args()

    from acp_tui.settings.schema import DEFAULT_PROMPT

    header("Start-up in a pseudo-terminal: first frame, and first answer chunk after Enter")
    commands = demo_commands()
    app_times: dict[str, list[float]] = {"frame": [], "chunk": []}
    with tempfile.TemporaryDirectory() as config_home:
        env = app_env(config_home)
        try:
            measure_app(env, args.settle, {"frame": [], "chunk": []})  # warm-up
            measure_minimal(env)
            measure_bare(DEFAULT_PROMPT, commands)
            series = rotating(
                args.pairs,
                {
                    "app": lambda: measure_app(env, args.settle, app_times),
                    "minimal": lambda: measure_minimal(env),
                    "bare": lambda: measure_bare(DEFAULT_PROMPT, commands),
                },
                label="startup",
            )
        finally:
            end_progress()
            left = wait_no_marked_processes()
            if left:
                kill_marked()
    frame_ratio = median(ratios(app_times["frame"], series["minimal"]))
    chunk_ratio = median(ratios(app_times["chunk"], series["bare"]))
    print(
        table(
            ["what", "acp-tui s", "reference", "reference s", "ratio", "target", "verdict"],
            [
                [
                    "first frame",
                    median(app_times["frame"]),
                    "minimal Textual app",
                    median(series["minimal"]),
                    frame_ratio,
                    "< 1.0 s",
                    verdict(median(app_times["frame"]) < 1.0),
                ],
                [
                    "first chunk after Enter",
                    median(app_times["chunk"]),
                    "bare client, spawn to 1st chunk",
                    median(series["bare"]),
                    chunk_ratio,
                    "<= 1.2x",
                    verdict(chunk_ratio <= 1.2),
                ],
            ],
        )
    )
    when = f"{args.settle} s after it" if args.settle else "at the first frame"
    print(
        f"\n{len(app_times['frame'])} rounds; Enter {when};"
        f" demo presets: {', '.join(c.split()[-1] for c in commands)}"
    )
    print(f"processes left: {len(left)}")
    return 0


if __name__ == "__main__":
    signal.signal(signal.SIGINT, signal.default_int_handler)
    sys.exit(main())
