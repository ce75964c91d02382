"""Start-up: `acp-tui` (demo presets) to first painted frame, and to the first answer chunk after Enter.

    python benchmarks/startup.py [--pairs N] [--settle SECONDS] [--compare COMMAND]

Measured in a real pseudo-terminal (`_pty.PtyApp`, 160x45, TERM=xterm-256color), as a user sees it:
the app is spawned on the pty's slave side and we read the master side, strip the escape sequences,
and look for text. acp-tui's folders are a temporary one (`ACP_TUI_HOME`: no config, the demo
agents), and its bytecode is compiled first, as installing it does (see `compile_bytecode`).

- first frame: from spawn until the prompt bar's "send to:" label has been painted.
- first chunk: we press Enter ("\\r") as soon as the first frame is there (or after --settle
  seconds), and time until "You asked" (the start of the demo answers) has been painted.
  Then ctrl+c quits the app, which disposes every run; the benchmark checks nothing is left.

References, in the same rounds (rotating which goes first):
- minimal_app.py: the least Textual app with an input and a label, to its first frame (the floor
  Textual itself sets). Target: the app's first frame within 1.2x of it (issue 20).
- bare_client.py --first-chunk: spawns the same three demo agents, imports the SDK, initialize,
  session/new, prompt; time from its spawn to the first answer chunk of any agent. Target: the
  app's Enter-to-first-chunk within 1.2x of it.
- --compare COMMAND: another build's `acp-tui` (say a checkout of main, its bytecode compiled), to
  its first frame in the same rounds: a change's before and after, each a ratio to the same
  minimal app.
"""

from __future__ import annotations

import argparse
import os
import shlex
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable

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
from _pty import PtyApp

COLS, ROWS = 160, 45
FRAME_MARK = "send to:"
ANSWER_MARK = "You asked"
TIMEOUT = 60.0
FRAME_TARGET = 1.2  # the first frame, at most this ratio to the minimal app's


def app_env(home: str) -> dict[str, str]:
    """The environment of both programs: a terminal, and acp-tui's folders (no config: the demo
    agents) under `home`."""
    env = dict(os.environ)
    env.update(TERM="xterm-256color", COLUMNS=str(COLS), LINES=str(ROWS), ACP_TUI_HOME=home)
    env.pop("TEXTUAL", None)
    return env


def compile_bytecode() -> None:
    """acp-tui's bytecode, as installing it (a wheel) writes it: with `PYTHONDONTWRITEBYTECODE`
    set (as on these machines) an editable install compiles every module at every start, ~50 ms
    of its first frame that no installed copy pays. Textual's, like any installed library's, is
    there already."""
    import compileall

    import acp_tui

    compileall.compile_dir(os.path.dirname(acp_tui.__file__), quiet=1)


def measure_app(env: dict[str, str], settle: float, out: dict[str, list[float]]) -> float:
    app = PtyApp(acp_tui_command(), env, COLS, ROWS)
    try:
        frame_at = app.wait_for(FRAME_MARK)
        if settle:
            app.idle(settle)
        since = len(app.text)
        enter_at = app.send(b"\r")
        chunk_at = app.wait_for(ANSWER_MARK, since=since)
    finally:
        app.close()
    out["frame"].append(frame_at - app.started)
    out["chunk"].append(chunk_at - enter_at)
    return frame_at - app.started


def measure_frame(command: list[str], env: dict[str, str]) -> float:
    app = PtyApp(command, env, COLS, ROWS)
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


def frame_row(what: str, times: list[float], minimal: list[float]) -> list[object]:
    ratio = median(ratios(times, minimal))
    return [
        what,
        median(times),
        "minimal Textual app",
        median(minimal),
        ratio,
        f"<= {FRAME_TARGET}x",
        verdict(ratio <= FRAME_TARGET),
    ]


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--pairs", type=int, default=10, help="rounds (default 10)")
    parser.add_argument("--settle", type=float, default=0.0, help="seconds between first frame and Enter")
    parser.add_argument("--compare", metavar="COMMAND", help="another build's acp-tui: its first frame too")
    args = parser.parse_args()

    from acp_tui.settings.schema import DEFAULT_PROMPT

    header("Start-up in a pseudo-terminal: first frame, and first answer chunk after Enter")
    commands = demo_commands()
    app_times: dict[str, list[float]] = {"frame": [], "chunk": []}
    minimal = [PY, str(HERE / "minimal_app.py")]
    compared = shlex.split(args.compare) if args.compare else None
    compile_bytecode()
    with tempfile.TemporaryDirectory() as home:
        env = app_env(home)
        subjects: dict[str, Callable[[], float]] = {
            "app": lambda: measure_app(env, args.settle, app_times),
            "minimal": lambda: measure_frame(minimal, env),
            "bare": lambda: measure_bare(DEFAULT_PROMPT, commands),
        }
        if compared:
            subjects["compared"] = lambda: measure_frame(compared, env)
        try:
            measure_app(env, args.settle, {"frame": [], "chunk": []})  # warm-up
            for name, measure in subjects.items():
                if name != "app":
                    measure()
            series = rotating(args.pairs, subjects, label="startup")
        finally:
            end_progress()
            left = wait_no_marked_processes()
            if left:
                kill_marked()
    chunk_ratio = median(ratios(app_times["chunk"], series["bare"]))
    frames = [("first frame", app_times["frame"])]
    if compared:
        frames.append((f"first frame of {shlex.join(compared)}", series["compared"]))
    print(
        table(
            ["what", "acp-tui s", "reference", "reference s", "ratio", "target", "verdict"],
            [
                *(frame_row(what, times, series["minimal"]) for what, times in frames),
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
