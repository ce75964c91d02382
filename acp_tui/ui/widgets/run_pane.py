"""One attempt on screen: its state, the prompt it answers, the streaming answer, how it ended.

The pane renders its attempt (attributes down) and tells the screen what the person asked for
(messages up). The driver (`acp_tui.session.driver`) runs the attempt; one worker here consumes
`attempt.events`, and an `AttemptFeed` turns each into what the pane shows (`PaneContent`, drawn in
one piece by `PaneView`). A pane made for an attempt that has already finished (reopened from the
board) shows its result without starting anything.
"""

from __future__ import annotations

import os
import shlex
import time
from collections import deque
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Protocol, cast

from textual import work
from textual.content import Content
from textual.message import Message
from textual.worker import Worker, WorkerState

from acp_tui.core.model import (
    Finished,
    NetworkRefused,
    OutputDelta,
    SessionStarted,
    StderrLine,
    Stopping,
    SubagentResult,
    SubagentStopReason,
    ToolCallChanged,
)
from acp_tui.core.text import one_line
from acp_tui.session.attempts import Attempt, ChangeRecorded, WorktreeReady
from acp_tui.ui import keys, text
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
)
from acp_tui.ui.widgets.answer_document import AnswerDocument
from acp_tui.ui.widgets.pane_rows import Head, Part
from acp_tui.ui.widgets.pane_view import STDERR_LINES, PaneContent, PaneView

if TYPE_CHECKING:
    from acp_tui.session.attempts import AttemptEvent
    from acp_tui.session.driver import SessionDriver


def copied_words(characters: int) -> str:
    """Where `y` sent the answer: to the terminal, which may or may not pass it on."""
    words = (
        f"Sent {characters:,} characters of the answer to the terminal's clipboard (OSC 52): "
        "it lands there if the terminal allows it"
    )
    if os.environ.get("TMUX"):
        words += "; in tmux, only with `set -g set-clipboard on`"
    return words + ". The mouse selects text too."


class Grid(Protocol):
    """What a pane asks of the screen that shows it (`MainScreen`). Each returns once the focus is
    where the work leaves it, so that the key typed next acts there (`ui.key_order`)."""

    @property
    def zoomed(self) -> RunPane | None: ...

    async def close_panes(self, panes: list[RunPane]) -> None: ...

    async def rerun(self, old: RunPane) -> None: ...

    def follow_up_on(self, pane: RunPane) -> None: ...

    def confirm_login(self, pane: RunPane, argv: list[str]) -> None: ...


