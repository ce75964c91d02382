"""The hostile-child matrix: one scripted misbehaviour per row, each run twice.

(a) through the library: the end state written in the row (stop reason, error, the partial answer
    kept, exit code, truncation), the child's process group gone, our memory growth bounded.
(b) in the app, beside a healthy neighbour that must complete untouched: the same end state on the
    pane, key presses landing while the hostile run is live, each where it was aimed, memory bounded.

No clock decides here: how long a row takes and how long the event loop stalls vary with the
machine's load, so they are figures (written to $ACP_TUI_HOSTILE_NOTES when it is set; measured
against a healthy run by benchmarks/hostile.py), never bounds; the test's timeout is the only one (a
row that hangs, or an app that stops taking keys, fails by it).

Every row is a child of tests/scripted_agent.py (stdlib only). No process may be left afterwards
(checked here and by the autouse fixture of tests/conftest.py).

Rows already covered in the library by tests/core (kept here for the app variant and the bounds):
garbage, handshake timeouts, exit/kill, close stdout/stdin, ignore cancel (+SIGTERM), wrapper and
orphan grandchildren, unknown stop reason, foreign session, fs/terminal refusal, a pending question
answered `cancelled` (tests/core/test_failures.py, test_cancel.py, test_flow.py, test_permissions.py).
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

import acp_tui.acp.client  # noqa: F401  (the SDK import, paid once before any measurement)
from acp_tui import (
    AcpProviderConfig,
    AcpSubagentProvider,
    Finished,
    OutputDelta,
    SubagentRequest,
    SubagentResult,
    SubagentStopReason,
)
from acp_tui.core.model import stop_word
from acp_tui.core.text import one_line, visible
from acp_tui.policy.ask import PermissionAsk
from acp_tui.policy.rules import AskPolicy
from acp_tui.process.group import group_alive
from acp_tui.settings.schema import AgentPreset, Settings
from tests.helpers import our_live_processes
from tests.hostile.support import (
    MB,
    LoopLag,
    MiB,
    bulk_text,
    eventually,
    frozen_heap,
    key_lands,
    peak_rss,
    scripted_args,
    send_key,
)

if TYPE_CHECKING:
    from acp_tui.session.attempts import Attempt
    from acp_tui.ui.app import SupervisorApp

S = SubagentStopReason
PROBE_EVERY = 0.25  # seconds between key presses: a brisk user, not a flood of focus changes
RSS_BOUND = 100 * MB  # our own memory growth while a row runs
SMALL_CAP = 256 * 1024  # max_output_chars for the big-answer rows (the default is 16M characters)
CANCEL_REASON = "cancelled by the user"  # what the pane's Cancel passes to dispose()

HEALTHY_TEXT = "".join(f"healthy piece {i}. " for i in range(20))
HEALTHY_OPTIONS = {"text": HEALTHY_TEXT, "chunks": 20, "delay": 0.05}  # about a second of streaming


@dataclass(frozen=True)
class Ctx:
    """Per-test places: the agent's cwd (empty), a directory outside it, the agent's frame record."""

    cwd: Path
    outside: Path
    record: Path

    def fill(self, options: dict[str, object]) -> dict[str, object]:
        return {
            k: v.format(cwd=self.cwd, outside=self.outside, record=self.record) if isinstance(v, str) else v
            for k, v in options.items()
        }


@dataclass(frozen=True)
class Contains:
    """An error message that must contain this (for messages with a variable part)."""

    text: str


@dataclass(frozen=True)
class Row:
    id: str
    options: dict[str, object]
    stop: SubagentStopReason
    error: str | Contains | None
    output: str | Callable[[str], bool]  # the answer kept: exact, or a predicate
    exit_code: int | tuple[int, ...] | None = 0
    truncated: bool = False
    config: dict[str, Any] = field(default_factory=dict)  # AcpProviderConfig overrides
    policy: str = "reject"  # or "ask": a question nobody answers
    cancel_on: str | None = None  # "output" | "permission": the user cancels then
    live_window: float = 0.0  # app: pause= seconds at the prompt, so keys are pressed while live
    extra: Callable[[SubagentResult, Ctx], None] | None = None
    in_app: bool = True


def note(line: str) -> None:
    """Measurements, appended to $ACP_TUI_HOSTILE_NOTES when it is set (for a report by hand)."""
    if path := os.environ.get("ACP_TUI_HOSTILE_NOTES"):
        with open(path, "a") as f:
            f.write(line + "\n")


# Checks beyond the common end state -----------------------------------------------------------


def dropped_frames_noted(result: SubagentResult, ctx: Ctx) -> None:
    assert any(line.startswith("[acp-tui] not a JSON-RPC message") for line in result.stderr_tail)


def flood_tail_bounded(result: SubagentResult, ctx: Ctx) -> None:
    assert 0 < len(result.stderr_tail) <= 200
    assert sum(len(line) for line in result.stderr_tail) < MiB
    assert all(len(line) <= 2000 for line in result.stderr_tail)


def storm_all_rejected(result: SubagentResult, ctx: Ctx) -> None:
    assert len(result.permissions) == 10_000
    assert {(r.decision, r.option_id, r.rule) for r in result.permissions} == {
        ("reject_once", "r1", "reject")
    }


def pending_question_answered_cancelled(result: SubagentResult, ctx: Ctx) -> None:
    assert [(r.decision, r.option_id, r.rule) for r in result.permissions] == [
        ("cancelled", None, "cancelled")
    ]
    replies = [f for f in received(ctx) if "method" not in f and f.get("id") == 1001]
    assert [r.get("result") for r in replies] == [{"outcome": {"outcome": "cancelled"}}]
    assert "session/cancel" in [f.get("method") for f in received(ctx)]


def nothing_read_written_or_run(result: SubagentResult, ctx: Ctx) -> None:
    assert list(ctx.cwd.iterdir()) == []  # nothing written, nothing touched by a terminal
    assert sorted(p.name for p in ctx.outside.iterdir()) == ["secret.txt"]
    replies = {f["id"]: f for f in received(ctx) if "method" not in f and f.get("id") in (1001, 1002, 1003)}
    assert sorted(replies) == [1001, 1002, 1003]
    for reply in replies.values():
        assert "result" not in reply
        assert reply["error"]["code"] == -32601
    assert "outside the cwd" not in ctx.record.read_text()  # the secret file's content never went out


def no_foreign_text(result: SubagentResult, ctx: Ctx) -> None:
    assert "FOREIGN" not in result.output


def received(ctx: Ctx) -> list[dict[str, Any]]:
    """Every message the agent received (its `record=` file)."""
    if not ctx.record.exists():
        return []
    return [json.loads(line) for line in ctx.record.read_text().splitlines()]


def is_unicode_text(text: str) -> bool:
    """Text that can be written as UTF-8 (to a file, a terminal, a JSON line without escapes)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def prefix_of(expected: str, *, at_least: int = 0) -> Callable[[str], bool]:
    return lambda output: len(output) >= at_least and expected.startswith(output)


