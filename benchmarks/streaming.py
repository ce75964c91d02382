"""Streaming: core throughput against the bare SDK client, and 16 streaming panes in the app.

    python benchmarks/streaming.py [--pairs N] [--chunks N] [--panes N] [--pane-chunks N]
                                   [--only core|app|paced] [--rate R] [--seconds S]

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

(c) The app at a model's pace (headless, 200x60): 16 panes, each an echo_agent.py child streaming
    Markdown with headings, lists and code blocks at `--rate` chunks/s (default 60) of 3-6 words for
    `--seconds` (default 60). Every 0.5 s a real key is pressed, in turn tab, pagedown, b (the
    board), escape, z, z (zoom and back), each followed at once by the `f12` probe: its latency is
    the time until both were handled (keys are handled in order). The app's CPU is its process
    time (all threads; the agents are other processes) over the wall time while streaming.
    Targets: key p95 < 50 ms, CPU < 60 % of one core, every answer exact.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import threading
import time
from pathlib import Path

from _common import (
    ECHO_AGENT,
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
    from acp_tui.ui.widgets.answer_view import AnswerView
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
            if len(found) == panes and all(p.result is not None for p in found):
                break
            if time.perf_counter() > deadline:
                raise TimeoutError("the panes did not finish within 300 s")
            await asyncio.sleep(0.05)
        results_at = time.perf_counter()
        # The result arrives before the pane's Markdown stream has flushed its last fragments.
        while not all(p.query_one(AnswerView).text == expected for p in found):
            if time.perf_counter() > results_at + 30:
                break
            await asyncio.sleep(0.02)
        shown_at = time.perf_counter()
        await asyncio.to_thread(probe.stop)  # it may be waiting for a press the loop must handle
        loaded = [lat for posted, lat in probe.samples if posted <= shown_at]

        exact = sum(p.query_one(AnswerView).text == expected for p in found)
        completed = sum(p.result is not None and p.result.stop_reason == "completed" for p in found)
        for p in found:
            source = p.query_one(AnswerView).text
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


class KeyPlayer(KeyProbe):
    """Presses real keys in turn, each followed by the probe: the latency covers both."""

    KEYS = (("tab", "\t"), ("pagedown", None), ("b", "b"), ("escape", "\x1b"), ("z", "z"), ("z", "z"))

    def __init__(self, app: object, interval: float = 0.5) -> None:
        super().__init__(app, interval)
        self.turn = 0

    def before_probe(self, driver: object) -> None:
        from textual import events

        key, character = self.KEYS[self.turn % len(self.KEYS)]
        self.turn += 1
        driver.process_message(events.Key(key, character))  # type: ignore[attr-defined]


async def app_at_model_speed(panes: int, rate: float, seconds: float) -> tuple[list[list[object]], list[str]]:
    from textual.binding import Binding

    from acp_tui.settings.schema import AgentPreset, Settings
    from acp_tui.ui.app import SupervisorApp
    from acp_tui.ui.widgets.answer_view import AnswerView
    from acp_tui.ui.widgets.run_pane import RunPane

    player: KeyPlayer | None = None

    class ProbedApp(SupervisorApp):
        CSS_PATH = str(Path(sys.modules[SupervisorApp.__module__].__file__ or "").with_name("app.tcss"))
        BINDINGS = [*SupervisorApp.BINDINGS, Binding("f12", "bench_ping", "ping", show=False)]

        def action_bench_ping(self) -> None:
            if player is not None:
                player.on_action()

    args = (ECHO_AGENT, f"paced={rate}", f"seconds={seconds}")
    presets = tuple(AgentPreset(f"m{i:02d}", PY, args) for i in range(panes))
    app = ProbedApp(Settings(presets=presets, prompt="stream"))
    expected = markdown_text(int(rate * seconds))
    notes: list[str] = []
    async with app.run_test(size=(200, 60)) as pilot:
        await pilot.pause(0.5)
        player = KeyPlayer(app)
        press_key(app, "enter")
        while len(list(app.query(RunPane))) < panes or not all(p.run for p in app.query(RunPane)):  # noqa: ASYNC110
            await asyncio.sleep(0.05)  # polled, as the flat-out case polls for its results
        started, cpu_started = time.perf_counter(), time.process_time()
        player.start()
        deadline = started + seconds + 120
        while True:
            found = list(app.query(RunPane))
            if all(p.result is not None for p in found):
                break
            if time.perf_counter() > deadline:
                raise TimeoutError("the panes did not finish in time")
            await asyncio.sleep(0.05)
        ended, cpu_ended = time.perf_counter(), time.process_time()
        await asyncio.to_thread(player.stop)
        # The reference: the same keys on the same app once every answer is in (nothing streams).
        streamed = list(player.samples)
        player.samples.clear()
        await asyncio.to_thread(lambda: [player.press_once() for _ in range(2 * len(KeyPlayer.KEYS))])  # type: ignore[union-attr]
        quiet = [lat for _, lat in player.samples]
        player.samples = streamed
        if app.screen.maximized is not None or len(app.screen_stack) > 1:
            await pilot.press("escape")
        while not all(p.query_one(AnswerView).text == expected for p in found):
            if time.perf_counter() > ended + 30:
                break
            await asyncio.sleep(0.02)
        exact = sum(p.query_one(AnswerView).text == expected for p in found)
        for p in found:
            if p.query_one(AnswerView).text != expected:
                notes.append(f"{p.agent}: {len(p.query_one(AnswerView).text)} of {len(expected)} chars shown")
        await app.action_quit()
    latencies = [lat for _, lat in player.samples]
    p95 = pct(latencies, 95)
    by_key: dict[str, list[float]] = {}
    for turn, (_, lat) in enumerate(player.samples):
        by_key.setdefault(KeyPlayer.KEYS[turn % len(KeyPlayer.KEYS)][0], []).append(lat)
    notes.append(
        "key p50 by key: " + ", ".join(f"{key} {median(lats) * 1000:.0f} ms" for key, lats in by_key.items())
    )
    cpu = (cpu_ended - cpu_started) / (ended - started)
    rows = [
        [
            f"{panes} panes at {rate:.0f} chunks/s for {seconds:.0f} s: exact",
            f"{exact}/{panes} exact",
            "",
            "",
            "all",
            verdict(exact == panes),
        ],
        [
            "key press (tab, pagedown, b, escape, z) handled, p95",
            f"{p95 * 1000:.0f} ms (p50 {median(latencies) * 1000:.0f},"
            f" max {max(latencies, default=0) * 1000:.0f}, n={len(latencies)})",
            f"after the stream p95 {pct(quiet, 95) * 1000:.0f} ms",
            p95 / pct(quiet, 95) if quiet else float("nan"),
            "< 50 ms",
            verdict(p95 < 0.05 and player.lost == 0),
        ],
        [
            "the app's CPU while streaming",
            f"{cpu * 100:.0f} % of one core",
            "",
            "",
            "< 60 %",
            verdict(cpu < 0.6),
        ],
    ]
    if player.lost:
        lost = ", ".join(KeyPlayer.KEYS[(turn - 1) % len(KeyPlayer.KEYS)][0] for turn in player.lost_after)
        notes.append(f"{player.lost} key presses not handled within 10 s (after {lost})")
    return rows, notes


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--pairs", type=int, default=10, help="rounds for (a) (default 10)")
    parser.add_argument("--chunks", type=int, default=50_000, help="chunks for (a) (default 50,000)")
    parser.add_argument("--panes", type=int, default=16, help="panes for (b) (default 16)")
    parser.add_argument("--pane-chunks", type=int, default=5_000, help="chunks per pane (default 5,000)")
    parser.add_argument("--events", action="store_true", help="(a) also with an events() consumer")
    parser.add_argument("--only", choices=["core", "app", "paced"], help="run only (a), (b) or (c)")
    parser.add_argument("--rate", type=float, default=60, help="(c) chunks a second per pane (default 60)")
    parser.add_argument("--seconds", type=float, default=60, help="(c) seconds of streaming (default 60)")
    args = parser.parse_args()

    header(
        "Streaming: core throughput vs the bare SDK client; 16 streaming panes in the app, flat out and paced"
    )
    rows: list[list[object]] = []
    notes: list[str] = []
    if args.only in (None, "core"):
        rows += asyncio.run(core_throughput(args.pairs, args.chunks, args.events))
    if args.only in (None, "app"):
        app_rows, notes = asyncio.run(app_under_load(args.panes, args.pane_chunks, idle_presses=40))
        rows += app_rows
    if args.only in (None, "paced"):
        paced_rows, paced_notes = asyncio.run(app_at_model_speed(args.panes, args.rate, args.seconds))
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