class AttemptFeed:
    """What an attempt says, as a pane shows it: each event as it comes, the clock and the counters
    a few times a second (`tick`: only in sight, or once at the end), the result at the end."""

    def __init__(self, attempt: Attempt, content: PaneContent) -> None:
        self.attempt = attempt
        self.content = content
        self.stats_dirty = True
        # Shown a few times a second, at most its last lines: a child flooding stderr must not cost
        # a repaint per line.
        self._stderr_unshown: deque[str] = deque(maxlen=STDERR_LINES)

    def take(self, event: AttemptEvent) -> bool:
        """Show `event`; True if the activity (tool calls, refusals) changed."""
        if isinstance(event, OutputDelta):
            self.content.answer.append(event.text)
        elif isinstance(event, Stopping):
            self.show_error(STOP_STEPS.get(event.step, event.step))
        elif isinstance(event, StderrLine):
            self._stderr_unshown.append(event.text)
        elif isinstance(event, SessionStarted):
            self.show_titles()
        elif isinstance(event, WorktreeReady | ChangeRecorded):
            self.show_worktree()
        elif isinstance(event, Finished):
            return True  # the pane shows the result (a toast, its keys)
        else:  # permissions, usage, tool calls, refusals, hidden updates: counted
            self.stats_dirty = True
        return isinstance(event, ToolCallChanged | NetworkRefused)

    def show_titles(self) -> None:
        attempt = self.attempt
        result = attempt.result
        info = attempt.agent_info or (result.agent if result is not None else None)
        where = attempt.preset.where
        agent = f"{attempt.agent} @ {where}" if where else attempt.agent
        if info is not None and info.version:
            title = text.line(f"{agent} · {info.title or info.name} {info.version}", 60)
        else:
            title = text.line(agent, 60 if where else 40)
        summary = options_summary(attempt)  # the session's, once it started
        options = f" · {summary}" if summary else ""
        sandbox = " · sandbox" if attempt.preset.sandbox == "workspace" else ""
        subtitle = text.markup(
            "$where · $policy$sandbox$options",
            where=attempt.label,
            policy=attempt.policy,
            sandbox=sandbox,
            options=options,
        )
        self.content.show_titles(title, subtitle)

    def show_state(self) -> bool:
        """The attempt's state on the badge and the border; True if it changed."""
        head, state = self.content.head, self.attempt.state
        if head.state == state:
            return False
        cancel = "pressed" if state == "cancelling" else "live" if self.attempt.live else ""
        self.content.show_head(replace(head, state=state, cancel=cancel))
        if state == "cancelling" and not self.content.parts["error"].lines:
            self.show_error("cancelling")
        return True

    def show_error(self, message: str | None, *, failed: bool = False, hint: str = "") -> None:
        """The message, cut to three lines; a `hint` (our own: what a key does) on a line of its own."""
        lines = [text.line(hint, 200, "not bold")] if hint else []
        if message:
            lines.append(text.line(message))
        style = "failed" if failed else "muted"
        self.content.show("error", Part(tuple(lines), style, wrap=True, limit=6 if hint else 3))

    def show_result(self, result: SubagentResult) -> None:
        self.content.answer.finish()
        note = ending_note(result, self.attempt.stop_step)
        message = " · ".join(part for part in (result.error, note) if part)
        login, refused = login_offer(self.attempt)
        failed = result.stop_reason is SubagentStopReason.ERROR
        # The command comes from the agent: named before the key runs it (whole in the confirm).
        hint = f"L: log in in the terminal, then run again: {shlex.join(login)}" if login else refused or ""
        if failed and not hint and result.stderr_tail:  # the error names one line; the rest is there
            lines = len(result.stderr_tail)
            hint = f"e: its stderr (the last {lines} lines)" if lines > 1 else "e: its stderr (one line)"
        self.show_error(message, failed=failed, hint=hint)
        self.show_worktree()
        self.stats_dirty = True
        self.tick(final=True)

    def show_history(self) -> None:
        """A finished attempt shown again (every turn of its conversation, each under its prompt):
        its answers, counts and stderr tail, nothing started."""
        result = self.attempt.result
        assert result is not None
        answer = self.content.answer
        turns = [self.attempt]
        while turns[0].previous is not None:
            turns.insert(0, turns[0].previous)
        for turn in turns:
            if turn is not turns[0]:
                answer.append(turn_header(turn))
            answer.append(turn.result.output if turn.result else "")
        self._stderr_unshown.extend(result.stderr_tail)
        self.show_result(result)

    def show_worktree(self) -> None:
        """Where the run works (and what it does not carry), then what it changed, and kept or not;
        under it, where the worktree is (a wide pane, the zoom)."""
        worktree = self.attempt.worktree
        if worktree is None:
            self.content.show("worktree", Part())
            return
        change, origin = worktree.change, worktree.origin
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
            words += " · worktree kept"
        elif worktree.removed:
            words += " · worktree removed"
        where = text.line(f"{worktree.path}: {origin.note}")  # the whole of it, paths too
        self.content.show("worktree", Part((text.line(words), where), wrap=True, limit=2))

    def tick(self, *, final: bool = False) -> None:
        """The clock, the counters and the stderr, a few times a second, not once per event; only
        while in sight (a pane out of sight is painted afresh when drawn), or `final`ly: at once
        (the pane's first paint, the run's end)."""
        content = self.content
        attempt = self.attempt
        head = content.head
        clock = self._clock()
        changed = clock != head.clock or bool(self._stderr_unshown) or self.stats_dirty
        changed = changed or (attempt.usage, attempt.last_usage) != (head.usage, head.gauge)
        # Most ticks change nothing (the clock shows whole seconds): whether the pane is in sight,
        # a walk up its ancestors, is asked only when something is to be shown.
        if not final and not (changed and content.viewer.in_sight()):
            return
        if self._stderr_unshown:
            content.add_stderr(list(self._stderr_unshown))
            self._stderr_unshown.clear()
        if self.stats_dirty:
            self.stats_dirty = False
            lines = (
                permissions_summary(attempt.permissions),
                never_asked_note(attempt.result),
                hidden_summary(attempt.hidden),
            )
            # Kinds, decisions and rule names come from the agent or the config: literal, one line each.
            content.show("stats", Part(tuple(Content(one_line(line)) for line in lines if line), limit=3))
            failed = failed_calls_summary(attempt.tool_calls)
            failed_part = Part((text.line(failed),), "failed", wrap=True, limit=2) if failed else Part()
            content.show("failed", failed_part)
        content.show_head(replace(head, usage=attempt.usage, gauge=attempt.last_usage, clock=clock))

    def _clock(self) -> str:
        """The time its run took, or takes so far (or how long its agent has been silent)."""
        attempt = self.attempt
        if attempt.result is not None:
            return format_seconds(attempt.result.duration_s)
        now = time.monotonic()
        since = now - (attempt.last_output_at or attempt.started_at)
        if since >= SILENT_AFTER:
            return f"silent {format_seconds(since, live=True)}"
        return format_seconds(now - attempt.started_at, live=True)


