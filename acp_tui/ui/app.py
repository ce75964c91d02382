"""The supervisor app: what is app-wide, and nothing of the grid (that is the main screen's).

The app holds the settings, the session and the driver that runs its attempts, and the parts that
each do one of its jobs: the choices for the next runs (`ui.next_runs`: F2's policies, options and
sandbox; tracing), F2 where they are made (`ui.agents_dialog`), the session kept as it goes
(`ui.kept_session`), the queue of what waits for a person (`ui.waiting`), calling them
(`ui.calls`), logins (`ui.login`), reloading the config (`ui.config_reload`). Its own are the rest:
the spares, the exports, and the ways out: quit, signals, the terminal going away. Every way out
disposes every live run first.

A permission request of the `ask` policy, or an agent's question, never takes the focus: it is
queued, the pane says `needs you`, the terminal is called (`ui.calls`), and `a` opens the
oldest. A run that ends while the person is elsewhere calls them too.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import gc
import logging
import os
import signal
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from textual import actions, events
from textual.app import App, ComposeResult, SystemCommand
from textual.driver import Driver as TextualDriver
from textual.screen import Screen
from textual.worker import Worker, WorkerState

from acp_tui import compat
from acp_tui.core.text import without_surrogates
from acp_tui.session.attempts import Attempt, Session
from acp_tui.session.driver import SessionDriver, confined_to
from acp_tui.settings import paths
from acp_tui.settings.schema import ConfigError
from acp_tui.ui import keys, text
from acp_tui.ui.agents_dialog import AgentsDialog
from acp_tui.ui.calls import Calls
from acp_tui.ui.collector import Collector
from acp_tui.ui.config_reload import ConfigReload
from acp_tui.ui.kept_session import KeptSession
from acp_tui.ui.key_order import KeyOrder
from acp_tui.ui.login import Login
from acp_tui.ui.next_runs import NextRuns
from acp_tui.ui.screens.main_screen import MainScreen
from acp_tui.ui.waiting import Waiting
from acp_tui.ui.widgets.prompt_bar import PromptBar

if TYPE_CHECKING:
    from acp_tui.reports.records import RunRecord
    from acp_tui.session.asks import PendingAsk
    from acp_tui.session.saved import SavedSession, SessionStore
    from acp_tui.settings.schema import Settings

TERMINATING_SIGNALS = (signal.SIGTERM, signal.SIGHUP)  # kill, or the terminal went away
TERMINAL_LOST_DEADLINE = 2.5  # seconds from a lost terminal to the end of the process, at most

# The app's own tasks, whose failure is a toast (a pane's own worker says so in the pane).
FAILS_IN_A_TOAST = frozenset({"reopen", "compare", "close", "apply", "login", "reload"})
EXPORT_NAME = "acp-tui-%Y%m%d-%H%M%S"  # strftime: one per second, `-2`, `-3`, ... after that


class SupervisorApp(App[None]):
    CSS_PATH = "app.tcss"
    TITLE = "acp-tui"
    BINDINGS = keys.bindings("app")

    def __init__(
        self,
        settings: Settings,
        *,
        store: SessionStore | Callable[[], SessionStore] | None = None,
        reopened: tuple[SavedSession, list[dict[str, Any]]] | None = None,
        after_first_frame: Callable[[], object] | None = None,
    ) -> None:
        """`after_first_frame`: what the start-up leaves until the first frame is painted (the
        log's routing: `ui.launch`)."""
        super().__init__()
        self._after_first_frame = after_first_frame
        self.settings = settings
        self.session = Session()
        self.driver = SessionDriver(lambda attempt: self.next_runs.config_for(attempt.preset, attempt.policy))
        self.driver.on_change = self._attempt_changed
        # The session kept as it goes (`acp-tui --session ID` reopens it): made at its first end.
        self.kept = KeptSession(self, self.session, store, reopened)
        # Choices for the next runs: F2's policy, options and sandbox per preset, tracing.
        self.next_runs = NextRuns(lambda: self.settings, self.driver.asks)
        self._spares_deferred = False  # spares wanted wait for the runs starting (`want_spares`)
        # ctrl+s writes here: the config's `export_dir`, else a folder of ours, never the user's checkout.
        self.export_dir = settings.export_dir or paths.exports_dir()
        # The bell, desktop notifications and toasts when a run errors, ends or needs the user.
        self.calls = Calls(self, settings, lambda: self.main_screen, lambda: self.login.terminal_lent)
        self.waiting = Waiting(self, self.driver.asks, self.calls)
        self.login = Login(self, lambda pane: self.main_screen.rerun(pane))
        self.agents = AgentsDialog(
            self, self.next_runs, self.session, lambda: self.main_screen, self.want_spares
        )
        self.config_reload = ConfigReload(self, self.next_runs, lambda: self.main_screen, self.agents.open)
        self._quitting = False
        self._terminal_gone = False
        self.key_order = KeyOrder(self, super().on_event)
        self.collector = Collector(self, self.key_order)

    async def on_event(self, event: events.Event) -> None:
        if isinstance(event, events.Key | events.Paste):
            if not self.screen_stack:  # the app is ending: a key left in flight has nowhere to go
                return
            if not event.is_forwarded:  # from the terminal: after the keys before it have done their work
                await self.key_order.typed(event)
                self.collector.key_typed()
                return
        await super().on_event(event)

    @property
    def main_screen(self) -> MainScreen:
        """The screen of the grid and the prompt, whatever is shown over it (the board, a dialog)."""
        return cast(MainScreen, self.screen_stack[0])

    def get_default_screen(self) -> MainScreen:
        return MainScreen()

    def compose(self) -> ComposeResult:
        # The main screen's widgets come from the app's compose, which start-up awaits: keys typed
        # at once already find the prompt.
        yield from self.main_screen.contents()

    @property
    def asks(self) -> list[PendingAsk]:
        """Permission requests waiting for a person, oldest first."""
        return self.driver.asks.pending

    async def on_mount(self) -> None:
        loop = asyncio.get_running_loop()
        for sig in TERMINATING_SIGNALS:
            loop.add_signal_handler(sig, self._on_terminate_signal, sig)
        from acp_tui.ui.terminal import SupervisorDriver

        driver = compat.app_driver(self)
        if isinstance(driver, SupervisorDriver):
            driver.on_terminal_lost = self.terminal_lost
        bar = self.main_screen.query_one(PromptBar)
        bar.commands = self.next_runs.commands
        bar.focus_prompt()
        if bar.stand_in is not None:  # keys typed before the text box wait for it (`on_ready`)
            self.key_order.hold()
        self.main_screen.update_subtitle()
        if self.kept.saved is not None:  # a session reopened (a new one is made at its first end)
            self.run_worker(
                self.kept.reopen(self.settings, self.driver, self.main_screen),
                group="reopen",
                exit_on_error=False,
            )

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """A task of the app's that failed (a reopen, a compare, a close, an apply, a login, a
        reload) says so in a toast: never the app's end."""
        worker = event.worker
        if event.state is WorkerState.ERROR and worker.group in FAILS_IN_A_TOAST:
            said = text.safe_notice(f"{type(worker.error).__name__}: {worker.error}")
            self.notify(f"{worker.group.capitalize()} failed: {said}", severity="error", markup=False)

    async def on_ready(self) -> None:
        """The first frame is painted: only now what the first round needs, while the person reads:
        the spares first (their agents' start is the longest wait, and the policies and the runs'
        vocabulary they need load on this thread before the SDK's import competes with it), then
        the prompt's text box (the keys typed meanwhile go to it, in order), the SDK and the panes.
        Before it, none of it may compete with the first paint: nothing of the SDK nor pydantic is
        imported until here (a test checks it)."""
        if self._after_first_frame is not None:
            self._after_first_frame()
        self.want_spares()
        bar = self.main_screen.query_one(PromptBar)
        if bar.stand_in is not None:
            await bar.make_prompt()
            await self.key_order.release()
        self.run_worker(_preload_protocol_sdk, thread=True, group="preload")
        compat.strips_divided_without_cycles()  # no strip painted is left to the collector
        if not gc.isenabled():  # `acp-tui` paused it for the start-up, whose objects all live on
            gc.freeze()  # the start-up heap lives as long as the app: full passes skip it
            gc.enable()
        self.collector.start()

    def _on_terminate_signal(self, sig: signal.Signals) -> None:
        if sig == signal.SIGHUP:
            self.terminal_lost()
        else:
            self.run_worker(self.action_quit(), group="quit")

    def get_driver_class(self) -> type[TextualDriver]:
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
        driver = compat.app_driver(self)
        if isinstance(driver, SupervisorDriver):
            driver.terminal_lost()
        detach_from_terminal()
        asyncio.get_running_loop().call_later(TERMINAL_LOST_DEADLINE, _exit_now)
        self.run_worker(self.action_quit(), group="quit")

    # The spares for the next runs ------------------------------------------------------------

    def _renew_spares(self) -> None:
        """Spares as the settings say (`warm`, `warm_idle`), none of the ones before kept: a reload
        may have changed a preset, or the program behind it."""
        if self.driver.spares is not None:
            self.driver.spares.want([])
            self.driver.spares.idle = self.settings.warm_idle
        self.call_after_refresh(self.want_spares)

    def want_spares(self) -> None:
        """Spares for what the next prompt will start: a child per agent of the next round that
        works in its own directory (not a worktree: its cwd is not known yet), its session open;
        and one for each conversation in view whose turn has ended (the follow-up mode's first),
        taken through `initialize` only, so that `f` a few seconds later is warm. Their keeper is
        made the first time (the first frame's `on_ready`: its module is not the first frame's).
        New spares wait while a run is starting: booting beside it, they would take the cores from
        it (64 runs ending one by one started 64 spares among the last runs' boots: 1.6x the time);
        the last run to get its prompt asks again (`_attempt_changed`)."""
        if not self.screen_stack:
            return
        from acp_tui.session.warm import Spares, Wanted

        if self.driver.spares is None and self.settings.warm:
            self.driver.spares = Spares(idle=self.settings.warm_idle)
        spares = self.driver.spares
        if spares is None:
            return
        next_runs = self.next_runs
        if not self.settings.warm or next_runs.trace_dir:  # traced runs start cold: every trace is a run's
            spares.want([])
            return

        wanted = []
        with contextlib.suppress(ConfigError):  # a preset the core cannot run gets no spare
            for preset, isolated in self.main_screen.next_round():
                if preset.spared and not isolated:
                    config = next_runs.config_for(preset, next_runs.policies.get(preset.name, preset.policy))
                    wanted.append(Wanted(config, config.cwd_for(None)))
            follow_up = self.main_screen.query_one(PromptBar).follow_up
            for previous in self.main_screen.follow_ups_in_view(follow_up):
                preset, policy = self.main_screen.follow_up_preset(previous)  # exactly the follow-up's
                config = next_runs.config_for(preset, policy)
                if previous.worktree is not None:
                    config = confined_to(previous.worktree, config)
                if preset.spared and previous.cwd:
                    wanted.append(Wanted(config, config.cwd_for(previous.cwd), follow_up=True))
        self._spares_deferred = any(attempt.starting for attempt in self.session.attempts)
        spares.want(wanted, start=not self._spares_deferred)

    # Following the attempts -------------------------------------------------------------------

    def _attempt_changed(self, attempt: Attempt) -> None:
        ended = self.kept.ended(attempt)
        if not self.screen_stack:  # the app is shutting down
            return
        self.next_runs.seen(attempt)
        pane = self.main_screen.pane_for(attempt)
        if pane is not None:
            pane.show_state()
        self.main_screen.update_subtitle()
        result = attempt.result
        if result is not None:
            self.run_worker(self.main_screen.diffs.follow(attempt), group="compare", exit_on_error=False)
        if ended and result is not None:
            self.calls.ended(attempt, result)
            # Its follow-up's, while the person reads the answer: once its pane is placed (a warm
            # turn may end before its pane's first layout, and only a pane in sight gets one).
            self.call_after_refresh(self.want_spares)
        elif self._spares_deferred and not attempt.starting:
            self.want_spares()  # maybe the last run to start: the spares waited for it

    def action_answer_permission(self) -> None:
        """`a`: the oldest request or question waiting (`ui.waiting`)."""
        self.waiting.open_oldest()

    def action_cancel_all(self) -> None:
        """`C`: every live run cancelled, once confirmed (the focus on no: `y` confirms)."""
        from acp_tui.ui.screens.confirm_screen import CancelAllScreen

        live = [attempt for attempt in self.session.attempts if attempt.live]
        if not live:
            self.notify("No live run to cancel.")
            return

        def answered(yes: bool | None) -> None:
            for attempt in live if yes else ():
                self.driver.cancel_soon(attempt, "cancelled by the user", by_user=True)

        runs = f"{len(live)} live run{'s' * (len(live) != 1)}"
        question = text.markup("Cancel $runs: every agent's run stopped?", runs=runs)
        self.push_screen(CancelAllScreen(question, "Cancel them (y)", "No (n)"), answered)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # A screen over the grid is shown, so its module is loaded: the grid alone imports none.
        over = self.screen if len(self.screen_stack) > 1 else None
        if over is not None:
            from acp_tui.ui.screens.confirm_screen import QuitScreen

            if isinstance(over, QuitScreen):  # y quits, a second ctrl+c too; any other key stays
                return action in ("request_quit", "quit")
        return self.waiting.may_open(over) if action == "answer_permission" else True

    def bell(self) -> None:
        if not self.login.terminal_lent:  # the login's terminal is not ours to ring
            super().bell()

    # App-wide commands -------------------------------------------------------------------------

    def action_help(self) -> None:
        from acp_tui.ui.screens.help_screen import HelpScreen

        if isinstance(self.screen, HelpScreen):  # f1 again: closed, not a second one
            self.screen.dismiss(None)
            return
        if not self.is_screen_installed("help"):  # made once: its words never change
            self.install_screen(HelpScreen(), "help")
        self.push_screen("help")

    def action_agents(self) -> None:
        """F2, the agents: each preset's policy and options (mode, model, ...) for the next runs."""
        self.agents.open()

    def action_reload_config(self) -> None:
        """ctrl+r: the config file again, for the next runs (`ui.config_reload`)."""
        old = self.settings
        read = self.config_reload.read(old)
        if read is None:
            return
        self.settings, overruled = read
        self.calls.configure(self.settings)
        self.export_dir = self.settings.export_dir or paths.exports_dir()
        self._renew_spares()
        self.run_worker(
            self.config_reload.show(old, self.settings, overruled), group="reload", exit_on_error=False
        )

    def action_toggle_tracing(self) -> None:
        if self.next_runs.trace_dir:
            self.next_runs.trace_dir = None
            self.notify("Protocol traces off for new runs.")
        else:
            traces = self.next_runs.trace_dir = str(paths.traces_dir())
            self.notify(
                f"New runs write protocol traces to {text.safe_notice(traces)} (t shows a pane's).",
                markup=False,
            )
        self.want_spares()  # traced or not, a spare is made for its exact config

    def action_export(self) -> None:
        """Every finished attempt of the session (closed panes too), as Markdown for people and
        JSON lines for programs. Any string is written, a lone surrogate included."""
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
            if self.export_dir != paths.exports_dir():
                self.export_dir.mkdir(parents=True, exist_ok=True)  # the one the config names
            stem = _save_new(self.export_dir, time.strftime(EXPORT_NAME), reports)
        except (OSError, ValueError) as exc:
            self.notify(f"Export failed: {text.safe_notice(str(exc))}", severity="error", markup=False)
            return
        more = f" ({live} still running, not in it)" if live else ""
        self.notify(
            f"Exported {len(records)} runs to {text.safe_notice(str(stem))}.md, .jsonl and -compare.md{more}",
            markup=False,
        )

    def deliver_screenshot(
        self, filename: str | None = None, path: str | None = None, time_format: str | None = None
    ) -> str | None:
        """The palette's Screenshot: an SVG of the screen in acp-tui's state folder (`screenshots`),
        or where `path` says; the toast says where, or where it could not and why. In a browser
        (`acp-tui serve`) the page downloads it, as Textual does."""
        if self.is_web:
            return super().deliver_screenshot(filename, path, time_format)
        folder = Path(path) if path else paths.screenshots_dir()
        name = Path(filename).stem if filename else time.strftime(EXPORT_NAME)
        try:
            stem = _save_new(folder, name, {".svg": self.export_screenshot()})
        except OSError as exc:
            why = text.safe_notice(f"Screenshot not saved in {folder}: {exc}")
            self.notify(why, severity="error", markup=False)
            return None
        self.notify(f"Screenshot saved: {text.safe_notice(str(stem))}.svg", markup=False)
        return None

    def get_system_commands(self, screen: Screen[object]) -> Iterable[SystemCommand]:
        """The app's own commands first in the palette (ctrl+p), from the key table; then Textual's."""
        for key in keys.commands():
            target = self.main_screen if key.where == "grid" else self
            _, name, arguments = actions.parse(key.action)  # as a binding reads it: `toggle_box('sandbox')`
            action = functools.partial(getattr(target, f"action_{name}"), *arguments)
            yield SystemCommand(key.command or key.action, f"{key.help} ({key.shown})", action)
        yield from super().get_system_commands(screen)

    def action_request_quit(self) -> None:
        """ctrl+c: quit, after asking once when runs are live or a request waits for a person
        (`y` quits, any other key stays); ctrl+c again while it asks quits at once."""
        from acp_tui.ui.screens.confirm_screen import QuitScreen

        live = sum(a.live for a in self.session.attempts)
        if isinstance(self.screen, QuitScreen) or not (live or self.asks):
            self.run_worker(self.action_quit(), group="quit")
            return
        waiting = (
            f" and {len(self.asks)} permission request{'s' * (len(self.asks) != 1)} waiting"
            if self.asks
            else ""
        )
        question = text.markup(
            "$live live$waiting: quit, and stop every agent?",
            live=f"{live} run{'s' * (live != 1)}",
            waiting=waiting,
        )

        def answered(yes: bool | None) -> None:
            if yes:
                self.run_worker(self.action_quit(), group="quit")

        self.push_screen(QuitScreen(question, "Quit (y)", "Stay (any other key)"), answered)

    async def action_quit(self) -> None:
        """Every live run is disposed (its process group gone) before the app exits."""
        if self._quitting:
            return
        self._quitting = True
        live = sum(a.live for a in self.session.attempts)
        if live:
            self.notify(f"Stopping {live} agent{'s' if live > 1 else ''}…", timeout=10)
        await self._close_driver()
        self.exit()

    async def _close_driver(self) -> None:
        """Every live run disposed, every worktree not kept removed."""
        for line in await self.driver.aclose():  # quitting: the log is what remains to tell
            logging.getLogger(__name__).warning("%s", line)

    async def on_unmount(self) -> None:
        # Reached on any exit, including an error in the app: no child may outlive us.
        loop = asyncio.get_running_loop()
        for sig in TERMINATING_SIGNALS:
            loop.remove_signal_handler(sig)
        self.collector.stop()
        await self._close_driver()


def comparison_report(records: list[RunRecord]) -> str:
    """The comparison report (`acp_tui.reports.compare`), one per round of the session."""
    from acp_tui.reports.compare import comparison_markdown

    rounds: dict[int | None, list[RunRecord]] = {}
    for record in records:
        rounds.setdefault(record.round, []).append(record)
    return "\n".join(
        comparison_markdown(runs, title=f"acp-tui comparison, round {number}")
        for number, runs in rounds.items()
    )


def _save_new(folder: Path, stem: str, contents: dict[str, str]) -> Path:
    """New files `stem<suffix>` in `folder` (ours, made if missing, unless another is named), under
    one free name (`-2`, `-3`, ... when taken): never an existing file, never through a link planted
    at the name of this second. The stem written."""
    from acp_tui.core.files import create_unique, private_dir

    if folder in (paths.exports_dir(), paths.screenshots_dir()):
        private_dir(folder)  # ours: a real folder, never a link planted there
    written, files = create_unique(folder, stem, contents)
    with contextlib.ExitStack() as closing:
        for file in files.values():
            closing.enter_context(file)
        for suffix, file in files.items():
            file.write(contents[suffix])
    return written


def _exit_now() -> None:
    os._exit(129)  # 128 + SIGHUP: the shell's convention for a process ended by it


def _preload_protocol_sdk() -> None:
    """Import what the first round needs off the UI thread, so that it does not freeze the screen;
    then set the start-up heap aside.

    The SDK's schema models and Textual's classes are most of the heap and live as long as the app:
    frozen, they are skipped by the garbage collector's full passes, which otherwise stalled the
    screen for up to 0.2 s while 16 panes streamed (0.06 s frozen).
    """
    from acp_tui.session.driver import preload_backend

    preload_backend()
    import acp_tui.ui.screens.policy_screen  # F2, its menus' option list with it: not at its opening
    import acp_tui.ui.widgets.run_pane  # noqa: F401

    gc.freeze()


def make_app(
    settings: Settings,
    *,
    store: SessionStore | Callable[[], SessionStore] | None = None,
    reopened: tuple[SavedSession, list[dict[str, Any]]] | None = None,
    after_first_frame: Callable[[], object] | None = None,
) -> SupervisorApp:
    return SupervisorApp(settings, store=store, reopened=reopened, after_first_frame=after_first_frame)
