"""One attempt on screen: its state, the prompt it answers, the streaming answer, how it ended.

The pane holds its attempt (attributes down) and tells the app about changes of state (messages
up). A single worker consumes `run.events()`; the answer streams into an `AnswerView`, which
coalesces fragments that arrive faster than they can be rendered. A pane made for an attempt that
has already finished (reopened from the board) shows its result without starting anything.
"""

from __future__ import annotations

import contextvars
import shlex
import time
from collections import Counter, deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.message import Message
from textual.widgets import Button, Log, Static
from textual.worker import Worker, WorkerState

from acp_tui.acp.auth import LoginRefused, terminal_login
from acp_tui.core.model import (
    ConfigOptionInfo,
    Finished,
    HiddenUpdate,
    OutputDelta,
    PermissionDecided,
    PermissionRecord,
    SessionStarted,
    StatusChanged,
    StderrLine,
    Stopping,
    SubagentResult,
    SubagentRun,
    SubagentStopReason,
    Usage,
    UsageReported,
)
from acp_tui.core.text import one_line, visible
from acp_tui.session.attempts import Attempt
from acp_tui.ui import text
from acp_tui.ui.screens.permission_log_screen import PermissionLogScreen
from acp_tui.ui.screens.trace_screen import TraceScreen
from acp_tui.ui.widgets.answer_view import AnswerView
from acp_tui.ui.widgets.status_badge import STATE_COLOURS, StatusBadge, colour_key

RunStarter = Callable[[], Awaitable[SubagentRun]]

# The attempt whose run is being started: tasks the run makes inherit it, so the `ask` handler
# knows which pane a permission request belongs to (the core's ask carries no run).
current_attempt: contextvars.ContextVar[Attempt | None] = contextvars.ContextVar(
    "current_attempt", default=None
)

HIDDEN_LABELS = {
    "agent_thought_chunk": "thoughts",
    "tool_call": "tool calls",
    "tool_call_update": "tool updates",
    "plan": "plans",
}
STDERR_LINES = 500
SILENT_AFTER = 10.0  # seconds without output before a live run says it is silent
# Tool calls a policy exists to decide on: made without a single request, the policy had no say.
DECIDABLE_KINDS = ("edit", "execute", "delete")
NEVER_ASKED = "this agent never asked: its policy had nothing to decide"
# The options a pane's header names, by category (or by id where the agent gives none).
HEADER_OPTIONS = ("mode", "model")
STOP_STEPS = {"cancel-sent": "cancelling", "sigterm": "sent SIGTERM", "sigkill": "killed (ignored cancel)"}


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
    """What matters first, so a cut line keeps it: the last decision and its rule, then the counts."""
    if not records:
        return ""
    allowed = sum(r.decision.startswith("allow") for r in records)
    last = records[-1]
    return (
        f"{last.decision} by {last.rule}: {one_line(last.title)}"
        f" · permissions {len(records)} asked, {allowed} allowed"
    )


def usage_summary(usage: Usage | None) -> str:
    if usage is None:
        return ""
    used = f"{usage.used / 1000:.1f}k" if usage.used >= 1000 else str(usage.used)
    size = f"/{usage.size // 1000}k" if usage.size >= 1000 else (f"/{usage.size}" if usage.size else "")
    cost = f" {usage.cost.amount:.2f} {one_line(usage.cost.currency, 5)}" if usage.cost else ""
    return f"{used}{size} tok{cost}"


def never_asked_note(result: SubagentResult | None) -> str:
    """Said when a run made edit/execute/delete tool calls without one permission request."""
    if result is None or result.permissions:
        return ""
    made = [f"{kind} {result.tool_kinds[kind]}" for kind in DECIDABLE_KINDS if result.tool_kinds.get(kind)]
    return f"{NEVER_ASKED} ({', '.join(made)})" if made else ""


def options_summary(options: dict[str, str], offered: tuple[ConfigOptionInfo, ...] = ()) -> str:
    """`mode ask · model demo-fast`: the session's mode and model (by category, else by id); before
    the session, `offered` is unknown and every option chosen for the run is named."""
    if not offered:
        return " · ".join(f"{key} {value}" for key, value in options.items())
    named = {info.id: info.category or info.id for info in offered}
    return " · ".join(
        f"{named[key]} {value}" for key, value in options.items() if named.get(key) in HEADER_OPTIONS
    )