# The rows -------------------------------------------------------------------------------------------

ANSWER = "a clean answer through the noise"
PERMISSION_CANCELLED_CHUNK = '[permission: {"outcome": {"outcome": "cancelled"}}]'

ROWS = [
    # Garbage on stdout: non-JSON lines, JSON that is not an object, invalid UTF-8 (1); plus
    # object-shaped lines that are no valid message (2).
    Row(
        "garbage-lines",
        {"garbage": 1, "text": ANSWER, "chunks": 4, "delay": 0.15},
        S.COMPLETED,
        None,
        ANSWER,
        extra=dropped_frames_noted,
    ),
    Row(
        "garbage-objects",
        {"garbage": 2, "text": ANSWER, "chunks": 4, "delay": 0.15},
        S.COMPLETED,
        None,
        ANSWER,
        extra=dropped_frames_noted,
    ),
    # The handshake never completes.
    Row(
        "never-answers-initialize",
        {"hang": "initialize"},
        S.ERROR,
        "handshake timed out after 0.5 s (no answer to initialize)",
        "",
        config={"handshake_timeout": 0.5},
    ),
    Row(
        "never-answers-session-new",
        {"hang": "session/new"},
        S.ERROR,
        "handshake timed out after 0.5 s (no answer to session/new)",
        "",
        config={"handshake_timeout": 0.5},
    ),
    # The child dies or breaks its pipes mid-stream.
    Row(
        "exits-mid-stream",
        {"exit": 5, "text": "abcdefgh", "chunks": 4},
        S.ERROR,
        "agent exited with code 5: scripted agent: exiting with 5 at prompt",
        "ab",
        exit_code=5,
        live_window=0.4,
    ),
    Row(
        "killed-by-a-signal",
        {"kill": "SIGKILL", "text": "abcdefgh", "chunks": 4},
        S.ERROR,
        "agent was killed by SIGKILL: scripted agent: killing itself with SIGKILL at prompt",
        "ab",
        exit_code=-9,
        live_window=0.4,
    ),
    Row(
        "closes-stdout-keeps-running",
        {"close_stdout": 1, "ignore_term": 1, "text": "abcd", "chunks": 2},
        S.ERROR,
        "the agent closed the connection",
        "ab",
        exit_code=-9,
    ),
    Row(
        "closes-stdin-keeps-running",
        {"close_stdin": 1},
        S.ERROR,
        "the agent closed the connection",
        "",
        exit_code=-15,
    ),
    # Cancelled by the user, and stubborn about it.
    Row(
        "ignores-cancel",
        {"forever": 1, "on_cancel": "ignore", "text": "partial"},
        S.ABORTED,
        CANCEL_REASON,
        lambda out: out.startswith("partial"),
        exit_code=-15,
        cancel_on="output",
    ),
    Row(
        "ignores-cancel-and-sigterm",
        {"forever": 1, "on_cancel": "ignore", "ignore_term": 1, "text": "partial"},
        S.ABORTED,
        CANCEL_REASON,
        lambda out: out.startswith("partial"),
        exit_code=-9,
        cancel_on="output",
    ),
    Row(
        "wrapper-grandchild-holds-the-pipes",
        {"wrapper": 1, "forever": 1, "on_cancel": "ignore", "ignore_term": 1, "text": "partial"},
        S.ABORTED,
        CANCEL_REASON,
        lambda out: out.startswith("partial"),
        exit_code=-15,
        cancel_on="output",
    ),
    Row(
        "leader-exits-grandchild-holds-the-pipes",
        {"orphan": 1, "hang": "initialize"},
        S.ERROR,
        "agent exited with code 0",
        "",
        exit_code=0,
    ),
    # Protocol oddities.
    Row(
        "unknown-update-kinds",
        {"unknown_updates": 1, "text": ANSWER},
        S.COMPLETED,
        None,
        ANSWER,
        live_window=0.4,
    ),
    Row(
        "unknown-stop-reason",
        {"stop": "acp_tui_weird", "text": ANSWER},
        S.ERROR,
        "agent sent an unknown stop reason: 'acp_tui_weird'",
        ANSWER,
        live_window=0.4,
    ),
    Row(
        "responses-with-unknown-ids", {"stray": 1, "text": ANSWER}, S.COMPLETED, None, ANSWER, live_window=0.4
    ),
    Row("duplicate-responses", {"dup": 1, "text": ANSWER}, S.COMPLETED, None, ANSWER, live_window=0.4),
    # Valid JSON, but no Unicode text: "x\ud800y" has no UTF-8 form, and the answer must stay
    # printable and exportable (see also the test at the end of this file).
    Row(
        "answer-with-a-lone-surrogate",
        {"lone_surrogate": 1},
        S.COMPLETED,
        None,
        lambda out: is_unicode_text(out) and out.startswith("x") and out.endswith("y"),
        live_window=0.4,
    ),
    Row(
        "notifications-for-another-session",
        {"foreign": 1, "text": ANSWER, "chunks": 3},
        S.COMPLETED,
        None,
        ANSWER,
        extra=no_foreign_text,
        live_window=0.4,
    ),
    Row(
        "permission-pending-when-cancelled",
        {"permission": "normal", "record": "{record}"},
        S.ABORTED,
        CANCEL_REASON,
        lambda out: PERMISSION_CANCELLED_CHUNK.startswith(out) or out.startswith(PERMISSION_CANCELLED_CHUNK),
        exit_code=(0, -15),
        policy="ask",
        cancel_on="permission",
        extra=pending_question_answered_cancelled,
    ),
    # Files and terminals the client never offered.
    Row(
        "fs-and-terminal-requests-refused",
        {
            "fs": 1,
            "fs_read": "{outside}/secret.txt",
            "fs_write": "{cwd}/written.txt",
            "fs_touch": "{cwd}/touched.txt",
            "record": "{record}",
            "text": " done",
        },
        S.COMPLETED,
        None,
        "-32601 -32601 -32601 done",
        extra=nothing_read_written_or_run,
        live_window=0.4,
    ),
    # One line of 20 MiB: a non-JSON one is dropped as it arrives; a valid 20 MiB chunk is parsed and
    # kept up to the cap.
    Row(
        "line-20mb-not-json",
        {"noise_line": 20 * MiB, "text": ANSWER},
        S.COMPLETED,
        None,
        ANSWER,
        extra=dropped_frames_noted,
        live_window=0.4,
    ),
    Row(
        "line-20mb-chunk",
        {"bulk": 20 * MiB, "bulk_chunk": 20 * MiB},
        S.COMPLETED,
        None,
        bulk_text(20 * MiB, 20 * MiB, limit=SMALL_CAP),
        truncated=True,
        config={"max_output_chars": SMALL_CAP},
        live_window=0.4,
    ),
    # 50 MB on stderr before answering initialize: no deadlock, the tail stays bounded.
    Row(
        "stderr-flood-50mb",
        {"stderr_bytes": 50 * MB, "text": "still here"},
        S.COMPLETED,
        None,
        "still here",
        extra=flood_tail_bounded,
    ),
    Row(
        "stderr-flood-50mb-one-line",
        {"stderr_bytes": 50 * MB, "stderr_newlines": 0, "text": "still here"},
        S.COMPLETED,
        None,
        "still here",
        extra=flood_tail_bounded,
        in_app=False,
    ),
    # Permissions.
    Row(
        "permission-storm-10000",
        {"storm": 10_000, "text": " done"},
        S.COMPLETED,
        None,
        "storm: 0 allowed, 10000 rejected, 0 cancelled, 0 errors done",
        extra=storm_all_rejected,
    ),
    # An answer of 100 MB: kept up to the cap, and it says so.
    Row(
        "answer-100mb-in-1mib-chunks",
        {"bulk": 100 * MB},
        S.COMPLETED,
        None,
        bulk_text(100 * MB, limit=SMALL_CAP),
        truncated=True,
        config={"max_output_chars": SMALL_CAP},
    ),
    Row(
        "answer-100mb-at-the-default-cap",
        {"bulk": 100 * MB},
        S.COMPLETED,
        None,
        lambda out: out == bulk_text(100 * MB, limit=AcpProviderConfig.max_output_chars),
        truncated=True,
        in_app=False,
    ),
    Row(
        "answer-100mb-in-one-frame",
        {"bulk": 100 * MB, "bulk_chunk": 100 * MB},
        S.COMPLETED,
        None,
        prefix_of(bulk_text(100 * MB, 100 * MB, limit=SMALL_CAP)),
        truncated=True,
        config={"max_output_chars": SMALL_CAP},
    ),
]


