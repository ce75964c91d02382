"""One attempt on screen: its state, the prompt it answers, the streaming answer, how it ended.

The pane renders its attempt (attributes down) and tells the screen what the person asked for
(messages up). The driver (`acp_tui.session.driver`) runs the attempt; one worker here consumes
`attempt.events`, and the answer streams into an `AnswerView`, which coalesces fragments that
arrive faster than they can be rendered. A pane made for an attempt that has already finished
(reopened from the board) shows its result without starting anything.
"""

from __future__ import annotations

import os
import shlex
import time
from collections import deque
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, cast

from textual import on, work
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.message import Message
from textual.widgets import Button, Log, Static
from textual.worker import Worker, WorkerState

from acp_tui.core.model import (
    Finished,
    NetworkRefused,
    OutputDelta,
    PermissionDecided,
    PermissionRecord,
    SessionStarted,
    StderrLine,
    Stopping,
    SubagentResult,
    SubagentStopReason,
    ToolCallChanged,
    UsageReported,
)
from acp_tui.core.text import one_line, visible
from acp_tui.session.attempts import Attempt, ChangeRecorded, WorktreeReady
from acp_tui.ui import keys, text
from acp_tui.ui.screens.permission_log_screen import PermissionLogScreen
from acp_tui.ui.screens.trace_screen import TraceScreen
from acp_tui.ui.summary import (
    SILENT_AFTER,
    STOP_STEPS,
    ending_note,
    failed_calls_summary,
    follow_up_refused,
    format_seconds,
    hidden_summary,
    login_offer,
    never_asked_note,
    options_summary,
    permissions_summary,
    turn_header,
    usage_summary,
)
from acp_tui.ui.widgets.answer_view import AnswerView, in_sight
from acp_tui.ui.widgets.context_gauge import ContextGauge
from acp_tui.ui.widgets.status_badge import STATE_COLOURS, StatusBadge, colour_key

if TYPE_CHECKING:
    from acp_tui.session.driver import SessionDriver

STDERR_LINES = 500


def copied_words(characters: int) -> str:
    """Where `y` sent the answer: to the terminal, which may or may not pass it on."""
    words = (
        f"Sent {characters:,} characters of the answer to the terminal's clipboard (OSC 52): "
        "it lands there if the terminal allows it"
    )
    if os.environ.get("TMUX"):
        words += "; in tmux, only with `set -g set-clipboard on`"
    return words + ". The mouse selects text too."


def _pane_css() -> str:
    """The border in the state's colour; focus makes it heavy, not another colour."""
    return "\n".join(
        f"&.-state-{key} {{ border: round {colour}; &:focus {{ border: heavy {colour}; }} }}"
        for key, colour in STATE_COLOURS.items()
    )