class RunPane(PaneView, can_focus=True):
    """A pane for one attempt of one agent preset."""

    BINDINGS = keys.bindings("pane")

    @dataclass
    class StateChanged(Message):
        pane: RunPane
        state: str

    def __init__(self, attempt: Attempt, driver: SessionDriver) -> None:
        super().__init__(classes="run-pane")
        self.attempt = attempt
        self.driver = driver
        self.ticking = False  # the screen's clock ticks it (`tick`) while its run goes on
        content = PaneContent(self, prompt=attempt.opening.prompt)
        content.head = Head(attempt.state, cancel="live" if attempt.live else "")
        self.feed = AttemptFeed(attempt, content)
        self.show_content(content)
        self.feed.show_titles()

    # What the screen and tests read -----------------------------------------------------------

    @property
    def agent(self) -> str:
        return self.attempt.agent

    @property
    def answer(self) -> AnswerDocument:
        return self.feed.content.answer

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "cancel":
            return self.attempt.live  # a finished run has nothing to cancel: the footer drops the key
        if action == "login":
            return login_offer(self.attempt)[0] is not None
        if action == "follow_up":
            return not self.attempt.live  # shown once the run has ended (and says so if it cannot be)
        return True

    def in_sight(self) -> bool:
        return super().in_sight() and self.grid.zoomed is None  # under the zoom, out of sight

    def on_mount(self) -> None:
        self.ticking = True
        self.show_state()  # it may have moved before the pane was on the grid
        if self.attempt.finished:
            self.feed.show_history()
            self._ended()
        else:
            self.feed.show_worktree()
            self.feed.tick(final=True)  # its first paint has its counters: not a row more a tick later
            self.follow()

    # Following the attempt --------------------------------------------------------------------

    @work(exclusive=True, group="run", exit_on_error=False)
    async def follow(self) -> None:
        """Render what the driver reports of the attempt, to its end."""
        async for event in self.attempt.events:
            if self.feed.take(event):
                self._activity_changed()
            if isinstance(event, Finished):
                self.feed.show_result(event.result)
                self._ended()
            self.show_state()

    def _ended(self) -> None:
        self.ticking = False  # nothing moves in a finished pane
        if self.has_focus:
            self.refresh_bindings()  # `L` may be on offer now
        result = self.attempt.result
        if result is not None and result.truncated:
            self.notify(
                f"{text.safe_notice(self.agent)}: the answer was cut at the output cap",
                severity="warning",
                markup=False,
            )

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """A failure in this pane stays in this pane: its run ends `error`, the reason shown."""
        if event.state is WorkerState.ERROR and self.attempt.live:
            error = event.worker.error
            message = f"the pane failed: {type(error).__name__}: {error}"
            self.feed.show_error(message, failed=True)
            self.run_worker(self._fail(message), exit_on_error=False)

    async def _fail(self, message: str) -> None:
        """End the run `error` and show its end here: the worker that would have shown it is gone."""
        await self.driver.fail(self.attempt, message)
        await self.driver.wait(self.attempt)
        self.show_state()
        self._ended()

    def show_state(self) -> None:
        """The attempt's state on the badge and the border (the driver moved it)."""
        if self.feed.show_state():
            if self.has_focus:
                self.refresh_bindings()
            self.post_message(self.StateChanged(self, self.attempt.state))

    def tick(self) -> None:
        """The screen's clock, a few times a second: one timer for every pane, not one each."""
        if self.ticking and self.is_attached:
            self.feed.tick()

    def continue_with(self, attempt: Attempt) -> None:
        """The next turn of this pane's conversation: shown under the previous ones, as it streams."""
        self.attempt = self.feed.attempt = attempt
        content = self.feed.content
        content.answer.go_on()
        content.answer.append(turn_header(attempt))
        content.pinned = True
        self.feed.show_error(None)
        self.feed.show_titles()
        self.feed.stats_dirty = True
        self.ticking = True
        self.show_state()
        self.follow()

    # Actions ---------------------------------------------------------------------------------

    @property
    def grid(self) -> Grid:
        return cast(Grid, self.screen)

    def action_cancel(self) -> None:
        """The run says `cancelling` at once; its disposal goes on in the background."""
        if self.attempt.live:
            self.driver.cancel_soon(self.attempt, "cancelled by the user", by_user=True)

    def action_login(self) -> None:
        argv, _ = login_offer(self.attempt)
        if argv:
            self.grid.confirm_login(self, argv)

    def action_follow_up(self) -> None:
        """`f`: follow up on this conversation, unless it cannot be continued (said on the pane)."""
        why = follow_up_refused(self.attempt)
        if why is not None:
            error = self.attempt.result.error if self.attempt.result else None
            self.feed.show_error(error, hint=f"no follow-up: {why}")
            return
        self.grid.follow_up_on(self)

    async def action_rerun(self) -> None:
        """A new attempt beside this one (the screen makes it): this one stays as it is."""
        await self.grid.rerun(self)

    async def action_close(self) -> None:
        """The pane leaves the grid (its attempt stays in the session: the board and the export)."""
        await self.grid.close_panes([self])

    def action_toggle_stderr(self) -> None:
        self.feed.content.toggle_stderr()
        self.feed.tick(final=True)

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
        self.feed.show_worktree()
        where = text.safe_notice(str(worktree.path))
        self.notify(
            f"Worktree kept: {where}" if worktree.kept else f"Worktree no longer kept: {where}", markup=False
        )

    def action_permissions(self) -> None:
        from acp_tui.ui.screens.permission_log_screen import PermissionLogScreen

        self.app.push_screen(PermissionLogScreen(self.agent, self.attempt.permissions))

    def action_trace(self) -> None:
        from acp_tui.ui.screens.trace_screen import TraceScreen

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
        answer = self.attempt.result.output if self.attempt.result else self.answer.text
        self.app.copy_to_clipboard(answer)
        self.notify(copied_words(len(answer)), timeout=8)