@pytest.fixture
def ctx(tmp_path: Path) -> Ctx:
    cwd, outside = tmp_path / "cwd", tmp_path / "outside"
    cwd.mkdir()
    outside.mkdir()
    (outside / "secret.txt").write_text("outside the cwd: never to be read by an agent\n")
    return Ctx(cwd=cwd, outside=outside, record=tmp_path / "frames.jsonl")


def check_end_state(row: Row, result: SubagentResult, ctx: Ctx) -> None:
    assert result.stop_reason is row.stop, (result.stop_reason, result.error)
    if isinstance(row.error, Contains):
        assert result.error is not None and row.error.text in result.error, result.error
    else:
        assert result.error == row.error
    if callable(row.output):
        assert row.output(result.output), (
            f"unexpected output ({len(result.output)} chars): {result.output[:200]!r}"
        )
    else:
        assert result.output == row.output
    if isinstance(row.exit_code, tuple):
        assert result.exit_code in row.exit_code
    else:
        assert result.exit_code == row.exit_code
    assert result.truncated is row.truncated
    if row.extra is not None:
        row.extra(result, ctx)


class NeverAnswers:
    """The `ask` policy's human, away from the keyboard."""

    def __init__(self) -> None:
        self.asked = asyncio.Event()

    async def __call__(self, ask: PermissionAsk) -> str | None:
        self.asked.set()
        await asyncio.get_running_loop().create_future()
        raise AssertionError("unreachable")