class Grid(Protocol):
    """What a pane asks of the screen that shows it (`MainScreen`). Each returns once the focus is
    where the work leaves it, so that the key typed next acts there (`ui.key_order`)."""

    async def close_panes(self, panes: list[RunPane]) -> None: ...

    async def rerun(self, old: RunPane) -> None: ...

    def follow_up_on(self, pane: RunPane) -> None: ...

    def confirm_login(self, pane: RunPane, argv: list[str]) -> None: ...


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
            /* The usage gives way (cut, its cost first) before the clock does. */
            #usage {{
                width: 1fr; padding: 0 0 0 1; color: $text-muted; text-align: right;
                text-wrap: nowrap; text-overflow: ellipsis;
            }}
            #elapsed {{ width: 8; content-align: right middle; color: $text-muted; padding: 0 1 0 0; }}
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
        #failed-calls {{ height: auto; max-height: 2; display: none; color: {STATE_COLOURS["error"]}; }}
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
        &.-maximized #stderr.-shown {{ height: 1fr; }}
    }}
    """

    BINDINGS = keys.bindings("pane")

    @dataclass
    class StateChanged(Message):
        pane: RunPane
        state: str

    def __init__(self, attempt: Attempt, driver: SessionDriver) -> None:
        super().__init__(classes="run-pane")
        self.attempt = attempt
        self.driver = driver
        self._shown_state = attempt.state
        self._stats_dirty = False
        self.ticking = False  # the screen's clock ticks it (`tick`) while its run goes on
        self._stats_lines = 1
        self._clock = ""
        # Stderr is shown a few times a second, at most its last lines: a child flooding stderr
        # must not cost a widget update per line.
        self._stderr_unshown: deque[str] = deque(maxlen=STDERR_LINES)
        self._show_title()
        self._show_subtitle()
        self.add_class(f"-state-{colour_key(self._shown_state)}")

    # What tests and the screen read -----------------------------------------------------------

    @property
    def agent(self) -> str:
        return self.attempt.agent

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
    def run(self) -> object | None:
        return self.attempt.run

    @property
    def live(self) -> bool:
        return self.attempt.live

    @property
    def state(self) -> str:
        return self.attempt.state

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "cancel":
            return self.live  # a finished run has nothing to cancel: the footer drops the key
        if action == "login":
            return login_offer(self.attempt)[0] is not None
        if action == "follow_up":
            return not self.live  # shown once the run has ended (and says so if it cannot be)
        return True

    def compose(self) -> ComposeResult:
        with Horizontal(classes="pane-header"):
            yield StatusBadge(self.state, id="badge")
            yield Static("", id="usage", markup=False)
            yield ContextGauge(id="gauge")
            yield Static("", id="elapsed", markup=False)
            cancel = Button("Cancel", id="cancel", variant="error", compact=True)
            cancel.can_focus = False  # by mouse only: Enter on a focused button cancelled a wrong run
            yield cancel
        # The conversation's opening prompt: later turns are headed in the answer, each by its own.
        yield Static(text.line(self.attempt.opening.first_line), id="asked")
        yield AnswerView(id="answer")
        yield Static("", id="error")
        yield Static("", id="failed-calls")
        yield Static("nothing hidden", id="stats")
        yield Static("", id="worktree")
        stderr = Log(id="stderr", max_lines=STDERR_LINES, auto_scroll=True)
        stderr.can_focus = False
        yield stderr

    def on_mount(self) -> None:
        self.ticking = True
        self.show_state()
        if self.attempt.finished:
            self._show_history()
        else:
            self.query_one(AnswerView).anchor()  # pinned to the bottom until the user scrolls up
            self._show_error(None)
            self._stats_dirty = True
            self._show_worktree()
            self.follow()

    def _show_title(self) -> None:
        result = self.attempt.result
        info = self.attempt.agent_info or (result.agent if result is not None else None)
        where = self.attempt.preset.where
        agent = f"{self.agent} @ {where}" if where else self.agent
        if info is not None and info.version:
            self.border_title = text.line(f"{agent} · {info.title or info.name} {info.version}", 60)
        else:
            self.border_title = text.line(agent, 60 if where else 40)

    def _show_subtitle(self) -> None:
        summary = options_summary(self.attempt)  # the session's, once it started
        options = f" · {summary}" if summary else ""
        sandbox = " · sandbox" if self.attempt.preset.sandbox == "workspace" else ""
        self.border_subtitle = text.markup(
            "$where · $policy$sandbox$options",
            where=self.attempt.label,
            policy=self.attempt.policy,
            sandbox=sandbox,
            options=options,
        )

    # Following the attempt --------------------------------------------------------------------

    @work(exclusive=True, group="run", exit_on_error=False)
    async def follow(self) -> None:
        """Render what the driver reports of the attempt, to its end."""
        answer = self.query_one(AnswerView)
        async for event in self.attempt.events:
            if isinstance(event, OutputDelta):
                answer.append(event.text)
            elif isinstance(event, Stopping):
                self._show_error(STOP_STEPS.get(event.step, event.step))
            elif isinstance(event, ToolCallChanged | NetworkRefused):
                self._stats_dirty = True
                self._activity_changed()
            elif isinstance(event, PermissionDecided | UsageReported):
                self._stats_dirty = True
            elif isinstance(event, StderrLine):
                self._stderr_unshown.append(event.text)
            elif isinstance(event, SessionStarted):
                self._show_title()
                self._show_subtitle()
            elif isinstance(event, WorktreeReady | ChangeRecorded):
                self._show_worktree()
            elif isinstance(event, Finished):
                self._show_result(event.result)
                self._activity_changed()
            else:
                self._stats_dirty = True  # a hidden update: counted
            self.show_state()

    @on(Worker.StateChanged)
    def _worker_changed(self, event: Worker.StateChanged) -> None:
        """A failure in this pane stays in this pane: its run ends `error`, the reason shown."""
        if event.state is WorkerState.ERROR and self.attempt.live:
            error = event.worker.error
            message = f"the pane failed: {type(error).__name__}: {error}"
            self._show_error(message, failed=True)
            self.run_worker(self.driver.fail(self.attempt, message), exit_on_error=False)

    def show_state(self) -> None:
        """The attempt's state on the badge and the border (the driver moved it)."""
        old, new = self._shown_state, self.attempt.state
        badge = self.query(StatusBadge)
        if old == new or not badge:  # not composed yet: it is shown as it is once mounted
            return
        self._shown_state = new
        badge.first().status = new
        if self.has_focus:
            self.refresh_bindings()
        # Only the pane's border follows the state: a class on the pane restyles its few children.
        self.remove_class(f"-state-{colour_key(old)}")
        self.add_class(f"-state-{colour_key(new)}")
        if new == "cancelling":
            self.query_one("#cancel", Button).disabled = True
            if not self.query_one("#error", Static).display:
                self._show_error("cancelling")
        self.post_message(self.StateChanged(self, new))

    def _show_result(self, result: SubagentResult) -> None:
        self.query_one(AnswerView).finish()
        self._show_cancel(False)
        self.query_one("#elapsed", Static).update(format_seconds(result.duration_s), layout=False)
        note = ending_note(result, self.attempt.stop_step)
        message = " · ".join(part for part in (result.error, note) if part)
        login, refused = login_offer(self.attempt)
        failed = result.stop_reason is SubagentStopReason.ERROR
        # The command comes from the agent: named before the key runs it (whole in the confirm).
        hint = f"L: log in in the terminal, then run again: {shlex.join(login)}" if login else refused or ""
        if failed and not hint and result.stderr_tail:  # the error names one line; the rest is there
            lines = len(result.stderr_tail)
            hint = f"e: its stderr (the last {lines} lines)" if lines > 1 else "e: its stderr (one line)"
        self._show_error(message, failed=failed, hint=hint)
        if self.has_focus:
            self.refresh_bindings()  # `L` may be on offer now
        if result.truncated:
            self.notify(
                f"{text.safe_notice(self.agent)}: the answer was cut at the output cap",
                severity="warning",
                markup=False,
            )
        self._show_worktree()
        self._stats_dirty = True
        self._tick(final=True)
        self.ticking = False  # nothing moves in a finished pane

    def _show_history(self) -> None:
        """A finished attempt shown again (every turn of its conversation, each under its prompt):
        its answers, counts and stderr tail, nothing started."""
        result = self.attempt.result
        assert result is not None
        answer = self.query_one(AnswerView)
        turns = [self.attempt]
        while turns[0].previous is not None:
            turns.insert(0, turns[0].previous)
        for turn in turns:
            if turn is not turns[0]:
                answer.append(turn_header(turn))
            answer.append(turn.result.output if turn.result else "")
        self._stderr_unshown.extend(result.stderr_tail)
        self._show_result(result)

    # Isolation: the run's own git worktree ----------------------------------------------------

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
        error.display = bool(message or hint)

    def tick(self) -> None:
        """The screen's clock, a few times a second: one timer for every pane, not one each."""
        if self.ticking:
            self._tick()

    def _tick(self, *, final: bool = False) -> None:
        """Refresh the clock and the counters a few times a second, not once per event.

        Only while the pane is in sight (or once at the end): Textual reflows the whole screen to
        place a repainted widget that is off screen, and a pane scrolled out of sight, or its
        hidden stderr view, would pay that at every tick; under a dialog each repaint renders the
        dimmed screen again.
        """
        if not self.is_attached:  # being removed, or the app is shutting down
            return
        if not (final or in_sight(self)):
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
            self.query_one("#usage", Static).update(usage, layout=False)  # its width is the row's rest
            self.query_one(ContextGauge).usage = self.attempt.last_usage
            lines = [
                line
                for line in (
                    permissions_summary(self.attempt.permissions),
                    never_asked_note(self.attempt.result),
                    hidden_summary(self.attempt.hidden),
                )
                if line
            ]
            stats = self.query_one("#stats", Static)
            # Kinds, decisions and rule names come from the agent or the config: literal, one line each.
            shown = Content("\n".join(one_line(line) for line in lines))
            stats.update(shown, layout=len(lines) != self._stats_lines)
            self._stats_lines = len(lines)
            failed = failed_calls_summary(self.attempt.tool_calls)
            failed_line = self.query_one("#failed-calls", Static)
            if failed or failed_line.display:
                failed_line.update(text.line(failed))
                failed_line.display = bool(failed)

    # Focus shows the whole prompt --------------------------------------------------------------

    def on_focus(self) -> None:
        self._show_prompt(whole=True)

    def on_blur(self) -> None:
        self._show_prompt(whole=self.has_class("-maximized"))

    def _show_prompt(self, *, whole: bool) -> None:
        asked = self.query_one("#asked", Static)
        prompt = self.attempt.opening.prompt.strip()
        if whole and "\n" not in prompt and len(prompt) < asked.size.width:
            whole = False  # one line that fits: already whole, and a focus change costs no layout
        if whole == asked.has_class("-whole"):
            return
        asked.update(text.literal(prompt) if whole else text.line(self.attempt.opening.first_line))
        asked.set_class(whole, "-whole")

    def zoomed(self, on: bool) -> None:
        """Zoomed (Textual's maximize: the pane has its `-maximized` class), the whole prompt shows.
        The answer fits its width again once laid out: the reflow after a maximize ends sends no
        Resize to a widget that was in sight throughout (its lines stayed cut at the zoomed width)."""
        self._show_prompt(whole=on or self.has_focus)
        self.call_after_refresh(self.query_one(AnswerView).fit)

    # Actions ---------------------------------------------------------------------------------

    @on(Button.Pressed, "#cancel")
    def action_cancel(self) -> None:
        """The run says `cancelling` at once; its disposal goes on in the background."""
        if self.attempt.live:
            self.driver.cancel_soon(self.attempt, "cancelled by the user", by_user=True)

    @property
    def grid(self) -> Grid:
        return cast(Grid, self.screen)

    def action_login(self) -> None:
        argv, _ = login_offer(self.attempt)
        if argv:
            self.grid.confirm_login(self, argv)

    def action_follow_up(self) -> None:
        """`f`: follow up on this conversation, unless it cannot be continued (said on the pane)."""
        why = follow_up_refused(self.attempt)
        if why is not None:
            self._show_error(
                self.attempt.result.error if self.attempt.result else None, hint=f"no follow-up: {why}"
            )
            return
        self.grid.follow_up_on(self)

    def continue_with(self, attempt: Attempt) -> None:
        """The next turn of this pane's conversation: shown under the previous ones, as it streams."""
        self.attempt = attempt
        self._shown_state = ""
        answer = self.query_one(AnswerView)
        answer.go_on()
        answer.append(turn_header(attempt))
        answer.anchor()
        self._show_error(None)
        self._show_cancel(True)
        self._clock = ""
        self._show_subtitle()
        self._stats_dirty = True
        self.ticking = True
        self.show_state()
        self.follow()

    async def action_rerun(self) -> None:
        """A new attempt beside this one (the screen makes it): this one stays as it is."""
        await self.grid.rerun(self)

    async def action_close(self) -> None:
        """The pane leaves the grid (its attempt stays in the session: the board and the export)."""
        await self.grid.close_panes([self])

    def action_scroll_answer(self, where: str) -> None:
        """`up`, `down`, `page_up`, `page_down`, `home` or `end` (which follows the answer again)."""
        getattr(self.query_one(AnswerView), f"scroll_{where}")(animate=False)

    def action_toggle_stderr(self) -> None:
        self.query_one(Log).toggle_class("-shown")
        self._tick()

    def action_permissions(self) -> None:
        self.app.push_screen(PermissionLogScreen(self.agent, self.attempt.permissions))

    def action_trace(self) -> None:
        path = getattr(self.attempt.run, "trace_path", None) or self.attempt.trace
        if path is None:
            self.notify("This run has no trace: ctrl+t turns tracing on for the next runs.")
        else:
            self.app.push_screen(TraceScreen(self.agent, path))

    def action_activity(self) -> None:
        from acp_tui.ui.screens.activity_screen import ActivityScreen

        self.app.push_screen(ActivityScreen(self.attempt))

    def _activity_changed(self) -> None:
        """An open activity screen of this run follows it."""
        from acp_tui.ui.screens.activity_screen import ActivityScreen

        screen = self.app.screen
        if isinstance(screen, ActivityScreen) and screen.attempt is self.attempt:
            screen.follow()

    def action_copy(self) -> None:
        answer = self.attempt.result.output if self.attempt.result else self.query_one(AnswerView).text
        self.app.copy_to_clipboard(answer)
        self.notify(copied_words(len(answer)), timeout=8)
