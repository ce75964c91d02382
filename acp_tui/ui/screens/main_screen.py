"""The main screen: the prompt bar, and the rounds as a grid of panes, one per attempt.

A submitted prompt becomes a round of attempts (one pane each) that the app's driver runs; closing
a pane takes it off the grid (its attempt stays in the session: the board and the export still have
it). Keys never do what the person did not aim at: single-key commands belong to the panes, and the
prompt takes keys only while it has the focus (which it gives up after Enter).
"""

from __future__ import annotations

import shlex
import sys
from dataclasses import replace
from typing import TYPE_CHECKING, Protocol, cast

from textual import events
from textual.app import App, ComposeResult
from textual.containers import VerticalScroll
from textual.content import Content
from textual.css.query import NoMatches
from textual.geometry import Size
from textual.reactive import Reactive
from textual.screen import Screen
from textual.timer import Timer
from textual.widget import Widget
from textual.widgets import Header, Static

from acp_tui import compat
from acp_tui.core.text import one_line
from acp_tui.session.attempts import Attempt
from acp_tui.ui import keys, text
from acp_tui.ui.widgets.key_footer import KeyFooter
from acp_tui.ui.widgets.prompt_bar import PromptBar, Submission
from acp_tui.ui.widgets.round_box import MIN_PANE_HEIGHT, RoundBox

if TYPE_CHECKING:
    from acp_tui.session.attempts import Session
    from acp_tui.session.driver import SessionDriver
    from acp_tui.settings.schema import AgentPreset, Settings
    from acp_tui.ui.widgets.run_pane import RunPane
    from acp_tui.workspace.worktrees import Worktree

# What only the first round needs (panes, Markdown) is imported then, not before the first frame.

BOARD = "board"  # the board's installed screen
INTRO_WIDTH = 74  # the first screen's lines of keys fit 80 columns
MAX_WARM_FOLLOW_UPS = 4  # follow-up spares at most: each is an agent's process, idle until taken
STATE_ORDER = (
    "live",
    "needs-you",
    "cancelling",
    "completed",
    "max-tokens",
    "refusal",
    "cancelled",
    "error",
)


class Shell(Protocol):
    """What the screen needs of the app that shows it (`ui.app.SupervisorApp`), said here: the
    screen never imports the app, which imports it."""

    settings: Settings
    session: Session
    driver: SessionDriver
    policies: dict[str, str]

    def next_preset(self, agent: str) -> AgentPreset: ...

    def want_spares(self) -> None: ...

    def confirm_login(self, pane: RunPane, argv: list[str]) -> None: ...


def display_command(argv: list[str]) -> str:
    """The command as a person would type it: our own interpreter's long path reads `python`."""
    return shlex.join(["python" if arg == sys.executable else arg for arg in argv])


def intro_lines(width: int = INTRO_WIDTH) -> list[Content]:
    """The keys that act from the prompt (the first screen's focus), as few lines as fit `width`."""
    lines: list[list[tuple[str, str]]] = [[]]
    used = 0
    for key, what in keys.intro():
        size = len(key) + 1 + len(what) + (3 if lines[-1] else 0)
        if lines[-1] and used + size > width:
            lines.append([])
            size, used = size - 3, 0
        lines[-1].append((key, what))
        used += size
    return [
        Content(" · ").join(Content.assemble((key, "bold"), " ", what) for key, what in line)
        for line in lines
    ]