# (a) Through the library ----------------------------------------------------------------------------


@pytest.mark.parametrize("row", ROWS, ids=[row.id for row in ROWS])
async def test_library(row: Row, ctx: Ctx, routed_logs: Path) -> None:
    human = NeverAnswers()
    policy: Any = AskPolicy(human) if row.policy == "ask" else row.policy
    config = AcpProviderConfig(
        command=sys.executable,
        args=scripted_args(**ctx.fill(row.options)),
        permission_policy=policy,
        name="hostile",
        cancel_grace=0.5,
        term_grace=0.3,
        **row.config,
    )
    with peak_rss() as memory, LoopLag() as lag:
        run = await AcpSubagentProvider(config).start(SubagentRequest("go", cwd=str(ctx.cwd)))
        finished: list[SubagentResult] = []

        async def consume() -> None:
            cancelling: asyncio.Future[None] | None = None
            async for event in run.events():
                if isinstance(event, OutputDelta) and row.cancel_on == "output" and cancelling is None:
                    cancelling = asyncio.ensure_future(run.dispose(CANCEL_REASON))
                elif isinstance(event, Finished):
                    finished.append(event.result)

        consumer = asyncio.ensure_future(consume())
        if row.cancel_on == "permission":
            await human.asked.wait()
            await run.dispose(CANCEL_REASON)
        result = await run.result()
        await consumer
    note(f"library {row.id}: loop stall {lag.worst:.3f} s, RSS +{memory.growth / MB:.0f} MB")
    assert finished == [result]  # the event stream ended with the same result
    check_end_state(row, result, ctx)
    assert run.pid is None or not group_alive(run.pid)
    assert our_live_processes() == []
    assert memory.growth < RSS_BOUND, f"our RSS grew by {memory.growth / MB:.0f} MB"


