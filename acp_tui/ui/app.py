"""The supervisor: a prompt bar, and one pane per attempt, side by side.

The app registers one core provider per agent preset, turns a submitted prompt into a round of
attempts (one pane each), keeps every attempt in its session (closing a pane hides it, the board
and the export still have it), and disposes every live run before it exits, however it is asked
to exit.

Keys never do what the user did not aim at: single-key commands belong to the panes, and the
prompt takes keys only while it has the focus (which it gives up after Enter). A permission
request of the `ask` policy never takes the focus: it is queued, and `a` opens the oldest.

Isolated rounds (the prompt bar's `worktree` box, `ctrl+g`, or a preset's `isolation = "worktree"`):
the app owns one `acp_tui.workspace.worktrees.Isolation`, made at the first such run (its start prunes what a
crash left); each run works in its own worktree, its pane records the change when the run ends, and
the worktree goes when the pane is closed and at quit, unless `k` kept it.

Confined rounds (the `sandbox` box, `ctrl+b`; per agent, F2 or a preset's `sandbox = "workspace"`):
each agent runs under bubblewrap; in a worktree, its provider is the worktree's own (what of the
repository it may write depends on it).
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import math
import os
import shlex
import signal
import sys
import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, cast

from textual import events, on
from textual.app import App, ComposeResult, SystemCommand
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.content import Content
from textual.driver import Driver
from textual.geometry import Size
from textual.notifications import SeverityLevel
from textual.screen import Screen
from textual.widgets import Header, Static

from acp_tui.core.model import SubagentRequest, SubagentRun
from acp_tui.core.registry import Subagents
from acp_tui.core.text import one_line, without_surrogates
from acp_tui.session.attempts import Attempt, Session
from acp_tui.ui import text
from acp_tui.ui.widgets.key_footer import KeyFooter
from acp_tui.ui.widgets.prompt_bar import PromptBar

if TYPE_CHECKING:
    from acp_tui.acp.config import SandboxMode
    from acp_tui.core.model import ConfigOptionInfo
    from acp_tui.policy.ask import PermissionAsk
    from acp_tui.settings.schema import AgentPreset, Settings
    from acp_tui.ui.screens.policy_screen import AgentsScreen
    from acp_tui.ui.widgets.run_pane import RunPane, RunStarter
    from acp_tui.workspace.worktrees import Isolation, Origin, Worktree

# What only the first round needs (panes, Markdown, the provider) is imported then, not before the
# first frame: a newcomer's first look should come as fast as Textual allows.

MIN_PANE_WIDTH = 38
MIN_PANE_HEIGHT = 10
TERMINATING_SIGNALS = (signal.SIGTERM, signal.SIGHUP)  # kill, or the terminal went away
TERMINAL_LOST_DEADLINE = 2.5  # seconds from a lost terminal to the end of the process, at most
STATE_ORDER = (
    "live",
    "needs-you",
    "cancelling",
    "completed",
    "max-tokens",
    "refusal",
    "cancelled",
    "aborted",
    "error",
)


# Runs a terminal login (argv, env, cwd) and gives its exit status: the app suspends itself for it;
# tests put a headless runner in its place (`SupervisorApp.login_runner`).
LoginRunner = Callable[[list[str], dict[str, str], str | None], Awaitable[int]]

EXPORT_NAME = "acp-tui-%Y%m%d-%H%M%S"  # strftime: one per second, `-2`, `-3`, ... after that

GRID_ACTIONS = {"focus_prompt", "focus_panes", "focus_nth", "next_pane", "previous_pane", "zoom"}


@dataclass(eq=False)
class PendingAsk:
    """A permission request waiting for the user; the ask handler awaits `answer`."""

    agent: str
    ask: PermissionAsk
    attempt: Attempt | None
    answer: asyncio.Future[str | None] = field(
        default_factory=lambda: asyncio.get_running_loop().create_future()
    )


def grid_shape(count: int, width: int) -> int:
    """Columns for `count` panes at `width` cells: up to three side by side, more in a square
    (four are 2 x 2, nine 3 x 3), never more than fit at the minimum width; rows balanced."""
    fit = max(1, width // MIN_PANE_WIDTH)
    wanted = count if count <= 3 else math.ceil(math.sqrt(count))
    columns = max(1, min(fit, wanted))
    rows = math.ceil(count / columns)
    return math.ceil(count / rows)


class SupervisorApp(App[None]):
    CSS_PATH = "app.tcss"
    TITLE = "acp-tui"
    BINDINGS = [
        Binding("ctrl+c", "quit", "Quit", priority=True),
        Binding("ctrl+q", "quit", "Quit", show=False, priority=True),
        Binding("ctrl+k", "cancel_all", "Stop all", priority=True),
        Binding("a", "answer_permission", "Answer"),
        Binding("b", "board", "Board"),
        Binding("question_mark", "help", "Help"),
        Binding("f2", "policies", "Agents", show=False, priority=True),
        Binding("ctrl+r", "reload_config", "Reload config", show=False, priority=True),
        Binding("P", "permissions_panel", "Permissions", show=False),
        Binding("ctrl+t", "toggle_tracing", "Tracing", show=False, priority=True),
        Binding("ctrl+s", "export", "Export", show=False, priority=True),
        Binding("ctrl+g", "toggle_worktree", "Worktrees", show=False, priority=True),
        Binding("ctrl+b", "toggle_sandbox", "Sandbox", show=False, priority=True),
        Binding("slash,i", "focus_prompt", "Prompt", show=False),
        Binding("escape", "focus_panes", "Panes", show=False),
        *(Binding(str(n), f"focus_nth({n})", show=False) for n in range(1, 10)),
    ]

    def __init__(self, settings: Settings) -> None:
        super().__init__()
        self.settings = settings
        self.subagents = Subagents()
        self.session = Session()
        self.policies = {preset.name: preset.policy for preset in settings.presets}
        self.trace_dir: str | None = None  # set: runs started from now on write protocol traces
        self.export_dir = Path.cwd()
        # A bell and a toast when a run errors or needs the user (`bell` / `toasts` in the config).
        self.bell_on = settings.bell
        self.toasts_on = settings.toasts
        self.asks: list[PendingAsk] = []  # permission requests waiting for the user, oldest first
        self.option_choices: dict[str, dict[str, str]] = {}  # F2's options per preset, for the next runs
        self.sandboxes: dict[str, SandboxMode] = {}  # F2's sandbox per preset, likewise
        self.offered: dict[str, tuple[ConfigOptionInfo, ...]] = {}  # per preset: last session's or a probe's
        self.login_runner: LoginRunner = self._login_in_terminal
        self._terminal_lent = False  # a login has the terminal
        self._generation = 0  # bumped by each reload: providers made before it are not reused
        self._last_pane: RunPane | None = None
        self.isolation: Isolation | None = None  # the worktrees of isolated runs, made at first use
        self._quitting = False
        self._terminal_gone = False

    @property
    def main_screen(self) -> Screen[object]:
        """The screen of the grid and the prompt, whatever is shown over it (the board, a dialog)."""
        return self.screen_stack[0]

    @property
    def rounds(self) -> int:
        return self.session.rounds

    def compose(self) -> ComposeResult:
        yield Header()
        yield PromptBar(self.policies, self.settings.prompt)
        with VerticalScroll(id="runs", can_focus=False):
            yield Static(self._welcome(), id="welcome")
        yield KeyFooter()

    def _welcome(self) -> Content:
        """What a newcomer sees first: who will answer, how, and the keys that matter."""
        presets = self.settings.presets
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
        source = f" from {self.settings.source}" if self.settings.source else ""
        return Content("\n").join(
            [
                Content.from_markup("[b]acp-tui[/] runs ACP agents side by side: each one's final answer."),
                text.markup("[dim]Agents$source (name, policy, command):[/]", source=source),
                *rows,
                Content(""),
                Content.from_markup(
                    "[b]Enter[/] sends the prompt to the checked agents, focus goes to their panes.\n"
                    "[b]c[/] cancels the focused run, [b]ctrl+k[/] all; [b]/[/] back to the prompt.\n"
                    "[b]b[/] the board of runs, [b]?[/] every key, [b]ctrl+c[/] quits (agents stop)."
                ),
            ]
        )

    async def on_mount(self) -> None:
        loop = asyncio.get_running_loop()
        for sig in TERMINATING_SIGNALS:
            loop.add_signal_handler(sig, self._on_terminate_signal, sig)
        from acp_tui.ui.terminal import SupervisorDriver

        if isinstance(self._driver, SupervisorDriver):
            self._driver.on_terminal_lost = self.terminal_lost
        self.main_screen.query_one(PromptBar).focus_prompt()
        self.run_worker(_preload_protocol_sdk, thread=True, group="preload")
        self._update_subtitle()

    def _on_terminate_signal(self, sig: signal.Signals) -> None:
        if sig == signal.SIGHUP:
            self.terminal_lost()
        else:
            self.run_worker(self.action_quit(), group="quit")

    def get_driver_class(self) -> type[Driver]:
        driver = super().get_driver_class()
        from textual.drivers.linux_driver import LinuxDriver

        if driver is LinuxDriver:
            from acp_tui.ui.terminal import SupervisorDriver

            return SupervisorDriver
        return driver

    def terminal_lost(self) -> None:
        """The terminal went away (SIGHUP, or EIO): dispose every run and exit, in 3 s at most.

        Nothing is written to the terminal again; a hard deadline ends the process whatever the
        shutdown does (the watchdog ends any agent left then).
        """
        from acp_tui.ui.terminal import SupervisorDriver, detach_from_terminal

        if self._terminal_gone:
            return
        self._terminal_gone = True
        driver = self._driver
        if isinstance(driver, SupervisorDriver):
            driver.terminal_lost()
        detach_from_terminal()
        asyncio.get_running_loop().call_later(TERMINAL_LOST_DEADLINE, _exit_now)
        self.run_worker(self.action_quit(), group="quit")

    # Rounds and panes ------------------------------------------------------------------------

    @on(PromptBar.Submitted)
    async def fan_out(self, event: PromptBar.Submitted) -> None:
        gone = [agent for agent in event.agents if agent not in self.settings.names]
        if gone:  # removed from the config file by a reload
            self.notify(f"No longer in the config: {text.safe_notice(', '.join(gone))}", markup=False)
            event.agents = [agent for agent in event.agents if agent not in gone]
            if not event.agents:
                return
        busy = [agent for agent in event.agents if self.session.live_for(agent)]
        if busy:
            from acp_tui.ui.screens.confirm_screen import ConfirmScreen

            question = text.markup(
                "$agents still answering an earlier round. Send them this prompt as well "
                "(another agent process each)?",
                agents=", ".join(busy) + (" is" if len(busy) == 1 else " are"),
            )

            def answered(yes: bool | None) -> None:
                if yes:
                    self.run_worker(
                        self._send_round(event.prompt, event.agents, event.worktree, event.sandbox)
                    )

            self.push_screen(ConfirmScreen(question, "Send anyway (y)", "Not now (n)"), answered)
            return
        await self._send_round(event.prompt, event.agents, event.worktree, event.sandbox)

    async def _send_round(
        self, prompt: str, agents: list[str], worktree: bool = False, sandbox: bool = False
    ) -> None:
        from acp_tui.ui.widgets.run_pane import RunPane

        presets = [self._next_preset(a) for a in agents]
        if sandbox:  # the prompt bar's box confines every agent of the round
            presets = [replace(preset, sandbox="workspace") for preset in presets]
        attempts = self.session.new_round(prompt, presets, self.policies, worktree=worktree)
        runs = self.main_screen.query_one("#runs", VerticalScroll)
        await runs.query("#welcome").remove()
        origins: dict[str, asyncio.Future[Origin]] = {}  # one look per checkout for the whole round
        panes = [RunPane(attempt, self._starter(attempt, origins)) for attempt in attempts]
        await runs.mount_all(panes)
        self._relayout()
        panes[0].focus(scroll_visible=False)
        self.call_after_refresh(runs.scroll_to_widget, panes[0], animate=False, top=True)
        self._update_subtitle()

    def _starter(
        self, attempt: Attempt, origins: dict[str, asyncio.Future[Origin]] | None = None
    ) -> RunStarter:
        async def start() -> SubagentRun:
            request = SubagentRequest(prompt=attempt.prompt)
            if attempt.isolated:
                request = replace(
                    request, cwd=await self._worktree_for(attempt, {} if origins is None else origins)
                )
            provider = await self._provider_for(attempt.preset, attempt.policy, attempt.worktree)
            attempt.spawned_at = time.monotonic()
            return await self.subagents.start(provider, request)

        return start

    # Isolation: each run of a worktree round in its own git worktree ----------------------------

    async def _worktree_for(self, attempt: Attempt, origins: dict[str, asyncio.Future[Origin]]) -> str:
        """A fresh worktree for the attempt; its cwd inside. No checkout: the one-line error (raised:
        the pane shows it, and the app's failure toast), and nothing is spawned."""
        from acp_tui.workspace.git import IsolationError
        from acp_tui.workspace.worktrees import Isolation, find_origin

        where = isolation_cwd(attempt.preset)
        if where not in origins:
            origins[where] = asyncio.ensure_future(find_origin(where))
        try:
            origin = await asyncio.shield(origins[where])
            if self.isolation is None:
                self.isolation = Isolation()  # `start()`, at the first add, prunes what a crash left
            attempt.worktree = await self.isolation.add(origin, attempt.agent)
        except IsolationError as exc:  # the toast: the app's failure toast, with the reason
            raise IsolationError(f"no worktree: {exc}") from None
        finally:
            while self.isolation is not None and self.isolation.left:  # what the cache sweep left alone
                self.notify(text.safe_notice(self.isolation.left.pop(0)), severity="warning", markup=False)
        return str(attempt.worktree.cwd)

    async def _drop_worktree(self, pane: RunPane) -> None:
        """A closed pane: its change recorded (if the run could not), its worktree removed unless kept."""
        worktree = pane.attempt.worktree
        if worktree is None or worktree.removed:
            return
        await pane.record_change()
        left = await worktree.remove()
        if left:
            self.notify(text.safe_notice(left), severity="error", markup=False, timeout=20)

    def action_toggle_sandbox(self) -> None:
        on = self.main_screen.query_one(PromptBar).toggle_sandbox()
        self.notify(
            "Next rounds: every agent confined to its directory or worktree by bubblewrap."
            if on
            else "Next rounds: each agent as its preset (or F2) says: sandbox or not."
        )

    def action_toggle_worktree(self) -> None:
        on = self.main_screen.query_one(PromptBar).toggle_worktree()
        self.notify(
            "Next rounds: each run in its own git worktree of HEAD (uncommitted changes are not carried)."
            if on
            else "Next rounds: runs work in their own directory (no worktree)."
        )

    def _round_pane(self) -> RunPane | None:
        """The pane `v` and `A` act on: the focused one, else the one last focused."""
        from acp_tui.ui.widgets.run_pane import RunPane

        focused = self.focused
        if isinstance(focused, RunPane):
            return focused
        return self._last_pane if self._last_pane in self._panes() else None

    def action_compare(self) -> None:
        """The round's compare view: its table, answers side by side, the chosen row's diff; `a` applies."""
        from acp_tui.ui.screens.compare_screen import CompareScreen

        pane = self._round_pane()
        if pane is None:
            self.notify("No round to compare yet.", severity="warning")
            return
        round_attempts = [a for a in self.session.attempts if a.round_no == pane.round_no]
        attempts = [a for a in round_attempts if a.finished]
        if not attempts:
            self.notify("No run of this round has finished yet.", severity="warning")
            return
        live = len(round_attempts) - len(attempts)
        title = f"Round {pane.round_no}: {pane.attempt.first_line}" + (
            f" ({live} still running, not shown)" if live else ""
        )
        focused = attempts.index(pane.attempt) if pane.attempt in attempts else 0

        def chosen(index: int | None) -> None:
            if index is not None:
                self._confirm_apply(attempts[index])

        self.push_screen(
            CompareScreen([self.session.record(a) for a in attempts], focused=focused, title=title), chosen
        )

    def action_apply_diff(self) -> None:
        pane = self._round_pane()
        if pane is None:
            self.notify("No run to apply.", severity="warning")
            return
        self._confirm_apply(pane.attempt)

    def _confirm_apply(self, attempt: Attempt) -> None:
        """Asks first, with the focus on Cancel: applying writes to the user's own checkout."""
        from acp_tui.ui.screens.compare_screen import ApplyConfirmScreen

        worktree = attempt.worktree
        change = worktree.change if worktree is not None else None
        if worktree is None or change is None or not change.diff or change.stat is None:
            self.notify("This run has no recorded change to apply.", severity="warning")
            return
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
                self.run_worker(self._apply(attempt), group="apply")

        self.push_screen(ApplyConfirmScreen(question, "Apply (y)", "Cancel (n)"), answered)

    async def _apply(self, attempt: Attempt) -> None:
        from acp_tui.workspace.apply import ApplyRefused, apply_diff
        from acp_tui.workspace.git import IsolationError

        worktree = attempt.worktree
        assert worktree is not None and worktree.change is not None and worktree.change.diff
        target = worktree.origin.toplevel
        try:
            paths = await apply_diff(worktree.change.diff, target, base=worktree.base)
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

    def _next_preset(self, agent: str) -> AgentPreset:
        """The preset as its next run gets it: the config file's, with the options and the sandbox
        chosen in F2."""
        from acp_tui.settings.schema import with_options

        preset = with_options(self.settings.preset(agent), self.option_choices.get(agent, {}))
        sandbox = self.sandboxes.get(agent, preset.sandbox)
        return preset if sandbox == preset.sandbox else replace(preset, sandbox=sandbox)

    async def _provider_for(self, preset: AgentPreset, policy: str, worktree: Worktree | None = None) -> str:
        """The seam's name for this preset with this policy, its options, sandbox, the tracing of
        now (and, sandboxed in a worktree, that worktree: what of its repository it may write).

        Settings that change get a provider of their own, so runs already going keep theirs.
        """
        from acp_tui.acp.provider import AcpSubagentProvider
        from acp_tui.session.fanout import confined_to

        agent = preset.name
        options = "".join(f" {key}={value}" for key, value in sorted(preset.options.items()))
        confined = preset.sandbox == "workspace"
        where = f" in {worktree.path}" if confined and worktree is not None else ""
        flags = f"{' traced' if self.trace_dir else ''}{' sandbox' if confined else ''}"
        name = f"{agent} [{policy}{flags}{options}]{where} #{self._generation}"
        if name not in self.subagents:
            config = self.settings.provider_config(
                preset,
                policy_override=policy,
                ask_handler=lambda ask: self.ask_permission(agent, ask),
                trace_dir=self.trace_dir,
            )
            if worktree is not None:
                config = confined_to(worktree, config)
            await self.subagents.register(name, AcpSubagentProvider(config))
        return name

    async def on_run_pane_rerun_requested(self, event: RunPane.RerunRequested) -> None:
        """A new attempt beside the old one: same prompt, the agent's policy and options of now."""
        await self._rerun(event.pane)

    async def _rerun(self, old: RunPane) -> None:
        from acp_tui.ui.widgets.run_pane import RunPane

        known = old.agent in self.settings.names  # else removed by a reload: as it was
        preset = self._next_preset(old.agent) if known else old.attempt.preset
        if old.attempt.preset.sandbox == "workspace":  # the same again: never unconfined by a re-run
            preset = replace(preset, sandbox="workspace")
        attempt = self.session.retry(old.attempt, self.policies.get(old.agent, old.policy), preset)
        pane = RunPane(attempt, self._starter(attempt))
        await self.main_screen.query_one("#runs", VerticalScroll).mount(pane, after=old)
        self._relayout()
        pane.focus()
        self._update_subtitle()

    def on_run_pane_options_offered(self, event: RunPane.OptionsOffered) -> None:
        self.offered[event.pane.agent] = event.offered

    def on_run_pane_login_requested(self, event: RunPane.LoginRequested) -> None:
        """`L` after "authentication required": the whole command line, confirmed (the focus on
        Cancel), then the login in the terminal, then the prompt again."""
        from acp_tui.ui.screens.login_screen import LoginConfirmScreen

        pane, argv = event.pane, event.argv

        def answered(yes: bool | None) -> None:
            if yes:
                self.run_worker(self._log_in(pane, argv), group="login")

        self.push_screen(LoginConfirmScreen(pane.agent, argv), answered)

    async def _log_in(self, pane: RunPane, argv: list[str]) -> None:
        from acp_tui.process.environment import child_environment

        preset = pane.attempt.preset
        try:
            status = await self.login_runner(argv, child_environment(preset.env), preset.cwd)
        except Exception as exc:  # e.g. no terminal to suspend for (SuspendNotSupported), no such program
            self.notify(f"Login not run: {text.safe_notice(str(exc) or type(exc).__name__)}", markup=False)
            return
        if status != 0:
            self.notify(f"The login ended with status {status}: not run again.", severity="warning")
            return
        await self._rerun(pane)

    async def _login_in_terminal(self, argv: list[str], env: dict[str, str], cwd: str | None) -> int:
        # ctrl+c in the login reaches us too (one process group): it must end the login, not the
        # app (asyncio's own SIGINT handler would cancel it). A handler, unlike SIG_IGN, is reset to
        # the default in the child at exec, so the login itself still stops on ctrl+c.
        previous = signal.signal(signal.SIGINT, lambda *_: None)
        try:
            # The login is awaited, so other runs go on streaming meanwhile; nothing is drawn (nor
            # rung) while the terminal is the login's.
            with self.batch_update(), self.suspend():
                self._terminal_lent = True
                # The command line came from the agent: shown with its control characters made visible.
                print(f"acp-tui: running the login: {one_line(display_command(argv))}", flush=True)
                try:
                    login = await asyncio.create_subprocess_exec(*argv, env=env, cwd=cwd)
                except OSError as exc:
                    print(f"acp-tui: the login could not start: {one_line(str(exc))}", flush=True)
                    return 127
                try:
                    return await login.wait()
                finally:
                    if login.returncode is None:  # we were cancelled (the app quits): no login left
                        with contextlib.suppress(ProcessLookupError):
                            login.kill()
        finally:
            self._terminal_lent = False
            signal.signal(signal.SIGINT, previous)

    def bell(self) -> None:
        if not self._terminal_lent:  # the login's terminal is not ours to ring
            super().bell()

    # Permission requests (the `ask` policy) ----------------------------------------------------

    async def ask_permission(self, agent: str, ask: PermissionAsk) -> str | None:
        """Queue the request; the pane says `needs you`, and `a` opens the oldest. If the run ends
        first (or the agent withdraws), the request leaves the queue unanswered."""
        from acp_tui.ui.widgets.run_pane import current_attempt

        attempt = current_attempt.get() or next(iter(self.session.live_for(agent)), None)
        pending = PendingAsk(agent, ask, attempt)
        self.asks.append(pending)
        self._asks_changed(pending.attempt)
        self._alert(
            f"{text.safe_notice(agent)} needs you: {text.safe_notice(ask.title)} (a to answer)", "warning"
        )
        try:
            return await pending.answer
        finally:
            self.asks.remove(pending)
            self._asks_changed(pending.attempt)
            screen = self.screen if self.screen_stack else None
            if getattr(screen, "pending", None) is pending:  # the run stopped while its question was open
                cast("Screen[object]", screen).dismiss(None)

    def _asks_changed(self, attempt: Attempt | None) -> None:
        pane = self.pane_for(attempt) if attempt else None
        if pane is not None:
            pane.waiting_asks(sum(p.attempt is attempt for p in self.asks))
        self._update_subtitle()
        if self.screen_stack:  # not while the app shuts down
            self.refresh_bindings()

    def action_answer_permission(self) -> None:
        from acp_tui.ui.screens.permission_screen import LATER, PermissionScreen

        if not self.asks:
            self.notify("No permission request is waiting.")
            return
        pending = self.asks[0]
        screen = PermissionScreen(pending.agent, pending.ask, position=1, waiting=len(self.asks))
        screen.pending = pending

        def answered(option_id: str | None) -> None:
            if option_id != LATER and not pending.answer.done():
                pending.answer.set_result(option_id)

        self.push_screen(screen, answered)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "answer_permission":
            return bool(self.asks)
        if action in GRID_ACTIONS or action == "permissions_panel":
            return self.screen is self.main_screen  # a key never acts on a screen that is not shown
        return True

    # Following the runs ------------------------------------------------------------------------

    def on_run_pane_state_changed(self, event: RunPane.StateChanged) -> None:
        if event.state == "error":
            result = event.pane.result
            reason = f": {result.error}" if result is not None and result.error else ""
            self._alert(text.safe_notice(f"{event.pane.agent} failed{reason}"), "error")
        self._update_subtitle()

    def _alert(self, message: str, severity: SeverityLevel) -> None:
        """A run errors or needs the user: the bell and a toast, each unless switched off."""
        if self.bell_on:
            self.bell()
        if self.toasts_on:
            self.notify(message, severity=severity, markup=False)

    def on_run_pane_run_finished(self) -> None:
        self._update_subtitle()

    def on_resize(self, event: events.Resize) -> None:
        # The event's size: the app's own is set after this handler runs (a resize behind).
        self._relayout(event.size)

    def _panes(self) -> list[RunPane]:
        # Only the grid's own children: a query of the whole DOM walks every answer's blocks.
        # None at all while the app shuts down: a run may still report its end then.
        if not self.screen_stack:
            return []
        runs = self.main_screen.query("#runs")
        if not runs:
            return []
        return cast("list[RunPane]", list(runs.first().query_children(".run-pane")))

    def pane_for(self, attempt: Attempt) -> RunPane | None:
        return next((pane for pane in self._panes() if pane.attempt is attempt), None)

    def _relayout(self, size: Size | None = None) -> None:
        """Columns from the terminal's width of now (not the grid's: it is a resize behind); rows
        fill the height, else scroll."""
        runs = self.main_screen.query_one("#runs", VerticalScroll)
        count = len(self._panes())
        if not count:
            runs.styles.grid_size_columns = 1
            return
        size = size or self.size
        width = size.width - 2  # the grid's padding
        height = max(MIN_PANE_HEIGHT, size.height - 7)  # header, prompt bar, footer
        columns = grid_shape(count, width)
        rows = math.ceil(count / columns)
        runs.styles.grid_size_columns = columns
        runs.styles.grid_rows = str(max(MIN_PANE_HEIGHT, height // rows))

    def _update_subtitle(self) -> None:
        counts: dict[str, int] = {}
        from acp_tui.ui.widgets.run_pane import state_of
        from acp_tui.ui.widgets.status_badge import colour_key

        for attempt in self.session.attempts:
            key = colour_key(state_of(attempt))
            counts[key] = counts.get(key, 0) + 1
        parts = [
            f"{counts[key]} {key.replace('-', ' ')}" + (" (a)" if key == "needs-you" else "")
            for key in STATE_ORDER
            if counts.get(key)
        ]
        self.sub_title = " · ".join(parts) if parts else "no run yet"

    # Focus -------------------------------------------------------------------------------------

    def on_descendant_focus(self, event: object) -> None:
        from acp_tui.ui.widgets.run_pane import RunPane

        focused = self.focused
        if isinstance(focused, RunPane):
            self._last_pane = focused

    def action_focus_prompt(self) -> None:
        self.main_screen.query_one(PromptBar).focus_prompt()

    def action_focus_panes(self) -> None:
        """From the prompt to the pane last focused, else the first of the newest round."""
        panes = self._panes()
        if not panes:
            return
        if self._last_pane in panes:
            self._last_pane.focus()
        else:
            newest = max(p.round_no for p in panes)
            next(p for p in panes if p.round_no == newest).focus()

    def _step_pane(self, step: int) -> None:
        panes = self._panes()
        if not panes:
            return
        focused = self.focused
        index = panes.index(focused) if focused in panes else (-1 if step > 0 else 0)
        panes[(index + step) % len(panes)].focus()

    def action_next_pane(self) -> None:
        self._step_pane(+1)

    def action_previous_pane(self) -> None:
        self._step_pane(-1)

    def action_focus_nth(self, n: int) -> None:
        panes = self._panes()
        if not panes:
            return
        newest = max(p.round_no for p in panes)
        round_panes = [p for p in panes if p.round_no == newest]
        if n <= len(round_panes):
            round_panes[n - 1].focus()

    def action_zoom(self) -> None:
        from acp_tui.ui.widgets.run_pane import RunPane

        screen = self.screen
        if screen.maximized is not None:
            zoomed = screen.maximized
            screen.minimize()
            if isinstance(zoomed, RunPane):
                zoomed.zoomed(False)
            return
        focused = self.focused
        if isinstance(focused, RunPane):
            screen.maximize(focused, container=False)
            focused.zoomed(True)

    # Actions ---------------------------------------------------------------------------------

    async def action_cancel_all(self) -> None:
        await asyncio.gather(*(pane.action_cancel() for pane in self._panes()))

    def action_board(self) -> None:
        from acp_tui.ui.screens.board_screen import BoardScreen

        self.push_screen(BoardScreen(self.session), self._jump_to)

    def _jump_to(self, attempt: Attempt | None) -> None:
        if attempt is None:
            return
        pane = self.pane_for(attempt)
        if pane is None:
            self.run_worker(self._reopen(attempt))
        else:
            pane.focus()

    async def _reopen(self, attempt: Attempt) -> None:
        """A closed pane comes back, showing its attempt as it ended."""
        from acp_tui.ui.widgets.run_pane import RunPane

        runs = self.main_screen.query_one("#runs", VerticalScroll)
        await runs.query("#welcome").remove()
        attempt.open = True
        pane = RunPane(attempt, None)
        await runs.mount(pane)
        self._relayout()
        pane.focus()

    async def on_run_pane_closed(self, event: RunPane.Closed) -> None:
        """The pane leaves the grid (its attempt stays in the session); the welcome returns when
        none is left, and the focus goes to a neighbour."""
        panes = self._panes()
        index = panes.index(event.pane) if event.pane in panes else 0
        await event.pane.remove()
        await self._drop_worktree(event.pane)
        panes = self._panes()
        self._relayout()
        self._update_subtitle()
        if panes:
            panes[min(index, len(panes) - 1)].focus()
        else:
            await self.main_screen.query_one("#runs", VerticalScroll).mount(
                Static(self._welcome(), id="welcome")
            )
            self.action_focus_prompt()

    def action_permissions_panel(self) -> None:
        """Every permission request of the session, and what another policy would decide."""
        from acp_tui.policy.names import BUILTIN_POLICIES
        from acp_tui.ui.screens.permissions_panel_screen import PanelRow, PermissionsPanelScreen

        rows = [
            PanelRow(a.agent, f"{a.round_no}/{a.attempt_no}", a.policy, record, a.cwd, record.waited_s)
            for a in self.session.attempts
            for record in (a.result.permissions if a.result else a.permissions)
        ]
        policies = {
            name: BUILTIN_POLICIES[name] if name in BUILTIN_POLICIES else self.settings.policies[name]
            for name in self.settings.policy_names
            if name in BUILTIN_POLICIES or name in self.settings.policies
        }
        self.push_screen(PermissionsPanelScreen(rows, policies))

    def action_help(self) -> None:
        from acp_tui.ui.screens.help_screen import HelpScreen

        self.push_screen(HelpScreen())

    def action_policies(self) -> None:
        """F2, the agents: each preset's policy and options (mode, model, ...) for the next runs."""
        from acp_tui.ui.screens.policy_screen import AgentsChoice

        def apply(chosen: AgentsChoice | None) -> None:
            if chosen:
                self.policies.update(chosen.policies)
                self.option_choices.update(chosen.options)
                self.sandboxes.update(chosen.sandboxes)
                self.main_screen.query_one(PromptBar).show_policies(self.policies)

        self.push_screen(self._agents_screen(), apply)

    def _agents_screen(self) -> AgentsScreen:
        from acp_tui.ui.screens.policy_screen import AgentRow, AgentsScreen

        rows = [
            AgentRow(
                name,
                self.policies.get(name, self.settings.preset(name).policy),
                dict(self._next_preset(name).options),
                self.offered.get(name, ()),
                self._next_preset(name).sandbox,
            )
            for name in self.settings.names
        ]
        rules = {name: policy.describe() for name, policy in self.settings.policies.items()}
        return AgentsScreen(rows, self.settings.policy_names, rules, self.probe_agent)

    async def probe_agent(self, agent: str) -> tuple[tuple[ConfigOptionInfo, ...], str | None]:
        """`acp-tui probe` on a preset: the options it offers (kept for F2), or the error."""
        from acp_tui.acp.probe import describe_agent
        from acp_tui.ui.screens.policy_screen import offered_of

        if agent not in self.settings.names:
            return (), "no longer in the config"
        config = self.settings.provider_config(self._next_preset(agent), policy_override="reject")
        record, _created = await describe_agent(config)
        offered = offered_of(record)
        if offered:
            self.offered[agent] = offered
        error = record.get("error")
        return offered, error if isinstance(error, str) else None

    def action_reload_config(self) -> None:
        """ctrl+r: the config file again, for the next runs. A bad file changes nothing."""
        from acp_tui.settings.schema import ConfigError, load_settings

        old = self.settings
        if old.source is None:
            self.notify("No config file to reload: these are the demo agents.", severity="warning")
            return
        try:
            new = load_settings(old.source)
        except ConfigError as exc:
            self.notify(f"Config not reloaded: {text.safe_notice(str(exc))}", severity="error", markup=False)
            return
        # Agents given on the command line (`--agent NAME=COMMAND`) are not in the file: they stay.
        given = tuple(p for p in old.presets if p.name in old.selected and p.name not in new.names)
        new = replace(new, presets=(*new.presets, *given), selected=old.selected)
        # A policy picked in F2 stays; one the file gave follows the file.
        policies = {}
        for preset in new.presets:
            before = self.policies.get(preset.name)
            was_file = preset.name not in old.names or before == old.preset(preset.name).policy
            keep = before is not None and not was_file and before in new.policy_names
            policies[preset.name] = before if keep and before else preset.policy
        self.settings = new
        self.policies.clear()
        self.policies.update(policies)
        self.option_choices = {k: v for k, v in self.option_choices.items() if k in new.names}
        self.sandboxes = {k: v for k, v in self.sandboxes.items() if k in new.names}
        # What an agent offers is its program's: forgotten where the command changed.
        self.offered = {
            k: v
            for k, v in self.offered.items()
            if k in new.names and new.preset(k).argv == old.preset(k).argv
        }
        self._generation += 1
        self.bell_on, self.toasts_on = new.bell, new.toasts
        self.run_worker(self._settings_reloaded(old))

    async def _settings_reloaded(self, old: Settings) -> None:
        if self.settings.names != old.names:
            await self._rebuild_prompt_bar()
        else:
            self.main_screen.query_one(PromptBar).show_policies(self.policies)
        if not self._panes():
            welcome = self.main_screen.query("#welcome")
            if welcome:
                welcome.first(Static).update(self._welcome())
        from acp_tui.ui.screens.policy_screen import AgentsScreen

        if isinstance(self.screen, AgentsScreen):  # reloaded from F2: show the new file there
            self.screen.dismiss(None)
            self.action_policies()
        self.notify(
            f"Config reloaded from {text.safe_notice(str(self.settings.source))}: "
            f"{len(self.settings.presets)} agents, {len(self.settings.policies)} named policies "
            "(for the next runs)",
            markup=False,
        )

    async def _rebuild_prompt_bar(self) -> None:
        """Agents were added or removed: a prompt bar with the new ones, the prompt text kept."""
        bar = self.main_screen.query_one(PromptBar)
        typed = bar.value
        focused = bar.area.has_focus
        new = PromptBar(self.policies, self.settings.prompt)
        await self.main_screen.mount(new, after=bar)
        if bar.sandbox:  # never unconfined by a reload
            new.toggle_sandbox()
        await bar.remove()
        new.area.text = typed
        if focused:
            new.focus_prompt()

    def action_toggle_tracing(self) -> None:
        if self.trace_dir:
            self.trace_dir = None
            self.notify("Protocol traces off for new runs.")
        else:
            self.trace_dir = str(trace_directory())
            self.notify(
                f"New runs write protocol traces to {text.safe_notice(self.trace_dir)} (t shows a pane's).",
                markup=False,
            )

    def action_export(self) -> None:
        """Every finished attempt of the session (closed panes too), as Markdown for people and
        JSON lines for programs. Any string is written, a lone surrogate included."""
        from acp_tui.core.files import create_unique
        from acp_tui.reports.markdown import markdown
        from acp_tui.reports.records import json_line

        records = self.session.records()
        live = sum(not a.finished for a in self.session.attempts)
        if not records:
            self.notify("Nothing to export yet: no run has finished.", severity="warning")
            return
        try:
            reports = {
                ".md": without_surrogates(markdown(records)),
                ".jsonl": "".join(json_line(record) + "\n" for record in records),
                "-compare.md": without_surrogates(comparison_report(records)),
            }
            # Three new files under one free name (`-2`, `-3`, ... when taken): never an existing
            # file, never through a link planted at the name of this second.
            stem, files = create_unique(self.export_dir, time.strftime(EXPORT_NAME), reports)
            with contextlib.ExitStack() as closing:
                for file in files.values():
                    closing.enter_context(file)
                for suffix, file in files.items():
                    file.write(reports[suffix])
        except (OSError, ValueError) as exc:
            self.notify(f"Export failed: {text.safe_notice(str(exc))}", severity="error", markup=False)
            return
        more = f" ({live} still running, not in it)" if live else ""
        self.notify(
            f"Exported {len(records)} runs to {text.safe_notice(str(stem))}.md, .jsonl and -compare.md{more}",
            markup=False,
        )

    def get_system_commands(self, screen: Screen[object]) -> Iterable[SystemCommand]:
        """The app's own commands first in the palette (ctrl+p), then Textual's."""
        yield SystemCommand("Cancel all", "Cancel every live run (ctrl+k)", self.action_cancel_all)
        yield SystemCommand("Board", "Every run of the session (b)", self.action_board)
        yield SystemCommand(
            "Answer permission", "The oldest waiting request (a)", self.action_answer_permission
        )
        yield SystemCommand("Export", "The session as Markdown and JSON lines (ctrl+s)", self.action_export)
        yield SystemCommand(
            "Agents", "Policy, mode and model of each agent for the next runs (f2)", self.action_policies
        )
        yield SystemCommand(
            "Reload config", "The config file again, for the next runs (ctrl+r)", self.action_reload_config
        )
        yield SystemCommand(
            "Tracing", "Protocol traces on or off for the next runs (ctrl+t)", self.action_toggle_tracing
        )
        yield SystemCommand(
            "Worktrees",
            "Each run of the next rounds in its own git worktree, on or off (ctrl+g)",
            self.action_toggle_worktree,
        )
        yield SystemCommand(
            "Sandbox",
            "Every agent of the next rounds confined by bubblewrap, on or off (ctrl+b)",
            self.action_toggle_sandbox,
        )
        yield SystemCommand(
            "Compare round", "The focused pane's round side by side: answers, diffs (v)", self.action_compare
        )
        yield SystemCommand(
            "Apply diff",
            "The focused run's change to the main checkout, after a confirm (A)",
            self.action_apply_diff,
        )
        yield SystemCommand("Zoom", "The focused pane on the whole screen, and back (z)", self.action_zoom)
        yield SystemCommand(
            "Permissions of the session",
            "Every request of every run, and what another policy would decide (P)",
            self.action_permissions_panel,
        )
        yield SystemCommand("Help", "Every key (?)", self.action_help)
        yield SystemCommand("Prompt", "Back to the prompt (/)", self.action_focus_prompt)
        yield from super().get_system_commands(screen)

    async def action_quit(self) -> None:
        """Every live run is disposed (its process group gone) before the app exits."""
        if self._quitting:
            return
        self._quitting = True
        live = sum(not a.finished for a in self.session.attempts)
        if live:
            self.notify(f"Stopping {live} agent{'s' if live > 1 else ''}…", timeout=10)
        await self.subagents.aclose()
        await self._close_worktrees()
        self.exit()

    async def _close_worktrees(self) -> None:
        """Every worktree not kept is removed (no recording: nothing would read it after quit)."""
        if self.isolation is not None:
            for line in await self.isolation.aclose():  # quitting: the log is what remains to tell
                logging.getLogger(__name__).warning("%s", line)

    async def on_unmount(self) -> None:
        # Reached on any exit, including an error in the app: no child may outlive us.
        loop = asyncio.get_running_loop()
        for sig in TERMINATING_SIGNALS:
            loop.remove_signal_handler(sig)
        await self.subagents.aclose()
        await self._close_worktrees()


def comparison_report(records: list[dict[str, object]]) -> str:
    """The comparison report (`acp_tui.reports.compare`), one per round of the session."""
    from acp_tui.reports.compare import comparison_markdown

    rounds: dict[object, list[dict[str, object]]] = {}
    for record in records:
        rounds.setdefault(record.get("round"), []).append(record)
    return "\n".join(
        comparison_markdown(runs, title=f"acp-tui comparison, round {number}")
        for number, runs in rounds.items()
    )


def isolation_cwd(preset: AgentPreset) -> str:
    """The checkout an isolated run comes from: its preset's cwd, else ours (as `acp-tui run --worktree`;
    the demo's scratch dir only kept writes out of the checkout, which a worktree does)."""
    return os.path.abspath((None if preset.create_cwd else preset.cwd) or os.getcwd())


def display_command(argv: list[str]) -> str:
    """The command as a person would type it: our own interpreter's long path reads `python`."""
    return shlex.join(["python" if arg == sys.executable else arg for arg in argv])


def trace_directory() -> Path:
    import platformdirs

    return platformdirs.user_state_path("acp-tui", appauthor=False) / "traces"


def _exit_now() -> None:
    os._exit(129)  # 128 + SIGHUP: the shell's convention for a process ended by it


def _preload_protocol_sdk() -> None:
    """Import what the first round needs off the UI thread, so that it does not freeze the screen;
    then set the start-up heap aside.

    The SDK's schema models and Textual's classes are most of the heap and live as long as the app:
    frozen, they are skipped by the garbage collector's full passes, which otherwise stalled the
    screen for up to 0.2 s while 16 panes streamed (0.06 s frozen).
    """
    from acp_tui.acp.sdk import import_acp

    import_acp()
    import acp_tui.acp.client
    import acp_tui.ui.widgets.run_pane  # noqa: F401

    gc.freeze()


def make_app(settings: Settings) -> SupervisorApp:
    return SupervisorApp(settings)