class MainScreen(Screen[object]):
    BINDINGS = keys.bindings("grid")
    # Textual repaints the whole screen when the focus moves (the reactive's default): the two
    # widgets whose focus changed repaint themselves, and sixteen panes repainted cost 100-150 ms.
    focused: Reactive[Widget | None] = Reactive(None, repaint=False)

    def __init__(self) -> None:
        super().__init__()
        self._last_pane: RunPane | None = None
        self._comparing: list[Attempt] = []  # the runs of the compare view open, in its order
        self.ticker: Timer | None = None

    def on_mount(self) -> None:
        # The panes' clocks and counters, a few times a second: one timer for all of them.
        self.ticker = self.set_interval(0.2, self._tick_panes)

    def _tick_panes(self) -> None:
        for pane in self.panes():
            pane.tick()

    @property
    def supervisor(self) -> Shell:
        return cast("Shell", self.app)

    def contents(self) -> ComposeResult:
        """The screen's widgets (the app composes them: see `SupervisorApp.compose`)."""
        app = self.supervisor
        yield Header()
        # `--agent NAME` checks exactly the presets it named; no `--agent`, every one.
        yield PromptBar(app.policies, app.settings.prompt, app.settings.selected or None)
        with VerticalScroll(id="runs", can_focus=False):
            yield Static(self.welcome(), id="welcome")
        yield KeyFooter()

    def welcome(self) -> Content:
        """What a newcomer sees first: who will answer, how, and the keys that matter."""
        settings = self.supervisor.settings
        presets = settings.presets
        names = [text.line(p.name, 24).plain for p in presets]
        policies = [text.line(p.policy, 16).plain for p in presets]
        name_width = max(map(len, names), default=0)
        policy_width = max(map(len, policies), default=0)
        rows = [
            Content.assemble(
                "  ",
                (name.ljust(name_width), "bold"),
                "  ",
                (policy.ljust(policy_width), "dim"),
                "  ",
                text.line(display_command(preset.argv)).plain,
            )
            for name, policy, preset in zip(names, policies, presets, strict=True)
        ]
        source = f" from {settings.source}" if settings.source else ""
        return Content("\n").join(
            [
                Content.from_markup("[b]acp-tui[/] runs ACP agents side by side: each one's final answer."),
                text.markup("[dim]Agents$source (name, policy, command):[/]", source=source),
                *rows,
                Content(""),
                *intro_lines(),
            ]
        )

    # Rounds and panes ------------------------------------------------------------------------

    async def action_send_prompt(self) -> None:
        """Enter in the prompt: the round goes out and the focus moves to its first pane before
        this returns (so the key typed next acts there)."""
        submission = self.query_one(PromptBar).submission()
        if submission is not None:
            await self.fan_out(submission)

    async def fan_out(self, submission: Submission) -> None:
        app = self.supervisor
        if submission.follow_up is not None:
            await self.follow_up(submission.follow_up, submission.prompt)
            return
        gone = [agent for agent in submission.agents if agent not in app.settings.names]
        if gone:  # removed from the config file by a reload
            self.notify(f"No longer in the config: {text.safe_notice(', '.join(gone))}", markup=False)
            submission.agents = [agent for agent in submission.agents if agent not in gone]
            if not submission.agents:
                return
        busy = [agent for agent in submission.agents if app.session.live_for(agent)]
        if busy:
            from acp_tui.ui.screens.confirm_screen import ConfirmScreen

            question = text.markup(
                "$agents still answering an earlier round. Send them this prompt as well "
                "(another agent process each)?",
                agents=", ".join(busy) + (" is" if len(busy) == 1 else " are"),
            )

            async def answered(yes: bool | None) -> None:
                if yes:
                    await self.send_round(
                        submission.prompt, submission.agents, submission.worktree, submission.sandbox
                    )

            # Pushed by the app, which then sends the round before it routes the key typed after `y`.
            confirm = ConfirmScreen(question, "Send anyway (y)", "Not now (n)")
            self.app.call_later(self.app.push_screen, confirm, answered)
            return
        await self.send_round(submission.prompt, submission.agents, submission.worktree, submission.sandbox)

    async def send_round(
        self, prompt: str, agents: list[str], worktree: bool = False, sandbox: bool = False
    ) -> None:
        app = self.supervisor
        presets = [app.next_preset(agent) for agent in agents]
        if sandbox:  # the prompt bar's box confines every agent of the round
            presets = [replace(preset, sandbox="workspace") for preset in presets]
        attempts = app.session.new_round(prompt, presets, app.policies, worktree=worktree)
        panes = await self.show(attempts)
        app.want_spares()  # the next round's spares, for those just taken
        self.set_focus(panes[0], scroll_visible=False)
        box = self._box(attempts[0].round_no)
        if box is not None:  # the new round from its header down
            self.call_after_refresh(self.runs.scroll_to_widget, box, animate=False, top=True)

    async def show(self, attempts: list[Attempt], *, after: RunPane | None = None) -> list[RunPane]:
        """Panes for `attempts` on the grid, their runs started (unless already ended)."""
        from acp_tui.ui.widgets.run_pane import RunPane

        driver = self.supervisor.driver
        for attempt in attempts:
            if not attempt.driven and attempt.live:
                driver.start(attempt)
        await self.runs.query("#welcome").remove()
        panes = [RunPane(attempt, driver) for attempt in attempts]
        for round_no in dict.fromkeys(attempt.round_no for attempt in attempts):
            box = await self._round_box(round_no)
            these = [pane for pane in panes if pane.round_no == round_no]
            if after is not None and after.parent is box.grid:
                await box.grid.mount_all(these, after=after)
            else:
                await box.grid.mount_all(these)
        self.relayout()
        self.update_subtitle()
        return panes

    @property
    def runs(self) -> VerticalScroll:
        return self.get_child_by_id("runs", VerticalScroll)  # a child: no walk of every pane's widgets

    def boxes(self) -> list[RoundBox]:
        try:
            runs = self.runs
        except NoMatches:  # not composed yet
            return []
        return list(runs.query_children(RoundBox))

    def _box(self, round_no: int) -> RoundBox | None:
        return next((box for box in self.boxes() if box.round_no == round_no), None)

    async def _round_box(self, round_no: int) -> RoundBox:
        """The round's box on the grid, made (in round order) if it is not there."""
        box = self._box(round_no)
        if box is not None:
            return box
        first_line = next(a.first_line for a in self.supervisor.session.attempts if a.round_no == round_no)
        box = RoundBox(round_no, first_line)
        later = next((other for other in self.boxes() if other.round_no > round_no), None)
        await self.runs.mount(box, before=later)
        return box

    async def rerun(self, old: RunPane) -> None:
        """A new attempt beside the old one: same prompt, the agent's policy and options of now."""
        app = self.supervisor
        known = old.agent in app.settings.names  # else removed by a reload: as it was
        preset = app.next_preset(old.agent) if known else old.attempt.preset
        if old.attempt.preset.sandbox == "workspace":  # the same again: never unconfined by a re-run
            preset = replace(preset, sandbox="workspace")
        attempt = app.session.retry(old.attempt, app.policies.get(old.agent, old.policy), preset)
        [pane] = await self.show([attempt], after=old)
        self.set_focus(pane)

    def follow_up_on(self, pane: RunPane) -> None:
        """`f`: the prompt, in follow-up mode for the pane's conversation, has the focus."""
        self.query_one(PromptBar).enter_follow_up(pane.attempt)
        self.supervisor.want_spares()

    def confirm_login(self, pane: RunPane, argv: list[str]) -> None:
        self.supervisor.confirm_login(pane, argv)

    def follow_up_preset(self, previous: Attempt) -> tuple[AgentPreset, str]:
        """The preset and policy a follow-up on `previous` runs with: the agent's of now (F2's
        choices too), confined if `previous` was."""
        app = self.supervisor
        known = previous.agent in app.settings.names  # else removed by a reload: as it was
        preset = app.next_preset(previous.agent) if known else previous.preset
        if previous.preset.sandbox == "workspace":  # never unconfined by a follow-up
            preset = replace(preset, sandbox="workspace")
        return preset, app.policies.get(previous.agent, previous.policy)

    async def follow_up(self, previous: Attempt, prompt: str) -> None:
        """The next turn of `previous`'s conversation, in its pane (reopened if it was closed)."""
        app = self.supervisor
        preset, policy = self.follow_up_preset(previous)
        attempt = app.session.follow_up(previous, prompt, policy, preset)
        pane = self.pane_for(previous)
        if pane is None:
            [pane] = await self.show([previous])
        app.driver.start(attempt)
        pane.continue_with(attempt)
        self.set_focus(pane)
        self.update_subtitle()

    def on_run_pane_state_changed(self, event: RunPane.StateChanged) -> None:
        self.update_subtitle()

    async def close_panes(self, closing: list[RunPane]) -> None:
        """The panes leave the grid (their attempts stay in the session); the welcome returns when
        none is left, and the focus goes to a neighbour. Their runs are stopped and their worktrees
        go (recorded first), unless kept: in the background, however long that takes."""
        panes = self.panes()
        index = min((panes.index(pane) for pane in closing if pane in panes), default=0)
        for pane in closing:
            pane.attempt.open = False
            await pane.remove()
        for box in self.boxes():
            if not box.panes():  # a round with no pane left goes, header and all
                await box.remove()
        panes = self.panes()
        self.relayout()
        self.update_subtitle()
        if panes:
            self.set_focus(panes[min(index, len(panes) - 1)])
        else:
            await self.runs.mount(Static(self.welcome(), id="welcome"))
            self.action_focus_prompt()
        for pane in closing:
            self.run_worker(self._dispose(pane.attempt), group="close")

    async def _dispose(self, attempt: Attempt) -> None:
        left = await self.supervisor.driver.close(attempt)
        if left:
            self.notify(text.safe_notice(left), severity="error", markup=False, timeout=20)

    async def action_close_finished(self) -> None:
        """`X`: every finished pane leaves the grid (their runs stay in the board and the export)."""
        finished = [pane for pane in self.panes() if pane.attempt.finished]
        if not finished:
            self.notify("No finished pane to close.")
            return
        await self.close_panes(finished)
        plural = "" if len(finished) == 1 else "s"
        self.notify(f"Closed {len(finished)} finished pane{plural} (b: the board has them).")

    def panes(self) -> list[RunPane]:
        """Every pane on the grid, in reading order: round by round."""
        return [pane for box in self.boxes() for pane in box.panes()]

    def action_leave_follow_up(self) -> None:
        """Escape in the prompt, in follow-up mode: the next prompt goes to the checked agents again."""
        self.query_one(PromptBar).leave_follow_up()
        self.supervisor.want_spares()  # the follow-up's spare is no longer wanted

    def follow_ups_in_view(self) -> list[Attempt]:
        """The turns a follow-up may continue next: the follow-up mode's, then the latest turn of
        each pane in sight (the zoomed one alone while zoomed) that ended and can be continued,
        the focused pane's first; `MAX_WARM_FOLLOW_UPS` at most."""
        from acp_tui.ui.widgets.run_pane import RunPane

        previous = self.query_one(PromptBar).follow_up
        found = [previous] if previous is not None else []
        panes = [self.maximized] if isinstance(self.maximized, RunPane) else self.panes()
        view = self.runs.region
        in_sight = [pane for pane in panes if pane.region.overlaps(view)]
        in_sight.sort(key=lambda pane: not pane.has_focus)
        for pane in in_sight:
            turn = pane.attempt
            if turn not in found and turn.cannot_follow_up(asking_the_agent=True) is None:
                found.append(turn)
        return found[:MAX_WARM_FOLLOW_UPS]

    def pane_for(self, attempt: Attempt) -> RunPane | None:
        """The pane of `attempt`'s conversation: one pane shows every turn of it."""
        opening = attempt.opening
        return next((pane for pane in self.panes() if pane.attempt.opening is opening), None)

    def on_resize(self, event: events.Resize) -> None:
        self.relayout(event.size)

    def relayout(self, size: Size | None = None) -> None:
        """Each round's columns from the screen's width of now; its rows fill the height below the
        prompt bar, else the grid scrolls."""
        size = size or self.app.size
        bar = self.query_one(PromptBar).outer_size.height or 5
        width = size.width - 2  # the grid's padding
        height = max(MIN_PANE_HEIGHT, size.height - 2 - bar)  # header, prompt bar, footer
        for box in self.boxes():
            box.fit(width, height)

    def update_subtitle(self) -> None:
        from acp_tui.ui.widgets.status_badge import colour_key

        counts: dict[str, int] = {}
        for attempt in self.supervisor.session.attempts:
            key = colour_key(attempt.state)
            counts[key] = counts.get(key, 0) + 1
        asks = len(self.supervisor.driver.asks)
        parts = []
        for key in STATE_ORDER:
            if key == "needs-you":  # the requests waiting, not the runs with one: the dialog's count
                if asks:
                    parts.append(f"{asks} request{'s need' if asks != 1 else ' needs'} you (a)")
            elif counts.get(key):
                parts.append(f"{counts[key]} {key.replace('-', ' ')}")
        spent = self.supervisor.session.costs()
        if spent:  # per currency, never added across them
            from acp_tui.ui.summary import format_amount

            parts.append(
                "spent " + ", ".join(f"{format_amount(n)} {one_line(c, 5)}" for c, n in spent.items())
            )
        sub_title = " · ".join(parts) if parts else "no run yet"
        if sub_title == self.app.sub_title:
            return
        # Set without the reactive's repaint of the whole screen (100-150 ms with sixteen panes):
        # the header's line is all that changes, and it is updated here.
        self.app.set_reactive(App.sub_title, sub_title)
        header = self.query(Header)
        if header:
            compat.show_sub_title(header.first())

    # Focus -------------------------------------------------------------------------------------

    def on_descendant_focus(self, event: object) -> None:
        from acp_tui.ui.widgets.run_pane import RunPane

        focused = self.focused
        if self.maximized is not None and focused is not self.maximized:
            # The zoom follows the focus from pane to pane; anything else (the prompt) ends it.
            self.maximized = focused if isinstance(focused, RunPane) else None
        if isinstance(focused, RunPane):
            self._last_pane = focused
            # In sight once laid out, however it got the focus (a new round, tab, a digit, the board).
            self.call_after_refresh(self._into_view, focused)

    def _into_view(self, pane: RunPane) -> None:
        if pane.is_attached and pane.has_focus and self.maximized is None:
            self.runs.scroll_to_widget(pane, animate=False)

    def watch_maximized(self, old: Widget | None, new: Widget | None) -> None:
        """However the zoom changes (z, escape, the focus moving on), the panes show it."""
        from acp_tui.ui.widgets.run_pane import RunPane

        if isinstance(old, RunPane):
            old.zoomed(False)
        if isinstance(new, RunPane):
            new.zoomed(True)
        self.refresh_bindings()  # the footer's `z Unzoom`

    def action_focus_prompt(self) -> None:
        self.query_one(PromptBar).focus_prompt()

    def action_focus_panes(self) -> None:
        """From the prompt to the pane last focused, else the first of the newest round."""
        panes = self.panes()
        if not panes:
            return
        if self._last_pane in panes:
            self.set_focus(self._last_pane)
        else:
            newest = max(p.round_no for p in panes)
            self.set_focus(next(p for p in panes if p.round_no == newest))

    def _step_pane(self, step: int) -> None:
        panes = self.panes()
        if not panes:
            return
        focused = self.focused
        index = panes.index(focused) if focused in panes else (-1 if step > 0 else 0)
        self.set_focus(panes[(index + step) % len(panes)])

    def action_next_pane(self) -> None:
        self._step_pane(+1)

    def action_previous_pane(self) -> None:
        self._step_pane(-1)

    def action_focus_nth(self, n: int) -> None:
        panes = self.panes()
        if not panes:
            return
        newest = max(p.round_no for p in panes)
        round_panes = [p for p in panes if p.round_no == newest]
        if n <= len(round_panes):
            self.set_focus(round_panes[n - 1])

    def action_zoom(self) -> None:
        """`z`: the focused pane over the whole screen, and back (escape too)."""
        focused = self.focused
        if self.maximized is not None:
            self.minimize()
        elif focused in self.panes():
            self.maximize(focused, container=False)

    def action_unzoom(self) -> None:
        self.minimize()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "unzoom":  # the focused pane's key while zoomed, and then only
            return self.maximized is not None
        return True

    # The round's commands -----------------------------------------------------------------------

    def _round_pane(self) -> RunPane | None:
        """The pane `v` and `A` act on: the focused one, else the one last focused."""
        from acp_tui.ui.widgets.run_pane import RunPane

        if isinstance(self.focused, RunPane):
            return self.focused
        return self._last_pane if self._last_pane in self.panes() else None

    def next_round(self) -> list[tuple[AgentPreset, bool]]:
        """The presets the next round goes to (the checked agents, as F2 and the boxes make them),
        each with whether it runs in a worktree."""
        app, bar = self.supervisor, self.query_one(PromptBar)
        presets = [app.next_preset(agent) for agent in bar.selected() if agent in app.settings.names]
        if bar.sandbox:
            presets = [replace(preset, sandbox="workspace") for preset in presets]
        return [(preset, bar.worktree or preset.isolation == "worktree") for preset in presets]

    def on_checkbox_changed(self) -> None:
        self.supervisor.want_spares()  # an agent checked or unchecked, a box turned on or off

    def action_toggle_sandbox(self) -> None:
        on = self.query_one(PromptBar).toggle_sandbox()
        self.notify(
            "Next rounds: every agent confined to its directory or worktree by bubblewrap."
            if on
            else "Next rounds: each agent as its preset (or F2) says: sandbox or not."
        )

    def action_toggle_worktree(self) -> None:
        on = self.query_one(PromptBar).toggle_worktree()
        self.notify(
            "Next rounds: each run in its own git worktree of HEAD (uncommitted changes are not carried)."
            if on
            else "Next rounds: runs work in their own directory (no worktree)."
        )

    def action_compare(self) -> None:
        """The round's compare view: its table, answers side by side, the chosen row's diff; `a`
        applies. It follows the round: a run that ends joins it."""
        from acp_tui.ui.screens.compare_screen import CompareScreen

        pane = self._round_pane()
        if pane is None:
            self.notify("No round to compare yet.", severity="warning")
            return
        attempts, title = self._compared(pane.round_no)
        if not attempts:
            self.notify("No run of this round has finished yet.", severity="warning")
            return
        self._comparing = attempts
        focused = attempts.index(pane.attempt) if pane.attempt in attempts else 0

        def chosen(index: int | None) -> None:
            if index is not None:
                self._confirm_apply(self._comparing[index])

        records = [attempt.record() for attempt in attempts]
        screen = CompareScreen(records, focused=focused, title=title, round_no=pane.round_no)
        self.app.push_screen(screen, chosen)

    def _compared(self, round_no: int) -> tuple[list[Attempt], str]:
        """The round's finished attempts, and the compare view's title for them."""
        round_attempts = [a for a in self.supervisor.session.attempts if a.round_no == round_no]
        attempts = [a for a in round_attempts if a.finished]
        live = len(round_attempts) - len(attempts)
        first_line = round_attempts[0].first_line if round_attempts else ""
        title = f"Round {round_no}: {first_line}" + (
            f" ({live} still running: each joins as it ends)" if live else ""
        )
        return attempts, title

    async def follow_compare(self, attempt: Attempt) -> None:
        """The compare view of the attempt's round, if it is open, takes the attempt in (it ended)."""
        from acp_tui.ui.screens.compare_screen import CompareScreen

        screen = self.app.screen
        if not isinstance(screen, CompareScreen) or screen.round_no != attempt.round_no:
            return
        attempts, title = self._compared(attempt.round_no)
        if attempts == self._comparing:
            return
        chosen = self._comparing[screen.chosen] if screen.chosen < len(self._comparing) else None
        self._comparing = attempts
        index = attempts.index(chosen) if chosen in attempts else 0
        await screen.follow([a.record() for a in attempts], title, chosen=index)

    def action_apply_diff(self) -> None:
        pane = self._round_pane()
        if pane is None:
            self.notify("No run to apply.", severity="warning")
            return
        self._confirm_apply(pane.attempt)

    def _confirm_apply(self, attempt: Attempt) -> None:
        """Asks first, with the focus on Cancel: applying writes to the user's own checkout."""
        from acp_tui.ui.screens.compare_screen import ApplyConfirmScreen

        worktree, change = attempt.worktree, attempt.change  # this turn's change, not a later one's
        if worktree is None or change is None or not change.diff or change.stat is None:
            self.notify("This run has no recorded change to apply.", severity="warning")
            return
        diff = change.diff
        if change.truncated:
            self.notify("This run's diff was cut at the size limit: it cannot be applied.", severity="error")
            return
        question = text.markup(
            "Apply the change of [b]$agent[/] ($label: $stat) to the checkout $target (git apply --3way)?",
            agent=attempt.agent,
            label=attempt.label,
            stat=str(change.stat),
            target=str(worktree.origin.toplevel),
        )

        def answered(yes: bool | None) -> None:
            if yes:
                self.run_worker(self._apply(attempt, worktree, diff), group="apply")

        self.app.push_screen(ApplyConfirmScreen(question, "Apply (y)", "Cancel (n)"), answered)

    async def _apply(self, attempt: Attempt, worktree: Worktree, diff: str) -> None:
        """The change the person confirmed, whatever ran since."""
        from acp_tui.workspace.apply import ApplyRefused, apply_diff
        from acp_tui.workspace.git import IsolationError

        target = worktree.origin.toplevel
        try:
            paths = await apply_diff(diff, target, base=worktree.base)
        except (ApplyRefused, IsolationError) as exc:  # a refusal's message lists the conflicts
            self.notify(
                f"Not applied: {text.safe_notice(str(exc))}", severity="error", markup=False, timeout=20
            )
            return
        self.notify(
            text.safe_notice(
                f"Applied {attempt.agent} ({attempt.label}) to {target}: {len(paths)} "
                f"file{'' if len(paths) == 1 else 's'} ({', '.join(paths)})"
            ),
            markup=False,
            timeout=10,
        )

    def action_board(self) -> None:
        """The board: one screen made once, its rows filled anew at each opening (not composed again:
        a new screen is a stylesheet pass over every widget of it)."""
        from acp_tui.ui.screens.board_screen import BoardScreen

        if not self.app.is_screen_installed(BOARD):
            self.app.install_screen(BoardScreen(self.supervisor.session), BOARD)
        self.app.push_screen(BOARD, self._jump_to)

    async def _jump_to(self, attempt: Attempt | None) -> None:
        """The board's Enter (the app runs this before it routes the next key): the run's pane has
        the focus, reopened if it was closed."""
        if attempt is None:
            return
        pane = self.pane_for(attempt)
        if pane is None:  # the conversation's pane again, from its newest turn (`f` goes on from there)
            await self._reopen(self.supervisor.session.latest_turn(attempt))
        else:
            self.set_focus(pane)

    async def _reopen(self, attempt: Attempt) -> None:
        """A closed pane comes back in its round, showing its attempt as it ended (or as it goes on)."""
        attempt.open = True
        [pane] = await self.show([attempt])
        self.set_focus(pane)

    def action_permissions_panel(self) -> None:
        """Every permission request of the session, and what another policy would decide."""
        from acp_tui.ui.screens.permissions_panel_screen import PanelRow, PermissionsPanelScreen

        app = self.supervisor
        rows = [
            PanelRow(a.agent, f"{a.round_no}/{a.attempt_no}", a.policy, record, a.cwd, record.waited_s)
            for a in app.session.attempts
            for record in a.permissions
        ]
        from acp_tui.policy.names import ASK, resolve

        named = app.settings.policies
        policies = {name: resolve(name, named) for name in app.settings.policy_names if name != ASK}
        self.app.push_screen(PermissionsPanelScreen(rows, policies))