# (b) In the app, beside a healthy neighbour ----------------------------------------------------------


def app_settings(row: Row, ctx: Ctx) -> Settings:
    options = ctx.fill(row.options)
    if row.live_window:
        options["pause"] = row.live_window
    hostile = AgentPreset(
        "hostile",
        sys.executable,
        scripted_args(**options),
        cwd=str(ctx.cwd),
        policy=row.policy,
        handshake_timeout=row.config.get("handshake_timeout", 60.0),
    )
    healthy = AgentPreset("healthy", sys.executable, scripted_args(**HEALTHY_OPTIONS))
    return Settings(presets=(hostile, healthy), prompt="go")


def app_for(row: Row, ctx: Ctx) -> SupervisorApp:
    from acp_tui.ui.app import SupervisorApp

    app = SupervisorApp(app_settings(row, ctx))
    # The app has no knob for the output cap or line limit; the rows that lower them do it through
    # the driver's config of each attempt.
    overrides = {k: v for k, v in row.config.items() if k != "handshake_timeout"}
    if overrides:
        configure = app.driver.configure

        def lowered(attempt: Attempt) -> AcpProviderConfig:
            config = configure(attempt)
            return dataclasses.replace(config, **overrides) if attempt.agent == "hostile" else config

        app.driver.configure = lowered
    return app


