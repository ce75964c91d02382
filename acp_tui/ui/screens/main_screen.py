"""The main screen: the prompt bar, and the rounds as a grid of panes, one per attempt.

A submitted prompt becomes a round of attempts (one pane each) that the app's driver runs; closing
a pane takes it off the grid (its attempt stays in the session: the board and the export still have
it). Keys never do what the person did not aim at: single-key commands belong to the panes, and the
prompt takes keys only while it has the focus (which it gives up after Enter).
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Literal, Protocol, cast

from textual.app import App, ComposeResult
from textual.timer import Timer
from textual.widgets import Header

from acp_tui import compat
from acp_tui.core.text import one_line
from acp_tui.session.attempts import Attempt
from acp_tui.ui import text
from acp_tui.ui.screens.grid_screen import GridScreen
from acp_tui.ui.screens.round_diffs import RoundDiffs
from acp_tui.ui.welcome import welcome
from acp_tui.ui.widgets.key_footer import KeyFooter
from acp_tui.ui.widgets.prompt_bar import PromptBar, Submission
from acp_tui.ui.widgets.runs_grid import RunsGrid

if TYPE_CHECKING:
    from acp_tui.session.attempts import Session
    from acp_tui.session.driver import SessionDriver
    from acp_tui.settings.schema import AgentPreset, Settings
    from acp_tui.ui.login import Login
    from acp_tui.ui.next_runs import NextRuns
    from acp_tui.ui.widgets.run_pane import RunPane

# What only the first round needs (panes, Markdown) is imported then, not before the first frame.

BOARD = "board"  # the board's installed screen
# What the prompt bar's boxes make of the next rounds: said when one is turned on, and off.
TOGGLED = {
    "sandbox": (
        "Next rounds: every agent confined to its directory or worktree by bubblewrap.",
        "Next rounds: each agent as its preset (or F2) says: sandbox or not.",
    ),
    "worktree": (
        "Next rounds: each run in its own git worktree of HEAD (uncommitted changes are not carried).",
        "Next rounds: runs work in their own directory (no worktree).",
    ),
}
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
    next_runs: NextRuns

    def want_spares(self) -> None: ...

    login: Login


class MainScreen(GridScreen):
    def __init__(self) -> None:
        super().__init__()
        self.diffs = RoundDiffs(self, lambda: self.supervisor.session)
        self.ticker: Timer | None = None
        self._header: Header | None = None

    def on_mount(self) -> None:
        # The panes' clocks and counters, a few times a second: one timer for all of them.
        self.ticker = self.set_interval(0.2, self.runs.tick)

    @property
    def supervisor(self) -> Shell:
        return cast("Shell", self.app)

    def contents(self) -> ComposeResult:
        """The screen's widgets (the app composes them: see `SupervisorApp.compose`)."""
        app = self.supervisor
        self._header = Header()
        yield self._header
        # `--agent NAME` checks exactly the presets it named; no `--agent`, every one.
        # On a terminal, the first frame draws the prompt's stand-in (its text box comes after).
        yield PromptBar(
            app.next_runs.policies,
            app.settings.prompt,
            app.settings.selected or None,
            stand_in=not self.app.is_headless,
        )
        yield RunsGrid(welcome(app.settings))
        yield KeyFooter()

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
        presets = [app.next_runs.preset(agent) for agent in agents]
        if sandbox:  # the prompt bar's box confines every agent of the round
            presets = [replace(preset, sandbox="workspace") for preset in presets]
        attempts = app.session.new_round(prompt, presets, app.next_runs.policies, worktree=worktree)
        panes = await self.show(attempts)
        app.want_spares()  # the next round's spares, for those just taken
        self.set_focus(panes[0], scroll_visible=False)
        box = self.runs.box(attempts[0].round_no)
        if box is not None:  # the new round from its header down
            self.call_after_refresh(self.runs.scroll_to_widget, box, animate=False, top=True)

    async def show(self, attempts: list[Attempt], *, after: RunPane | None = None) -> list[RunPane]:
        """Panes for `attempts` on the grid, their runs started (unless already ended)."""
        from acp_tui.ui.widgets.run_pane import RunPane

        app = self.supervisor
        for attempt in attempts:
            if not attempt.driven and attempt.live:
                app.driver.start(attempt)
        await self.add_zoom()
        panes = [RunPane(attempt, app.driver) for attempt in attempts]
        first_lines = {a.round_no: a.first_line for a in reversed(app.session.attempts)}
        await self.runs.add(panes, first_lines, after=after)
        self.update_subtitle()
        return panes

    async def rerun(self, old: RunPane) -> None:
        """A new attempt beside the old one: same prompt, the agent's policy and options of now."""
        app = self.supervisor
        known = old.agent in app.settings.names  # else removed by a reload: as it was
        preset = app.next_runs.preset(old.agent) if known else old.attempt.preset
        if old.attempt.preset.sandbox == "workspace":  # the same again: never unconfined by a re-run
            preset = replace(preset, sandbox="workspace")
        attempt = app.session.retry(
            old.attempt, app.next_runs.policies.get(old.agent, old.attempt.policy), preset
        )
        [pane] = await self.show([attempt], after=old)
        self.set_focus(pane)

    def follow_up_on(self, pane: RunPane) -> None:
        """`f`: the prompt, in follow-up mode for the pane's conversation, has the focus."""
        self.query_one(PromptBar).enter_follow_up(pane.attempt)
        self.supervisor.want_spares()

    def confirm_login(self, pane: RunPane, argv: list[str]) -> None:
        self.supervisor.login.confirm(pane, argv)

    def follow_up_preset(self, previous: Attempt) -> tuple[AgentPreset, str]:
        """The preset and policy a follow-up on `previous` runs with: the agent's of now (F2's
        choices too), confined if `previous` was."""
        app = self.supervisor
        known = previous.agent in app.settings.names  # else removed by a reload: as it was
        preset = app.next_runs.preset(previous.agent) if known else previous.preset
        if previous.preset.sandbox == "workspace":  # never unconfined by a follow-up
            preset = replace(preset, sandbox="workspace")
        return preset, app.next_runs.policies.get(previous.agent, previous.policy)

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
        await self.runs.remove_panes(closing)
        panes = self.panes()
        self.update_subtitle()
        if panes:
            self.set_focus(panes[min(index, len(panes) - 1)])
        else:
            self.action_focus_prompt()
        for pane in closing:
            self.run_worker(self._dispose(pane.attempt), group="close", exit_on_error=False)

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

    def action_leave_follow_up(self) -> None:
        """Escape in the prompt, in follow-up mode: the next prompt goes to the checked agents again."""
        self.query_one(PromptBar).leave_follow_up()
        self.supervisor.want_spares()  # the follow-up's spare is no longer wanted

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
        if self._header is not None and self._header.is_mounted:
            compat.show_sub_title(self._header)

    # The round's commands -----------------------------------------------------------------------

    def action_focus_prompt(self) -> None:
        self.query_one(PromptBar).focus_prompt()

    def action_compare(self) -> None:
        self.diffs.compare()

    def action_apply_diff(self) -> None:
        self.diffs.apply()

    def next_round(self) -> list[tuple[AgentPreset, bool]]:
        """The presets the next round goes to (the checked agents, as F2 and the boxes make them),
        each with whether it runs in a worktree."""
        app, bar = self.supervisor, self.query_one(PromptBar)
        names = set(app.settings.names)
        presets = [app.next_runs.preset(agent) for agent in bar.selected() if agent in names]
        if bar.sandbox:
            presets = [replace(preset, sandbox="workspace") for preset in presets]
        return [(preset, bar.worktree or preset.isolation == "worktree") for preset in presets]

    def on_toggle_changed(self) -> None:
        self.supervisor.want_spares()  # an agent checked or unchecked, a box turned on or off

    def action_toggle_box(self, name: Literal["sandbox", "worktree"]) -> None:
        """The prompt bar's box `name` turned on or off, and what that makes of the next rounds said."""
        on, off = TOGGLED[name]
        self.notify(on if self.query_one(PromptBar).toggle(name) else off)

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