def login_offer(attempt: Attempt) -> tuple[list[str] | None, str | None]:
    """The terminal login an authentication failure offers (`L`), if the agent advertised one it
    may run; else why the one it named is refused (one line), if it named one."""
    result = attempt.result
    if result is None or result.stop_reason is not SubagentStopReason.ERROR:
        return None, None
    preset, refused = attempt.preset, None
    for method in result.auth_methods:
        try:
            argv = terminal_login(method, preset.command, preset.args)
        except LoginRefused as exc:
            refused = refused or str(exc)
            continue
        if argv:
            return argv, None
    return None, refused


def state_of(attempt: Attempt) -> str:
    """The state shown: `cancelled` in words for an aborted run the user stopped."""
    if attempt.state == "aborted" and attempt.cancelled_by_user:
        return "cancelled"
    return attempt.state


def _pane_css() -> str:
    """The border in the state's colour; focus makes it heavy, not another colour."""
    return "\n".join(
        f"&.-state-{key} {{ border: round {colour}; &:focus {{ border: heavy {colour}; }} }}"
        for key, colour in STATE_COLOURS.items()
    )


class RunPane(Vertical, can_focus=True):
    """A pane for one attempt of one agent preset."""

    DEFAULT_CSS = f"""
    RunPane {{
        border: round $panel-lighten-2;
        border-title-color: $text;
        border-title-style: bold;
        border-subtitle-color: $text-muted;
        padding: 0 1;
        height: 1fr;
        &:focus {{ border-title-style: bold reverse; }}
        {_pane_css()}
        &.-state-error {{
            border: thick {STATE_COLOURS["error"]};
            &:focus {{ border: thick {STATE_COLOURS["error"]}; }}
        }}

        .pane-header {{
            height: 1;
            #where {{ width: auto; color: $text-muted; padding: 0 0 0 1; }}
            #elapsed {{
                width: 1fr; min-width: 5; content-align: right middle; color: $text-muted; padding: 0 1;
            }}
            #usage {{ width: auto; max-width: 24; color: $text-muted; }}
            #cancel {{ min-width: 8; }}
        }}
        #asked {{
            height: 1;
            color: $text-muted;
            text-style: italic;
            text-wrap: nowrap;
            text-overflow: ellipsis;
            &.-whole {{ height: auto; max-height: 6; text-wrap: wrap; }}
        }}
        #error {{
            height: auto;
            max-height: 3;
            &.-hint {{ max-height: 6; }}
            color: $text-muted;
        }}
        #error.-failed {{ color: {STATE_COLOURS["error"]}; text-style: bold; }}
        #stats {{
            height: auto;
            color: $text-muted;
            /* One row per line, so that an update lays out only when the line count changes. */
            text-wrap: nowrap;
            text-overflow: ellipsis;
        }}
        #worktree {{ height: auto; max-height: 2; color: $text-muted; display: none; }}
        #stderr {{
            height: 8;
            display: none;
            border-top: dashed $panel-lighten-2;
            color: $text-muted;
            &.-shown {{ display: block; }}
        }}
        &.-zoomed #stderr.-shown {{ height: 1fr; }}
    }}
    """

    BINDINGS = [
        Binding("c", "cancel", "Cancel"),
        Binding("r", "rerun", "Re-run"),
        Binding("x", "close", "Close", show=False),  # the footer stays whole at 80 columns: ? lists all
        Binding("z", "app.zoom", "Zoom", show=False),
        Binding("e", "toggle_stderr", "Stderr", show=False),
        Binding("l", "permissions", "Permission log", show=False),
        Binding("t", "trace", "Trace", show=False),
        Binding("y", "copy", "Copy answer", show=False),
        # Isolation: the round's compare view, applying this run's diff, keeping its worktree.
        Binding("v", "app.compare", "Compare", show=False),
        Binding("A", "app.apply_diff", "Apply diff", show=False),
        Binding("k", "keep_worktree", "Keep worktree", show=False),
        Binding("L", "login", "Log in"),  # shown only after an authentication failure offering it
        Binding("tab,ctrl+right", "app.next_pane", "Next pane", show=False),
        Binding("shift+tab,ctrl+left", "app.previous_pane", "Previous pane", show=False),
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

    @dataclass
    class StateChanged(Message):
        pane: RunPane
        state: str

    @dataclass
    class RerunRequested(Message):
        pane: RunPane

    @dataclass
    class OptionsOffered(Message):
        """The session's config options: the agents screen (F2) offers their values."""

        pane: RunPane
        offered: tuple[ConfigOptionInfo, ...]

    @dataclass
    class LoginRequested(Message):
        """Run this login in the terminal (the app asks first), then re-run the pane's prompt."""

        pane: RunPane
        argv: list[str]

    @dataclass
    class Closed(Message):
        """The app takes the pane out of the grid; its attempt stays in the session."""

        pane: RunPane

    def __init__(self, attempt: Attempt, start: RunStarter | None) -> None:
        super().__init__(classes="run-pane")
        self.attempt = attempt
        self.run: SubagentRun | None = None
        self._start = start
        self._hidden: Counter[str] = Counter()
        self._stats_dirty = False
        self._stats_lines = 1
        self._clock = ""
        self._waiting_asks = 0
        self._stop_step = ""
        self._phase = "waiting"  # the run's own phase, under `needs-you`
        self._options = options_summary(attempt.preset.options)  # the session's, once it started
        # Stderr is shown a few times a second, at most its last lines: a child flooding stderr
        # must not cost a widget update per line.
        self._stderr_unshown: deque[str] = deque(maxlen=STDERR_LINES)
        self.border_title = text.line(attempt.agent, 40)
        self._show_subtitle()
        self.add_class(f"-state-{colour_key(state_of(attempt))}")

    # What tests and the app read --------------------------------------------------------------

    @property
    def agent(self) -> str:
        return self.attempt.agent

    @property
    def prompt(self) -> str:
        return self.attempt.prompt

    @property
    def round_no(self) -> int:
        return self.attempt.round_no

    @property
    def policy(self) -> str:
        return self.attempt.policy

    @property
    def result(self) -> SubagentResult | None:
        return self.attempt.result

    @property
    def permissions(self) -> list[PermissionRecord]:
        return self.attempt.permissions

    @property
    def live(self) -> bool:
        return not self.attempt.finished

    @property
    def state(self) -> str:
        return state_of(self.attempt)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "cancel":
            return self.live  # a finished run has nothing to cancel: the footer drops the key
        if action == "login":
            return login_offer(self.attempt)[0] is not None
        return True

    def compose(self) -> ComposeResult:
        with Horizontal(classes="pane-header"):
            yield StatusBadge(self.state, id="badge")
            yield Static(self.attempt.label, id="where", markup=False)
            yield Static("", id="elapsed", markup=False)
            yield Static("", id="usage", markup=False)
            cancel = Button("Cancel", id="cancel", variant="error", compact=True)
            cancel.can_focus = False  # by mouse only: Enter on a focused button cancelled a wrong run
            yield cancel
        yield Static(text.line(self.attempt.first_line), id="asked")
        yield AnswerView(id="answer")
        yield Static("", id="error")
        yield Static("nothing hidden", id="stats")
        yield Static("", id="worktree")
        stderr = Log(id="stderr", max_lines=STDERR_LINES, auto_scroll=True)
        stderr.can_focus = False
        yield stderr

    def on_mount(self) -> None:
        self.ticker = self.set_interval(0.2, self._tick)
        if self.attempt.finished or self._start is None:
            self._show_history()
        else:
            self.start_run()

    def _show_subtitle(self) -> None:
        options = f" · {self._options}" if self._options else ""
        sandbox = " · sandbox" if self.attempt.preset.sandbox == "workspace" else ""
        self.border_subtitle = text.markup(
            "$where · $policy$sandbox$options",
            where=self.attempt.label,
            policy=self.attempt.policy,
            sandbox=sandbox,
            options=options,
        )

    # The run ---------------------------------------------------------------------------------

    @work(exclusive=True, group="run", exit_on_error=False)
    async def start_run(self) -> None:
        answer = self.query_one(AnswerView)
        self._reset()
        self._phase = "spawning"
        self._set_state("spawning")
        assert self._start is not None
        current_attempt.set(self.attempt)
        try:
            self.run = run = await self._start()
        except Exception as exc:  # refused before anything was spawned (e.g. a capability)
            self._show_failure(str(exc))
            return
        self._show_worktree()
        self.attempt.trace = getattr(run, "trace_path", None)
        self.attempt.cwd = getattr(run, "cwd", None)
        async for event in run.events():
            if isinstance(event, OutputDelta):
                answer.append(event.text)
                self.attempt.last_output_at = time.monotonic()
                self.attempt.first_output_at = self.attempt.first_output_at or self.attempt.last_output_at
            elif isinstance(event, StatusChanged) and event.status == "cancelling":
                self._set_state("cancelling")
            elif isinstance(event, StatusChanged) and event.status != "finished":
                self._phase = event.status
                if self.attempt.state not in ("cancelling", "needs-you"):
                    self._set_state(event.status)
            elif isinstance(event, Stopping):
                self._show_stop_step(event.step)
            elif isinstance(event, HiddenUpdate):
                self._hidden[event.kind] += 1
                self._stats_dirty = True
            elif isinstance(event, PermissionDecided):
                self.attempt.permissions.append(event.record)
                self._stats_dirty = True
            elif isinstance(event, StderrLine):
                self._stderr_unshown.append(event.text)
            elif isinstance(event, UsageReported):
                self.attempt.usage = event.usage
                self._stats_dirty = True
            elif isinstance(event, SessionStarted):
                if event.agent is not None and event.agent.version:
                    title = f"{self.agent} · {event.agent.title or event.agent.name} {event.agent.version}"
                    self.border_title = text.line(title, 60)
                self._options = options_summary(event.options, event.offered)
                self._show_subtitle()
                if event.offered:
                    self.post_message(self.OptionsOffered(self, event.offered))
            elif isinstance(event, Finished):
                await self.record_change()  # before the end is shown: the record then has the diff
                self._show_result(event.result)

    @on(Worker.StateChanged)
    def _worker_changed(self, event: Worker.StateChanged) -> None:
        """A failure in this pane stays in this pane: its state `error`, the reason shown."""
        if event.state is WorkerState.ERROR and not self.attempt.finished:
            error = event.worker.error
            self._show_failure(f"the pane failed: {type(error).__name__}: {error}")
            if self.run is not None:
                self.run_worker(self.run.dispose("the pane failed"), exit_on_error=False)

    def _reset(self) -> None:
        self._hidden.clear()
        self._clock = ""
        self._waiting_asks = 0
        self._stop_step = ""
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

    def _set_state(self, state: str) -> None:
        old = self.state
        self.attempt.state = state
        new = self.state
        if old == new:
            return
        self.query_one(StatusBadge).status = new
        if self.has_focus:
            self.refresh_bindings()
        # Only the pane's border follows the state: a class on the pane restyles its few children.
        self.remove_class(f"-state-{colour_key(old)}")
        self.add_class(f"-state-{colour_key(new)}")
        self.post_message(self.StateChanged(self, new))

    def waiting_asks(self, count: int) -> None:
        """The app's count of this attempt's permission requests waiting for the user."""
        self._waiting_asks = count
        if self.attempt.finished or self.attempt.state == "cancelling":
            return
        if count:
            self._set_state("needs-you")
        elif self.attempt.state == "needs-you":
            self._set_state(self._phase)

    def _show_stop_step(self, step: str) -> None:
        self._stop_step = STOP_STEPS.get(step, step)
        if not self.attempt.finished:
            self._set_state("cancelling")
            self._show_error(self._stop_step)

    def _show_result(self, result: SubagentResult) -> None:
        self.query_one(AnswerView).finish()
        self.attempt.trace = getattr(self.run, "trace_path", None) or self.attempt.trace
        self.attempt.result = result
        if result.usage is not None:
            self.attempt.usage = result.usage
        self._show_cancel(False)
        self._set_state(str(result.stop_reason))
        self.query_one("#elapsed", Static).update(format_seconds(result.duration_s), layout=False)
        message = result.error
        if self._stop_step == STOP_STEPS["sigkill"] or result.ended_by == "sigkill":
            message = f"{message} · killed (ignored cancel)" if message else "killed (ignored cancel)"
        elif result.ended_by == "sigterm":
            message = f"{message} · ended by SIGTERM" if message else "ended by SIGTERM"
        login, refused = login_offer(self.attempt)
        # The command comes from the agent: named before the key runs it (whole in the confirm).
        hint = f"L: log in in the terminal, then run again: {shlex.join(login)}" if login else refused or ""
        self._show_error(message, failed=result.stop_reason is SubagentStopReason.ERROR, hint=hint)
        if self.has_focus:
            self.refresh_bindings()  # `L` may be on offer now
        if result.truncated:
            self.notify(
                f"{text.safe_notice(self.agent)}: the answer was cut at the output cap",
                severity="warning",
                markup=False,
            )
        self._stats_dirty = True
        self._tick(final=True)
        self.ticker.pause()  # nothing moves in a finished pane
        self.post_message(self.RunFinished(self, result))

    def _show_history(self) -> None:
        """A finished attempt shown again: its answer, counts and stderr tail, nothing started."""
        result = self.attempt.result
        self._show_cancel(False)
        self.ticker.pause()
        if result is None:
            return
        answer = self.query_one(AnswerView)
        answer.append(result.output)
        answer.finish()
        self._hidden.update(result.hidden)
        self._stderr_unshown.extend(result.stderr_tail)
        self.query_one("#elapsed", Static).update(format_seconds(result.duration_s), layout=False)
        self._show_error(result.error, failed=result.stop_reason is SubagentStopReason.ERROR)
        self._stats_dirty = True
        self._tick(final=True)
        self._show_worktree()

    # Isolation: the run's own git worktree ----------------------------------------------------

    async def record_change(self) -> None:
        """The change of the run's worktree, once: within what the preset's `run_timeout` leaves,
        files over its `max_file_bytes` left out."""
        from acp_tui.workspace.worktrees import time_left

        attempt = self.attempt
        worktree = attempt.worktree
        if worktree is not None and worktree.change is None:
            started = attempt.spawned_at or attempt.started_at
            await worktree.record(
                timeout=time_left(started, attempt.preset.run_timeout),
                max_file_bytes=attempt.preset.max_file_bytes,
            )
            if self.is_attached:  # a closed pane records too, off the screen
                self._show_worktree()

    def _show_worktree(self) -> None:
        """Where the run works (and what it does not carry), then what it changed, and kept or not."""
        worktree = self.attempt.worktree
        line = self.query_one("#worktree", Static)
        line.display = worktree is not None
        if worktree is None:
            return
        change = worktree.change
        origin = worktree.origin
        line.tooltip = text.line(f"{worktree.path}: {origin.note}")  # the whole of it, paths too
        if change is None:  # what matters first: a narrow pane shows two lines
            words = f"fresh worktree at HEAD {origin.base[:8]}"
            words += ", uncommitted changes not carried" if origin.dirty else " (a fresh checkout)"
        elif change.stat is not None and change.stat.files:
            words = f"changed {change.stat} (v compares, A applies)"
            if change.skipped:
                words += f", {len(change.skipped)} over max_file_bytes not recorded"
        elif change.stat is not None:
            words = "no change in its worktree"
        else:
            words = change.error or "the change could not be recorded"
        if worktree.kept:
            words += " · worktree kept"  # where: the toast of `k`, and the tooltip
        elif worktree.removed:
            words += " · worktree removed"
        line.update(text.line(words))

    def action_keep_worktree(self) -> None:
        """`k`: this run's worktree stays after the pane is closed and after quit (again: not kept)."""
        worktree = self.attempt.worktree
        if worktree is None or worktree.removed:
            self.notify("This run has no worktree to keep.", severity="warning")
            return
        try:
            worktree.keep(not worktree.kept)
        except OSError as exc:
            self.notify(
                f"Could not keep the worktree: {text.safe_notice(str(exc))}", severity="error", markup=False
            )
            return
        self._show_worktree()
        where = text.safe_notice(str(worktree.path))
        self.notify(
            f"Worktree kept: {where}" if worktree.kept else f"Worktree no longer kept: {where}", markup=False
        )

    def _show_failure(self, message: str) -> None:
        """The run could not start, or the pane itself failed: the attempt ends `error`."""
        self.attempt.result = SubagentResult(
            stop_reason=SubagentStopReason.ERROR,
            output=self.query_one(AnswerView).text,
            error=message,
            permissions=list(self.attempt.permissions),
            duration_s=time.monotonic() - self.attempt.started_at,
        )
        self.query_one(AnswerView).finish()
        self._set_state("error")
        self._show_cancel(False)
        self._show_error(message, failed=True)
        self.ticker.pause()
        self.post_message(self.RunFinished(self, self.attempt.result))

    # Classes go on these small widgets (and the state class on the pane, for its border).

    def _show_cancel(self, live: bool) -> None:
        cancel = self.query_one("#cancel", Button)
        cancel.disabled = False
        cancel.display = live

    def _show_error(self, message: str | None, *, failed: bool = False, hint: str = "") -> None:
        """The message, cut to three lines; a `hint` (our own: what a key does) on a line of its own."""
        error = self.query_one("#error", Static)
        shown = text.line(message or "")
        error.update(Content("\n").join([text.line(hint, 200, "not bold"), shown]) if hint else shown)
        error.set_class(failed, "-failed")
        error.set_class(bool(hint), "-hint")
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
        if self.attempt.result is None:
            now = time.monotonic()
            clock = format_seconds(now - self.attempt.started_at, live=True)
            since = now - (self.attempt.last_output_at or self.attempt.started_at)
            if since >= SILENT_AFTER:
                clock = f"silent {format_seconds(since, live=True)}"
            if clock != self._clock:
                self._clock = clock
                self.query_one("#elapsed", Static).update(clock, layout=False)  # its size is fixed
        stderr = self.query_one(Log)
        if self._stderr_unshown and stderr.has_class("-shown"):
            stderr.write_lines([visible(line) for line in self._stderr_unshown])
            self._stderr_unshown.clear()
        if self._stats_dirty:
            self._stats_dirty = False
            usage = usage_summary(self.attempt.usage)
            self.query_one("#usage", Static).update(f"{usage} " if usage else "")
            lines = [
                line
                for line in (
                    permissions_summary(self.attempt.permissions),
                    never_asked_note(self.attempt.result),
                    hidden_summary(self._hidden),
                )
                if line
            ]
            stats = self.query_one("#stats", Static)
            # Kinds, decisions and rule names come from the agent or the config: literal, one line each.
            shown = Content("\n".join(one_line(line) for line in lines))
            stats.update(shown, layout=len(lines) != self._stats_lines)
            self._stats_lines = len(lines)

    # Focus shows the whole prompt --------------------------------------------------------------

    def on_focus(self) -> None:
        self._show_prompt(whole=True)

    def on_blur(self) -> None:
        self._show_prompt(whole=self.has_class("-zoomed"))

    def _show_prompt(self, *, whole: bool) -> None:
        asked = self.query_one("#asked", Static)
        prompt = self.prompt.strip()
        if whole and "\n" not in prompt and len(prompt) < asked.size.width:
            whole = False  # one line that fits: already whole, and a focus change costs no layout
        if whole == asked.has_class("-whole"):
            return
        asked.update(text.literal(prompt) if whole else text.line(self.attempt.first_line))
        asked.set_class(whole, "-whole")

    def zoomed(self, on: bool) -> None:
        self.set_class(on, "-zoomed")
        self._show_prompt(whole=on or self.has_focus)

    # Actions ---------------------------------------------------------------------------------

    @on(Button.Pressed, "#cancel")
    async def action_cancel(self) -> None:
        if self.run is not None and self.attempt.result is None:
            self.query_one("#cancel", Button).disabled = True
            self.attempt.cancelled_by_user = True
            self._set_state("cancelling")
            await self.run.dispose("cancelled by the user")

    def action_login(self) -> None:
        argv, _ = login_offer(self.attempt)
        if argv:
            self.post_message(self.LoginRequested(self, argv))

    def action_rerun(self) -> None:
        """A new attempt beside this one (the app makes it): this one stays as it is."""
        self.post_message(self.RerunRequested(self))

    async def action_close(self) -> None:
        if self.run is not None and self.attempt.result is None:
            self.attempt.cancelled_by_user = True
            await self.run.dispose("closed by the user")
            self.attempt.result = self.attempt.result or await self.run.result()
            self.attempt.state = str(self.attempt.result.stop_reason)
        self.attempt.open = False
        self.post_message(self.Closed(self))

    def action_scroll_answer(self, where: str) -> None:
        """`up`, `down`, `page_up`, `page_down`, `home` or `end` (which follows the answer again)."""
        getattr(self.query_one(AnswerView), f"scroll_{where}")(animate=False)

    def action_toggle_stderr(self) -> None:
        self.query_one(Log).toggle_class("-shown")
        self._tick()

    def action_permissions(self) -> None:
        self.app.push_screen(PermissionLogScreen(self.agent, self.attempt.permissions))

    def action_trace(self) -> None:
        path = getattr(self.run, "trace_path", None) or self.attempt.trace
        if path is None:
            self.notify("This run has no trace: ctrl+t turns tracing on for the next runs.")
        else:
            self.app.push_screen(TraceScreen(self.agent, path))

    def action_copy(self) -> None:
        answer = self.attempt.result.output if self.attempt.result else self.query_one(AnswerView).text
        self.app.copy_to_clipboard(answer)
        self.notify(f"Copied {len(answer):,} characters of the answer.")