@pytest.mark.parametrize("row", [r for r in ROWS if r.in_app], ids=[r.id for r in ROWS if r.in_app])
async def test_app(row: Row, ctx: Ctx, routed_logs: Path) -> None:
    from textual.widgets import Static

    from acp_tui.ui.widgets.answer_view import AnswerView
    from acp_tui.ui.widgets.status_badge import StatusBadge
    from tests.ui.helpers import panes

    app = app_for(row, ctx)
    landed = 0  # key presses sent and handled while the hostile run was live
    async with app.run_test(size=(160, 45)):
        with frozen_heap(), peak_rss() as memory:
            send_key(app, "enter", "\r")  # the prompt has the focus: start the round
            await eventually(
                lambda: len(panes(app)) == 2 and all(p.query(AnswerView) for p in panes(app).values()),
                what="both panes",
            )
            hostile, healthy = panes(app)["hostile"], panes(app)["healthy"]
            cancelled = False
            while hostile.result is None or healthy.result is None:
                if hostile.run is not None and hostile.result is None:
                    await key_lands(app)
                    landed += hostile.result is None
                wants_cancel = (row.cancel_on == "output" and hostile.query_one(AnswerView).text) or (
                    row.cancel_on == "permission" and bool(app.asks)  # queued: it waits for `a`
                )
                if wants_cancel and not cancelled:
                    hostile.action_cancel()  # what the Cancel button runs: the disposal goes on meanwhile
                    cancelled = True
                await asyncio.sleep(PROBE_EVERY)
            # The pane paints its end a moment after the result is in: wait for that, not a clock.
            await eventually(lambda: not hostile.ticking)  # a finished pane's clock stops
        hostile_shown = hostile.query_one(AnswerView).text
        hostile_badge = hostile.query_one(StatusBadge).status
        hostile_error = str(hostile.query_one("#error", Static).render())
        healthy_shown = healthy.query_one(AnswerView).text
    note(f"app {row.id}: {landed} keys landed while live, RSS +{memory.growth / MB:.0f} MB")
    assert our_live_processes() == []

    # The healthy neighbour, untouched.
    assert healthy.result is not None
    assert (healthy.result.stop_reason, healthy.result.error) == (S.COMPLETED, None)
    assert healthy.result.output == healthy_shown == HEALTHY_TEXT
    # The hostile run's end state, on its pane too.
    assert hostile.result is not None
    check_end_state(row, hostile.result, ctx)
    # The badge says `cancelled` for an `aborted` run, however it was stopped (the stop reason stays
    # `aborted`); the pane shows control characters as visible escapes, and the error on one line.
    assert hostile_badge == stop_word(row.stop)
    assert hostile_shown == visible(hostile.result.output)
    if hostile.result.error:
        assert one_line(hostile.result.error) in hostile_error
    # It took keys while the hostile run misbehaved, and its memory stayed bounded.
    assert landed, "no key press landed while the hostile run was live"
    assert memory.growth < RSS_BOUND, f"our RSS grew by {memory.growth / MB:.0f} MB"


# An answer that is no valid Unicode, printed and exported -------------------------------------------


async def test_an_answer_with_a_lone_surrogate_is_printed_and_exported(
    tmp_path: Path, routed_logs: Path
) -> None:
    """`acp-tui run` prints every record, and the app's ctrl+s exports the session, when an agent's
    answer holds a lone surrogate (a JSON `\\ud800` escape). Neither may crash on encoding it."""
    import io

    from acp_tui.reports import records as report
    from acp_tui.session.fanout import Job, _Fanout
    from acp_tui.ui.app import SupervisorApp
    from tests.ui.helpers import all_finished, panes, wait_until

    preset = AgentPreset("odd", sys.executable, scripted_args(lone_surrogate=1))
    raw = io.BytesIO()
    out = io.TextIOWrapper(raw, encoding="utf-8", errors="strict", write_through=True)  # a UTF-8 pipe
    job = Job(preset, Settings(presets=(preset,)).provider_config(preset), "reject")
    fanout = _Fanout([job], "go", cwd=None, timeout=None, fmt="json", out=out, err=io.StringIO())
    assert await fanout.run() == 0
    [record] = [json.loads(line) for line in raw.getvalue().decode("utf-8").splitlines()]
    assert record["output"].startswith("x") and record["output"].endswith("y")
    assert is_unicode_text(report.json_line(record))

    app = SupervisorApp(Settings(presets=(preset,), prompt="go"))
    app.export_dir = tmp_path
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("enter")
        await wait_until(pilot, all_finished(app))
        assert panes(app)["odd"].result is not None
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: len(list(tmp_path.glob("acp-tui-*"))) == 3)  # .md, .jsonl, compare
    [jsonl] = tmp_path.glob("acp-tui-*.jsonl")
    [exported] = [json.loads(line) for line in jsonl.read_text(encoding="utf-8").splitlines()]
    assert exported["output"].startswith("x") and exported["output"].endswith("y")
