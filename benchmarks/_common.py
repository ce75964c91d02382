"""What every benchmark shares: paths, paired alternation, statistics, the table, leak checks.

Machines here are shared and noisy (2 cores, other jobs), so no figure stands alone: every benchmark
measures its subject (A) and a reference (B) in the same run, alternating A and B (A first in even
pairs, B first in odd ones), and reports medians and the median of the per-pair ratios A/B.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from acp_tui.process.watchdog import process_table, read_environ, read_proc

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
PY = sys.executable
ECHO_AGENT = str(HERE / "echo_agent.py")
BARE_CLIENT = str(HERE / "bare_client.py")
TS_SDK_DIR = REPO / ".cache" / "ts-agent"
TS_AGENT = TS_SDK_DIR / "node_modules" / "@agentclientprotocol" / "sdk" / "dist" / "examples" / "agent.js"
ACPX_DIR = HERE / ".cache"
ACPX_BIN = ACPX_DIR / "node_modules" / ".bin" / "acpx"

# Every process a benchmark starts inherits this mark (the app passes it on: it scrubs only names with
# KEY, SECRET or TOKEN), so "no process left" can be checked exactly, grandchildren included.
MARK_NAME = "ACP_TUI_BENCH"
MARK = f"{MARK_NAME}={os.getpid()}"
os.environ[MARK_NAME] = str(os.getpid())

if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))


def acp_tui_command() -> list[str]:
    """`acp-tui` as a user runs it: the console script next to our interpreter."""
    script = Path(PY).with_name("acp-tui")
    return [str(script)] if script.exists() else [PY, "-m", "acp_tui"]


# Statistics ----------------------------------------------------------------------------------------


def median(xs: Sequence[float]) -> float:
    return statistics.median(xs) if xs else float("nan")


def pct(xs: Sequence[float], p: float) -> float:
    """The p-th percentile, nearest rank (p95 of 20 samples is the 19th smallest)."""
    if not xs:
        return float("nan")
    ordered = sorted(xs)
    rank = max(1, -(-len(ordered) * p // 100))
    return ordered[int(rank) - 1]


def paired(
    pairs: int, a: Callable[[], float], b: Callable[[], float], *, label: str = ""
) -> tuple[list[float], list[float]]:
    """Run A and B `pairs` times each, alternating which goes first; return both series."""
    xs, ys = [], []
    for i in range(pairs):
        if i % 2 == 0:
            xs.append(a())
            ys.append(b())
        else:
            ys.append(b())
            xs.append(a())
        progress(f"{label} pair {i + 1}/{pairs}: {xs[-1]:.3f} vs {ys[-1]:.3f}")
    return xs, ys


def rotating(
    rounds: int, subjects: dict[str, Callable[[], float]], *, label: str = ""
) -> dict[str, list[float]]:
    """Run every subject once per round, rotating which goes first; return each one's series."""
    names = list(subjects)
    series: dict[str, list[float]] = {name: [] for name in names}
    for i in range(rounds):
        shift = i % len(names)
        for name in names[shift:] + names[:shift]:
            series[name].append(subjects[name]())
        summary = "  ".join(f"{name} {series[name][-1]:.3f}" for name in names)
        progress(f"{label} round {i + 1}/{rounds}: {summary}")
    return series


def ratios(xs: Sequence[float], ys: Sequence[float]) -> list[float]:
    return [x / y for x, y in zip(xs, ys, strict=True) if y > 0]


def progress(message: str) -> None:
    """Progress goes to stderr, overwritten in place; stdout keeps only the tables."""
    if sys.stderr.isatty():
        sys.stderr.write(f"\r\x1b[K{message}")
        sys.stderr.flush()


def end_progress() -> None:
    if sys.stderr.isatty():
        sys.stderr.write("\r\x1b[K")
        sys.stderr.flush()


# Output --------------------------------------------------------------------------------------------


def table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """A Markdown table (pastes straight into the README)."""
    cells = [[str(h) for h in headers], *[[fmt(c) for c in row] for row in rows]]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    lines = ["| " + " | ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)) + " |" for row in cells]
    lines.insert(1, "|" + "|".join("-" * (w + 2) for w in widths) + "|")
    return "\n".join(lines)


def fmt(value: object) -> str:
    if isinstance(value, float):
        if value != value:  # nan
            return "n/a"
        return f"{value:.3f}" if abs(value) < 100 else f"{value:,.0f}"
    return str(value)


def verdict(ok: bool) -> str:
    return "met" if ok else "MISSED"


def machine() -> str:
    model = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    return f"{os.cpu_count()} cores ({model}), Python {sys.version.split()[0]}, load {load:.2f} at start"


def header(title: str) -> None:
    print(f"## {title}\n\n{machine()}\n", flush=True)


# Processes -----------------------------------------------------------------------------------------


def marked_processes(mark: str = MARK) -> list[tuple[int, str]]:
    """Live (not zombie) processes carrying our mark, other than this one (read as the watchdog does)."""
    found = []
    needle = mark.encode()
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        if needle in (read_environ(int(entry.name)) or ()) and pid_alive(int(entry.name)):
            cmdline = ""
            with contextlib.suppress(OSError), open(f"/proc/{entry.name}/cmdline", "rb") as f:
                cmdline = f.read().replace(b"\0", b" ").decode(errors="replace")
            found.append((int(entry.name), cmdline.strip()))
    return found


def wait_no_marked_processes(timeout: float = 3.0) -> list[tuple[int, str]]:
    """Processes still alive after `timeout` (a watchdog may take a moment after its parent exits)."""
    deadline = time.monotonic() + timeout
    while (left := marked_processes()) and time.monotonic() < deadline:
        time.sleep(0.05)
    return left


def group_alive(pgid: int) -> bool:
    """Whether any live (non-zombie) process belongs to process group `pgid`."""
    return any(proc.group == pgid and not proc.dead for proc in process_table().values())


def pid_alive(pid: int) -> bool:
    return (proc := read_proc(pid)) is not None and not proc.dead


def kill_marked() -> None:
    """Last resort after a failed benchmark: end what we started (by pid, our mark only)."""
    import signal

    for pid, _ in marked_processes():
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)


def press_key(app: object, key: str) -> None:
    """Post a key the way a terminal driver does (from outside the app's handlers, no waiting).

    `Pilot.press` also waits for the screen to go idle, which a streaming app never quite does;
    the benchmarks time from the key being posted instead.
    """
    from textual import events

    character = "\r" if key == "enter" else None
    app._driver.process_message(events.Key(key, character))  # type: ignore[attr-defined]


def node() -> str | None:
    return shutil.which("node")
