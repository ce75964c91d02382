"""One run on screen: name, live badge, elapsed time, the streaming answer, what was hidden, stderr.

The pane holds its run (attributes down) and tells the app about its end (messages up). A single
worker consumes `run.events()`; the answer streams into an `AnswerView`, which coalesces fragments
that arrive faster than they can be rendered.
"""

from __future__ import annotations

import time
from collections import Counter, deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.widgets import Button, Log, Static

from ...subagents import (
    Finished,
    HiddenUpdate,
    OutputDelta,
    PermissionDecided,
    PermissionRecord,
    StatusChanged,
    StderrLine,
    SubagentResult,
    SubagentRun,
    SubagentStopReason,
)
from ..screens.permission_log_screen import PermissionLogScreen
from ..screens.trace_screen import TraceScreen
from .answer_view import AnswerView
from .status_badge import StatusBadge

RunStarter = Callable[[], Awaitable[SubagentRun]]

HIDDEN_LABELS = {
    "agent_thought_chunk": "thoughts",
    "tool_call": "tool calls",
    "tool_call_update": "tool updates",
    "plan": "plans",
}
STDERR_LINES = 500


def format_seconds(seconds: float, *, live: bool = False) -> str:
    """`12.3 s` at the end; while the run is live, whole seconds, so the clock repaints once a second."""
    if seconds >= 60:
        return f"{int(seconds // 60)}m{int(seconds % 60):02d}s"
    return f"{int(seconds)} s" if live else f"{seconds:.1f} s"


def hidden_label(kind: str) -> str:
    if kind.startswith("agent_message_chunk:"):
        return f"{kind.partition(':')[2]} chunks"  # non-text answer content, counted not shown
    return HIDDEN_LABELS.get(kind, kind.replace("_", " "))


def hidden_summary(hidden: Counter[str] | dict[str, int]) -> str:
    if not hidden:
        return "nothing hidden"
    return "hidden: " + " · ".join(f"{hidden_label(k)} {n}" for k, n in sorted(hidden.items()))


def permissions_summary(records: list[PermissionRecord]) -> str:
    if not records:
        return ""
    allowed = sum(r.decision.startswith("allow") for r in records)
    last = records[-1]
    return (
        f"permissions: {len(records)} asked, {allowed} allowed"
        f" · last: {last.title} → {last.decision} by {last.rule}"
    )


