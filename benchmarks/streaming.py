"""Streaming: core throughput against the bare SDK client, and streaming panes (16 unless told) in the app.

    python benchmarks/streaming.py [--pairs N] [--chunks N] [--panes N] [--pane-chunks N]
                                   [--only core|app|paced] [--rate R] [--seconds S] [--rounds N] [--after N]

(a) Core throughput. One echo_agent.py child streams N chunks (default 50,000 numbered tokens,
    written as fast as the pipe takes them, so the client is the bottleneck). Same process, same
    child command, rotating which goes first in every round:
    - core: `AcpSubagentProvider(...).start(request)` then `await run.result()` (nobody reads events)
    - core+events (with --events): the same with one task draining `run.events()`, as the panes do
    - bare: asyncio subprocess + `acp.connect_to_agent`, a client that appends each chunk, initialize,
      session/new, prompt, close stdin, reap
    Each figure is chunks / seconds from start to result (spawn and teardown included, on both
    sides); every answer is checked to be exact. Target: core / bare >= 0.8.

(b) The app under load (headless `App.run_test`, 200x60): 16 panes, each an echo_agent.py child
    streaming 5,000 chunks. Every answer must be complete and exact at the end (the pane's
    Markdown source). Meanwhile a thread plays the terminal driver's input thread: every 50 ms it
    posts an `f12` key through `driver.process_message` (the path real key presses take) and times
    until the app has run the bound action (a non-priority app binding, so the key walks the focus
    chain first). Latency = action run - key posted. Reference: the same presses on the idle app
    before Enter. Target: p95 < 100 ms while streaming.

(c) At a model's pace, keys on a real pty (issue 20): acp-tui (`pty_app.py`, the command line,
    which at quit also writes each pane's shown answer for the check) on a pseudo-terminal of
    200x60, 16 panes, each an echo_agent.py child streaming Markdown with headings, lists and
    code blocks at `--rate` chunks/s (default 60) of 3-6 words for `--seconds` (default 60); the
    last one also asks a permission (policy `ask`) and streams on, waiting for the answer. After
    Enter: 10 s of streaming with no key (the app's CPU alone), then every 0.5 s a key is written
    to the pty, in turn tab, home, pagedown, b, escape, z, z, ?, escape, f2, escape, a, escape, and
    timed until the screen read back from the pty (`_pty.Grid`) shows its effect: the next pane's
    border heavy, the top of the answer shown or gone, the screen's title there or gone, the
    pane at full width or back. The same keys again once the streams end (the permission still
    waiting), then it is answered, every answer is checked exact, and ctrl+c quits.
    With `--panes N` above 16 (e.g. 64 at `--rate 15`: the same chunks a second in all), the panes
    below the first 16 are out of sight until the focus goes there, and the targets stay those of
    16 panes. Reference, in the same run, before and after the app: `minimal_app.py --panes 16`, the same
    keys doing the same kind of thing in plain Textual (focus, scroll, push, pop, zoom).
    Both with ESCDELAY=10 (Textual's wait after a lone escape byte, 100 ms by default in any
    Textual app). Targets: p95 per kind <= 1.5x the minimal app's, and <= 100 ms where
    the minimal app's is under 50 ms; CPU < 50 % of a core while streaming, < 60 % with a key every
    0.5 s; every answer exact. `ACP_TUI_BENCH_PROFILE=FILE` (or `_PROFILE_AFTER`) samples the
    app with py-spy (raw stacks) while it streams (or on the keys after).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

from _common import (
    ECHO_AGENT,
    HERE,
    PY,
    end_progress,
    header,
    median,
    pct,
    press_key,
    progress,
    ratios,
    table,
    verdict,
    wait_no_marked_processes,
)
from _pty import KEYS, Box, PtyApp, find_box
from echo_agent import markdown_text, stream_text

# (a) core throughput ---------------------------------------------------------------------------------


async def core_run(chunks: int, expected: str, drain_events: bool) -> float:
    from acp_tui import AcpProviderConfig, AcpSubagentProvider, SubagentRequest

    config = AcpProviderConfig(command=PY, args=[ECHO_AGENT, f"chunks={chunks}"])
    start = time.perf_counter()
    run = await AcpSubagentProvider(config).start(SubagentRequest(prompt="stream"))
    drain = None
    if drain_events:

        async def consume() -> None:
            async for _ in run.events():
                pass

        drain = asyncio.ensure_future(consume())
    result = await run.result()
    elapsed = time.perf_counter() - start
    if drain is not None:
        await drain
    if result.output != expected or result.stop_reason != "completed":
        raise AssertionError(f"core: {result.stop_reason} {result.error} {len(result.output)} chars")
    return chunks / elapsed


async def bare_run(chunks: int, expected: str) -> float:
    start = time.perf_counter()
    proc = await asyncio.create_subprocess_exec(
        PY, ECHO_AGENT, f"chunks={chunks}", stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE
    )
    import acp
    from acp.schema import ClientCapabilities, Implementation

    parts: list[str] = []

    class Client:
        async def session_update(self, session_id: str, update: object, **kwargs: object) -> None:
            if getattr(update, "session_update", None) == "agent_message_chunk":
                parts.append(update.content.text)  # type: ignore[attr-defined]

        async def request_permission(self, *args: object, **kwargs: object) -> None:
            raise NotImplementedError

    conn = acp.connect_to_agent(Client(), proc.stdin, proc.stdout)  # type: ignore[arg-type]
    await conn.initialize(
        protocol_version=acp.PROTOCOL_VERSION,
        client_capabilities=ClientCapabilities(),
        client_info=Implementation(name="bare", version="0"),
    )
    session = await conn.new_session(cwd=".", mcp_servers=[])
    response = await conn.prompt(session_id=session.session_id, prompt=[acp.text_block("stream")])
    assert proc.stdin is not None
    proc.stdin.close()
    await proc.wait()
    elapsed = time.perf_counter() - start
    await conn.close()
    if "".join(parts) != expected or response.stop_reason != "end_turn":
        raise AssertionError(f"bare: {response.stop_reason} {len(''.join(parts))} chars")
    return chunks / elapsed


async def core_throughput(pairs: int, chunks: int, with_events: bool) -> list[list[object]]:
    import acp  # noqa: F401  (both sides pay the import once, before anything is timed)

    expected = stream_text(chunks)
    subjects = {
        "core": lambda: core_run(chunks, expected, drain_events=False),
        "bare": lambda: bare_run(chunks, expected),
    }
    if with_events:
        subjects["core+events"] = lambda: core_run(chunks, expected, drain_events=True)
    for subject in subjects.values():
        await subject()  # warm-up
    names = list(subjects)
    series: dict[str, list[float]] = {name: [] for name in names}
    for i in range(pairs):
        shift = i % len(names)
        for name in names[shift:] + names[:shift]:
            series[name].append(await subjects[name]())
        progress(f"core round {i + 1}/{pairs}: " + "  ".join(f"{n} {series[n][-1]:,.0f}/s" for n in names))
    end_progress()
    rows = []
    for name in [n for n in ("core", "core+events") if n in series]:
        ratio = median(ratios(series[name], series["bare"]))
        rows.append(
            [
                f"{name} vs bare, {chunks:,} chunks",
                f"{median(series[name]):,.0f}/s",
                f"{median(series['bare']):,.0f}/s",
                ratio,
                ">= 0.8x",
                verdict(ratio >= 0.8),
            ]
        )
    return rows


# (b) the app under load ------------------------------------------------------------------------------


class KeyProbe:
    """Plays the driver's input thread: posts a key, times until the app ran its action."""

    def __init__(self, app: object, interval: float = 0.05) -> None:
        self.app = app
        self.interval = interval
        self.handled = threading.Event()
        self.samples: list[tuple[float, float]] = []  # (posted at, latency)
        self.lost = 0
        self.lost_after: list[int] = []  # (KeyPlayer) the turn of each press lost
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def on_action(self) -> None:
        self.handled.set()
        self.handled_at = time.perf_counter()

    def press_once(self) -> None:
        from textual import events

        driver = self.app._driver  # type: ignore[attr-defined]
        self.handled.clear()
        posted = time.perf_counter()
        self.before_probe(driver)
        driver.process_message(events.Key("f12", None))
        if self.handled.wait(10.0):
            self.samples.append((posted, self.handled_at - posted))
        else:
            self.lost += 1
            self.lost_after.append(getattr(self, "turn", 0))

    def before_probe(self, driver: object) -> None:
        """A key pressed just before the probe (none here)."""

    def start(self) -> None:
        def loop() -> None:
            while not self._stop.is_set():
                self.press_once()
                self._stop.wait(self.interval)

        self._thread = threading.Thread(target=loop, daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()


async def app_under_load(panes: int, chunks: int, idle_presses: int) -> tuple[list[list[object]], list[str]]:
    from textual.binding import Binding

    from acp_tui.settings.schema import AgentPreset, Settings
    from acp_tui.ui.app import SupervisorApp
    from acp_tui.ui.widgets.run_pane import RunPane

    probe: KeyProbe | None = None

    class ProbedApp(SupervisorApp):
        CSS_PATH = str(Path(sys.modules[SupervisorApp.__module__].__file__ or "").with_name("app.tcss"))
        BINDINGS = [*SupervisorApp.BINDINGS, Binding("f12", "bench_ping", "ping", show=False)]

        def action_bench_ping(self) -> None:
            if probe is not None:
                probe.on_action()

    presets = tuple(AgentPreset(f"a{i:02d}", PY, (ECHO_AGENT, f"chunks={chunks}")) for i in range(panes))
    app = ProbedApp(Settings(presets=presets, prompt="stream"))
    expected = stream_text(chunks)
    notes: list[str] = []
    async with app.run_test(size=(200, 60)) as pilot:
        await pilot.pause(0.5)
        probe = KeyProbe(app)
        await asyncio.to_thread(lambda: [probe.press_once() for _ in range(idle_presses)])  # type: ignore[union-attr]
        idle = [lat for _, lat in probe.samples]
        probe.samples.clear()

        started = time.perf_counter()
        probe.start()
        press_key(app, "enter")
        deadline = started + 300
        while True:
            found = list(app.query(RunPane))
            if len(found) == panes and all(p.attempt.result is not None for p in found):
                break
            if time.perf_counter() > deadline:
                raise TimeoutError("the panes did not finish within 300 s")
            await asyncio.sleep(0.05)
        results_at = time.perf_counter()
        # The result arrives before the pane's Markdown stream has flushed its last fragments.
        while not all(p.answer.text == expected for p in found):
            if time.perf_counter() > results_at + 30:
                break
            await asyncio.sleep(0.02)
        shown_at = time.perf_counter()
        await asyncio.to_thread(probe.stop)  # it may be waiting for a press the loop must handle
        loaded = [lat for posted, lat in probe.samples if posted <= shown_at]

        exact = sum(p.answer.text == expected for p in found)
        completed = sum(
            p.attempt.result is not None and p.attempt.result.stop_reason == "completed" for p in found
        )
        for p in found:
            source = p.answer.text
            if source != expected:
                notes.append(f"{p.agent}: {len(source)} of {len(expected)} chars shown")
        await app.action_quit()

    p95 = pct(loaded, 95)
    rows = [
        [
            f"{panes} panes x {chunks:,} chunks: complete and exact",
            f"{exact}/{panes} exact, {completed}/{panes} completed",
            "",
            "",
            "all",
            verdict(exact == panes and completed == panes),
        ],
        [
            "key press handled, p95 while streaming",
            f"{p95 * 1000:.0f} ms (p50 {median(loaded) * 1000:.0f},"
            f" max {max(loaded, default=0) * 1000:.0f}, n={len(loaded)})",
            f"idle p95 {pct(idle, 95) * 1000:.0f} ms",
            p95 / pct(idle, 95) if idle else float("nan"),
            "< 100 ms",
            verdict(p95 < 0.1 and probe.lost == 0),
        ],
        [
            "time to all results / all answers shown",
            f"{results_at - started:.2f} s / {shown_at - started:.2f} s",
            f"{panes * chunks / (shown_at - started):,.0f} chunks/s shown",
            "",
            "",
            "",
        ],
    ]
    if probe.lost:
        notes.append(f"{probe.lost} key presses not handled within 10 s")
    return rows, notes


# (c) at a model's pace, keys on a real pty ----------------------------------------------------------

COLUMNS, ROWS = 200, 60
# The keys pressed in turn, and the kind of action each is (compared with the same kind in the
# minimal app). After home, pagedown has something to show (a pinned answer is at its end already).
CYCLE = (
    ("tab", "focus"),
    ("home", "scroll"),
    ("pagedown", "scroll"),
    ("b", "push"),
    ("escape", "pop"),
    ("z", "zoom"),
    ("z", "zoom"),
    ("?", "push"),
    ("escape", "pop"),
    ("f2", "push"),
    ("escape", "pop"),
    ("a", "push"),
    ("escape", "pop"),
)
SCREEN_OF = {"b": "board", "?": "help", "f2": "agents", "a": "answer"}
ASKING = "m15"  # the pane whose agent asks a permission (and streams on meanwhile)
SHOWN = 16  # panes on the screen at 200x60; more are below, out of sight until the focus goes there


class KeyPlayer:
    """Presses the cycle's keys on a pty and times each until the screen shows its effect."""

    def __init__(self, app: PtyApp, panes: int) -> None:
        from minimal_app import TITLES

        self.app = app
        self.names = [f"m{i:02d}" for i in range(panes)]
        self.focused = 0  # the pane with the focus: the first, after Enter
        self.titles = TITLES
        self.samples: list[tuple[str, str, float]] = []  # key, kind, seconds
        self.lost: list[str] = []
        self._open = ""  # the title of the screen pushed

    def lines(self) -> list[str]:
        return self.app.grid.lines()

    def shows(self, words: str) -> bool:
        return any(words in line for line in self.lines())

    def box(self) -> Box | None:
        return find_box(self.lines(), self.names[self.focused])

    def painted(self, key: str) -> Callable[[], bool]:
        """The screen state that says `key` was done (decided before it is pressed)."""
        if key == "tab":
            self.focused = (self.focused + 1) % len(self.names)
            return lambda: (box := self.box()) is not None and box.heavy
        if key in ("home", "pagedown"):
            top = key == "home"
            return lambda: (
                (box := self.box()) is not None
                and box.heavy
                and (any("Part 0" in line for line in box.inside(self.lines())) == top)
            )
        if key == "z":
            zoom = (box := self.box()) is not None and box.width < COLUMNS // 2
            return lambda: (box := self.box()) is not None and (box.width >= COLUMNS - 4) == zoom
        if key == "escape":
            title, self._open = self._open, ""
            return lambda: not self.shows(title) and self.shows("send to:")
        self._open = title = self.titles[SCREEN_OF[key]]
        return lambda: self.shows(title)

    def press(self, key: str, kind: str) -> bool:
        condition = self.painted(key)
        sent = self.app.send(KEYS.get(key, key.encode()))
        try:
            shown = self.app.wait_until(condition, timeout=10.0)
        except TimeoutError:
            self.lost.append(key)
            return False
        self.samples.append((key, kind, shown - sent))
        return True

    def cycles(self, count: int, interval: float, until: float | None = None) -> None:
        """`count` cycles of keys (or as many whole ones as end before `until`), one per `interval`."""
        done = 0
        while done < count and not self.lost:
            if until is not None and time.perf_counter() + len(CYCLE) * interval > until:
                return
            for key, kind in CYCLE:
                slot = time.perf_counter() + interval
                if not self.press(key, kind):
                    return
                self.app.idle(slot - time.perf_counter())
            done += 1


PROFILE = os.environ.get("ACP_TUI_BENCH_PROFILE")  # a file: py-spy samples the app while it streams
PROFILE_AFTER = os.environ.get("ACP_TUI_BENCH_PROFILE_AFTER")  # the same, on the keys after the streams


def profile(pid: int, seconds: float) -> subprocess.Popen[bytes]:
    """py-spy (a benchmark tool, `pip install py-spy`) on the app, as raw stacks into PROFILE."""
    argv = [
        "py-spy",
        "record",
        "--pid",
        str(pid),
        "--rate",
        "100",
        "--format",
        "raw",
        "--threads",
        "--nonblocking",
    ]
    argv += ["--duration", str(max(1, int(seconds))), "--output", str(PROFILE or PROFILE_AFTER)]
    return subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def paced_config(folder: Path, panes: int, rate: float, seconds: float) -> Path:
    """The agents: `panes` echo_agent.py children streaming Markdown; the last asks a permission."""
    entries = []
    for name in (f"m{i:02d}" for i in range(panes)):
        args = [ECHO_AGENT, f"paced={rate}", f"seconds={seconds}"] + (["ask=1"] if name == ASKING else [])
        policy = "ask" if name == ASKING else "reject"
        entries.append(
            f"[[agent]]\nname = {json.dumps(name)}\ncommand = {json.dumps(PY)}\n"
            f"args = {json.dumps(args)}\npolicy = {json.dumps(policy)}\n"
        )
    path = folder / "agents.toml"
    path.write_text('warm = false\nprompt = "stream"\n\n' + "\n".join(entries))
    return path


ESCDELAY_MS = "10"


def pty_env(home: Path) -> dict[str, str]:
    """Both apps' environment: a terminal; acp-tui's folders under `home`; and ESCDELAY, Textual's
    wait after a lone escape byte (is more coming?), 100 ms by default in any Textual app, made
    10 ms so that escape is timed on what the app does, as the other keys are."""
    env = dict(os.environ)
    env.update(TERM="xterm-256color", ACP_TUI_HOME=str(home), ESCDELAY=ESCDELAY_MS)
    env.pop("TEXTUAL", None)
    return env


def minimal_keys(panes: int, cycles: int, interval: float, env: dict[str, str]) -> KeyPlayer:
    """The same keys on the minimal app (minimal_app.py --panes N), nothing streaming."""
    app = PtyApp(
        [PY, str(HERE / "minimal_app.py"), "--panes", str(panes)], env, COLUMNS, ROWS, keep_text=False
    )
    try:
        player = KeyPlayer(app, panes)
        app.wait_until(lambda: player.shows("send to:"))
        app.send(KEYS["enter"])
        app.wait_until(lambda: (box := player.box()) is not None and box.heavy)
        player.cycles(cycles, interval)
    finally:
        app.close()
    return player


def app_keys(
    panes: int, rate: float, seconds: float, after_cycles: int, interval: float, home: Path, quiet: float
) -> tuple[KeyPlayer, KeyPlayer, tuple[float, float], list[str]]:
    """acp-tui on the pty: keys while every pane streams, then after the streams; the app's CPU
    while they stream; every answer checked at the end."""
    answers_file = home / "answers.json"
    env = {**pty_env(home), "ACP_TUI_BENCH_ANSWERS": str(answers_file)}
    config = paced_config(home, panes, rate, seconds)
    argv = [PY, os.environ.get("ACP_TUI_BENCH_APP", str(HERE / "pty_app.py")), "--config", str(config)]
    app = PtyApp(argv, env, COLUMNS, ROWS, keep_text=bool(os.environ.get("ACP_TUI_BENCH_KEEP")))
    notes: list[str] = []
    try:
        streaming = KeyPlayer(app, panes)
        app.wait_until(lambda: streaming.shows("send to:"))
        entered = app.send(KEYS["enter"])
        app.wait_until(lambda: all(find_box(streaming.lines(), name) for name in streaming.names[:SHOWN]))
        app.wait_until(lambda: streaming.shows("asks permission") or streaming.shows("needs you"))
        profiler = profile(app.proc.pid, entered + seconds - time.perf_counter()) if PROFILE else None
        # First the streams alone (no key), then keys until they end: the app's CPU in each.
        cpu_started, started = app.cpu_seconds(), time.perf_counter()
        app.idle(quiet)
        cpu_alone = (app.cpu_seconds() - cpu_started) / (time.perf_counter() - started)
        cpu_started, started = app.cpu_seconds(), time.perf_counter()
        streaming.cycles(10**6, interval, until=entered + seconds)
        cpu = (app.cpu_seconds() - cpu_started) / (time.perf_counter() - started)
        if profiler is not None:
            profiler.wait()
        # The streams end: all but the asking agent complete; it waits for its answer.
        app.wait_until(lambda: f"{panes - 1} completed" in streaming.lines()[0], timeout=seconds + 120)
        after = KeyPlayer(app, panes)
        after.focused = streaming.focused
        profiler = profile(app.proc.pid, after_cycles * len(CYCLE) * interval) if PROFILE_AFTER else None
        after.cycles(after_cycles, interval)
        if profiler is not None:
            profiler.wait()
        app.send(b"a")  # answer the permission: the focused option (reject once)
        app.wait_until(lambda: streaming.shows(streaming.titles["answer"]))
        app.send(KEYS["enter"])
        app.wait_until(lambda: f"{panes} completed" in streaming.lines()[0], timeout=60)
    except EOFError:
        if app.keep_text:
            print(app.text[-6000:], file=sys.stderr)
        raise
    finally:
        app.close()
    expected = markdown_text(int(rate * seconds))
    answers = json.loads(answers_file.read_text()) if answers_file.exists() else {}
    for name in streaming.names:
        shown = answers.get(name)
        if shown != expected:
            notes.append(f"{name}: {len(shown or '')} of {len(expected)} chars shown")
    return streaming, after, (cpu_alone, cpu), notes


def by_kind(samples: list[tuple[str, str, float]]) -> dict[str, list[float]]:
    kinds: dict[str, list[float]] = {}
    for _, kind, seconds in samples:
        kinds.setdefault(kind, []).append(seconds)
    return kinds


def app_at_model_speed(
    panes: int, rate: float, seconds: float, rounds: int, after_cycles: int, quiet: float = 10.0
) -> tuple[list[list[object]], list[str]]:
    interval = 0.5
    notes: list[str] = []
    streamed: list[tuple[str, str, float]] = []
    ended: list[tuple[str, str, float]] = []
    minimal: list[tuple[str, str, float]] = []
    cpus: list[float] = []
    cpus_alone: list[float] = []
    exact = checked = 0
    with tempfile.TemporaryDirectory() as folder:
        env = pty_env(Path(folder))
        for round_no in range(rounds):
            # The minimal app's keys before and after the app's run: alternating, same machine load.
            progress(f"paced round {round_no + 1}/{rounds}: the minimal app")
            reference = minimal_keys(min(panes, SHOWN), after_cycles, interval, env)
            minimal += reference.samples
            notes += [f"minimal app: {key} not painted within 10 s" for key in reference.lost]
            progress(
                f"paced round {round_no + 1}/{rounds}: acp-tui, {panes} panes streaming for {seconds:.0f} s"
            )
            home = Path(folder) / f"app-{round_no}"
            home.mkdir()
            streaming, after, cpu, wrong = app_keys(panes, rate, seconds, after_cycles, interval, home, quiet)
            streamed += streaming.samples
            ended += after.samples
            cpus_alone.append(cpu[0])
            cpus.append(cpu[1])
            checked += panes
            exact += panes - len(wrong)
            notes += wrong
            notes += [f"acp-tui: {key} not painted within 10 s" for key in streaming.lost + after.lost]
            progress(f"paced round {round_no + 1}/{rounds}: the minimal app again")
            reference = minimal_keys(min(panes, SHOWN), after_cycles, interval, env)
            minimal += reference.samples
    end_progress()
    rows: list[list[object]] = [
        [
            f"{panes} panes at {rate:.0f} chunks/s for {seconds:.0f} s: every answer exact",
            f"{exact}/{checked} exact",
            "",
            "",
            "all",
            verdict(exact == checked),
        ],
        [
            f"the app's CPU while they stream, the first {quiet:.0f} s, no key (process time / wall)",
            f"{median(cpus_alone) * 100:.0f} % of one core",
            "",
            "",
            "< 50 %",
            verdict(median(cpus_alone) < 0.5),
        ],
        [
            "the app's CPU while they stream, a key every 0.5 s",
            f"{median(cpus) * 100:.0f} % of one core",
            "",
            "",
            "< 60 %",
            verdict(median(cpus) < 0.6),
        ],
    ]
    reference_kinds = by_kind(minimal)
    for label, samples in (("while streaming", streamed), ("after the streams", ended)):
        for kind, latencies in by_kind(samples).items():
            base = reference_kinds.get(kind, [])
            ratio = pct(latencies, 95) / pct(base, 95) if base else float("nan")
            # Where the minimal app is quick, a ratio alone would ask for less than a person notices.
            floor = bool(base) and pct(base, 95) < 0.05
            keys = "/".join(dict.fromkeys(key for key, k, _ in samples if k == kind))
            rows.append(
                [
                    f"{keys} ({kind}) painted, {label}: p95 (p50, n)",
                    f"{pct(latencies, 95) * 1000:.0f} ms ({median(latencies) * 1000:.0f}, {len(latencies)})",
                    f"{pct(base, 95) * 1000:.0f} ms ({median(base) * 1000:.0f}, {len(base)})",
                    ratio,
                    "<= 1.5x (<= 100 ms)" if floor else "<= 1.5x",
                    verdict(ratio <= 1.5 and (not floor or pct(latencies, 95) <= 0.1)),
                ]
            )
    keys_p50 = {}
    for key, _, seconds_ in streamed:
        keys_p50.setdefault(key, []).append(seconds_)
    notes.append(
        "while streaming, p50 (max) by key: "
        + ", ".join(
            f"{key} {median(values) * 1000:.0f} ({max(values) * 1000:.0f}) ms"
            for key, values in keys_p50.items()
        )
    )
    # After the streams there are few presses of each key: their order says which one was slow.
    notes.append(
        "after the streams, in order: " + ", ".join(f"{key} {ms * 1000:.0f}" for key, _, ms in ended)
    )
    notes.append(
        "app CPU by round (alone; with keys): "
        + ", ".join(f"{a * 100:.0f} %; {c * 100:.0f} %" for a, c in zip(cpus_alone, cpus, strict=True))
    )
    return rows, notes


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--pairs", type=int, default=10, help="rounds for (a) (default 10)")
    parser.add_argument("--chunks", type=int, default=50_000, help="chunks for (a) (default 50,000)")
    parser.add_argument("--panes", type=int, default=16, help="panes for (b) and (c) (default 16)")
    parser.add_argument("--pane-chunks", type=int, default=5_000, help="chunks per pane (default 5,000)")
    parser.add_argument("--events", action="store_true", help="(a) also with an events() consumer")
    parser.add_argument("--only", choices=["core", "app", "paced"], help="run only (a), (b) or (c)")
    parser.add_argument("--rate", type=float, default=60, help="(c) chunks a second per pane (default 60)")
    parser.add_argument("--seconds", type=float, default=60, help="(c) seconds of streaming (default 60)")
    parser.add_argument("--rounds", type=int, default=1, help="(c) app runs, each between two minimal ones")
    parser.add_argument("--after", type=int, default=2, help="(c) key cycles after the streams (default 2)")
    args = parser.parse_args()

    header(
        f"Streaming: core throughput vs the bare SDK client; {args.panes} streaming panes in the app,"
        " flat out and paced"
    )
    rows: list[list[object]] = []
    notes: list[str] = []
    if args.only in (None, "core"):
        rows += asyncio.run(core_throughput(args.pairs, args.chunks, args.events))
    if args.only in (None, "app"):
        app_rows, notes = asyncio.run(app_under_load(args.panes, args.pane_chunks, idle_presses=40))
        rows += app_rows
    if args.only in (None, "paced"):
        paced_rows, paced_notes = app_at_model_speed(
            args.panes, args.rate, args.seconds, args.rounds, args.after
        )
        rows += paced_rows
        notes += paced_notes
    print(table(["what", "acp-tui", "reference", "ratio", "target", "verdict"], rows))
    for note in notes:
        print(f"note: {note}")
    left = wait_no_marked_processes()
    print(f"\nprocesses left: {len(left)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