class RunPane(Vertical, can_focus=True):
    """A pane for one run of one agent preset."""

    BINDINGS = [
        Binding("c", "cancel", "Cancel"),
        Binding("r", "rerun", "Re-run"),
        Binding("x", "close", "Close"),
        Binding("e", "toggle_stderr", "Stderr"),
        Binding("l", "permissions", "Permissions"),
        Binding("t", "trace", "Trace"),
        # The answer scrolls from the pane's focus: the view itself takes none, so tab walks panes.
        Binding("up", "scroll_answer('up')", "Scroll", show=False),
        Binding("down", "scroll_answer('down')", show=False),
        Binding("pageup", "scroll_answer('page_up')", show=False),
        Binding("pagedown", "scroll_answer('page_down')", show=False),
        Binding("home", "scroll_answer('home')", show=False),
        Binding("end", "scroll_answer('end')", show=False),
    ]

    @dataclass
    class RunFinished(Message):
        pane: RunPane
        result: SubagentResult

    def __init__(
        self, agent: str, prompt: str, start: RunStarter, *, round_no: int = 1, policy: str = ""
    ) -> None:
        super().__init__(classes="run-pane")
        self.agent = agent
        self.prompt = prompt
        self.round_no = round_no
        self.policy = policy
        self.run: SubagentRun | None = None
        self.result: SubagentResult | None = None
        self.permissions: list[PermissionRecord] = []
        self._start = start
        self._hidden: Counter[str] = Counter()
        self._started_at = time.monotonic()
        self._stats_dirty = False
        self._stats_lines = 1
        self._clock = ""
        # Stderr is shown a few times a second, at most its last lines: a child flooding stderr
        # must not cost a widget update per line.
        self._stderr_unshown: deque[str] = deque(maxlen=STDERR_LINES)
        self.border_title = agent
        self.border_subtitle = f"round {round_no}" + (f" · {policy}" if policy else "")

    def compose(self) -> ComposeResult:
        with Horizontal(classes="pane-header"):
            yield StatusBadge(id="badge")
            yield Static("", id="elapsed")
            yield Button("Cancel", id="cancel", variant="error", compact=True)
        yield AnswerView(id="answer")
        yield Static("", id="error")
        yield Static("nothing hidden", id="stats")
        yield Log(id="stderr", max_lines=STDERR_LINES, auto_scroll=True)

    def on_mount(self) -> None:
        self.ticker = self.set_interval(0.2, self._tick)
        self.start_run()

    @property
    def live(self) -> bool:
        return self.query_one(StatusBadge).live

    # The run ---------------------------------------------------------------------------------

    @work(exclusive=True, group="run")
    async def start_run(self) -> None:
        badge = self.query_one(StatusBadge)
        answer = self.query_one(AnswerView)
        self._reset()
        badge.status = "spawning"
        try:
            self.run = run = await self._start()
        except Exception as exc:  # refused before anything was spawned (e.g. a capability)
            self._show_failure_to_start(str(exc))
            return
        async for event in run.events():
            if isinstance(event, OutputDelta):
                answer.append(event.text)
            elif isinstance(event, StatusChanged) and event.status != "finished":
                badge.status = event.status
            elif isinstance(event, HiddenUpdate):
                self._hidden[event.kind] += 1
                self._stats_dirty = True
            elif isinstance(event, PermissionDecided):
                self.permissions.append(event.record)
                self._stats_dirty = True
            elif isinstance(event, StderrLine):
                self._stderr_unshown.append(event.text)
            elif isinstance(event, Finished):
                self._show_result(event.result)

    def _reset(self) -> None:
        self.result = None
        self.permissions = []
        self._hidden.clear()
        self._started_at = time.monotonic()
        self._clock = ""
        self.query_one(Log).clear()
        self._stderr_unshown.clear()
        answer = self.query_one(AnswerView)
        answer.clear()
        answer.anchor()  # pinned to the bottom until the user scrolls up
        self._show_error(None)
        self._show_cancel(True)
        self._stats_dirty = True
        self._tick()
        self.ticker.resume()

    def _show_result(self, result: SubagentResult) -> None:
        self.query_one(AnswerView).finish()
        self.result = result
        self._show_cancel(False)
        self.query_one(StatusBadge).status = str(result.stop_reason)
        self.query_one("#elapsed", Static).update(format_seconds(result.duration_s), layout=False)
        self._show_error(result.error, failed=result.stop_reason is SubagentStopReason.ERROR)
        if result.truncated:
            self.notify(f"{self.agent}: the answer was cut at the output cap", severity="warning")
        self._stats_dirty = True
        self._tick(final=True)
        self.ticker.pause()  # nothing moves in a finished pane
        self.post_message(self.RunFinished(self, result))

    def _show_failure_to_start(self, message: str) -> None:
        self.query_one(StatusBadge).status = "error"
        self._show_cancel(False)
        self._show_error(message, failed=True)
        self.ticker.pause()

    # Classes go on these small widgets, never on the pane: restyling a pane restyles every block of
    # its answer, which froze the screen for a moment per finishing run with many panes.

    def _show_cancel(self, live: bool) -> None:
        cancel = self.query_one("#cancel", Button)
        cancel.disabled = False
        cancel.display = live

    def _show_error(self, message: str | None, *, failed: bool = False) -> None:
        error = self.query_one("#error", Static)
        error.update(message or "")
        error.set_class(failed, "-failed")
        error.display = bool(message)

    def _tick(self, *, final: bool = False) -> None:
        """Refresh the clock and the counters a few times a second, not once per event.

        Only while the pane is on screen (or once at the end): Textual reflows the whole screen to
        place a repainted widget that is off screen, and a pane scrolled out of sight, or its
        hidden stderr view, would pay that at every tick.
        """
        if not self.is_attached:  # being removed, or the app is shutting down
            return
        if not (final or self.screen.can_view_partial(self)):
            return
        clock = format_seconds(time.monotonic() - self._started_at, live=True)
        if self.result is None and clock != self._clock:
            self._clock = clock
            self.query_one("#elapsed", Static).update(clock, layout=False)  # its size is fixed
        stderr = self.query_one(Log)
        if self._stderr_unshown and stderr.has_class("-shown"):
            stderr.write_lines(self._stderr_unshown)
            self._stderr_unshown.clear()
        if self._stats_dirty:
            self._stats_dirty = False
            lines = [
                line for line in (hidden_summary(self._hidden), permissions_summary(self.permissions)) if line
            ]
            stats = self.query_one("#stats", Static)
            stats.update("\n".join(lines), layout=len(lines) != self._stats_lines)
            self._stats_lines = len(lines)

    # Actions ---------------------------------------------------------------------------------

    @on(Button.Pressed, "#cancel")
    async def action_cancel(self) -> None:
        if self.run is not None and self.result is None:
            self.query_one("#cancel", Button).disabled = True
            await self.run.dispose("cancelled by the user")

    async def action_rerun(self) -> None:
        if self.run is not None and self.result is None:
            await self.run.dispose("re-run by the user")
        self.start_run()

    async def action_close(self) -> None:
        if self.run is not None:
            await self.run.dispose("closed by the user")
        await self.remove()

    def action_scroll_answer(self, where: str) -> None:
        """`up`, `down`, `page_up`, `page_down`, `home` or `end` (which follows the answer again)."""
        getattr(self.query_one(AnswerView), f"scroll_{where}")(animate=False)

    def action_toggle_stderr(self) -> None:
        self.query_one(Log).toggle_class("-shown")
        self._tick()

    def action_permissions(self) -> None:
        self.app.push_screen(PermissionLogScreen(self.agent, self.permissions))

    def action_trace(self) -> None:
        path = getattr(self.run, "trace_path", None)
        if path is None:
            self.notify("This run has no trace: ctrl+t turns tracing on for the next runs.")
        else:
            self.app.push_screen(TraceScreen(self.agent, path))
