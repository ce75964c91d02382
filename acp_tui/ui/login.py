"""`L` after "authentication required": the agent's login command, confirmed with the whole command
line shown (the focus on Cancel), run in the terminal the app lends it, then the run again."""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from acp_tui.core.text import one_line
from acp_tui.ui import text
from acp_tui.ui.welcome import display_command

if TYPE_CHECKING:
    from textual.app import App

    from acp_tui.ui.widgets.run_pane import RunPane

# Runs a terminal login (argv, env, cwd) and gives its exit status: the app suspends itself for it;
# tests put a headless runner in its place (`Login.runner`).
LoginRunner = Callable[[list[str], dict[str, str], str | None], Awaitable[int]]


class Login:
    """The logins of an app's panes: confirmed, run in the terminal, then the pane's run again."""

    def __init__(self, app: App[Any], rerun: Callable[[RunPane], Awaitable[None]]) -> None:
        self.app = app
        self.rerun = rerun
        self.runner: LoginRunner = self.in_terminal
        self.terminal_lent = False  # a login has the terminal: not ours to draw on or ring

    def confirm(self, pane: RunPane, argv: list[str]) -> None:
        from acp_tui.ui.screens.login_screen import LoginConfirmScreen

        def answered(yes: bool | None) -> None:
            if yes:
                self.app.run_worker(self._log_in(pane, argv), group="login", exit_on_error=False)

        self.app.push_screen(LoginConfirmScreen(pane.agent, argv), answered)

    async def _log_in(self, pane: RunPane, argv: list[str]) -> None:
        from acp_tui.process.environment import child_environment

        preset = pane.attempt.preset
        app = self.app
        try:
            status = await self.runner(argv, child_environment(preset.env), preset.cwd)
        except Exception as exc:  # e.g. no terminal to suspend for (SuspendNotSupported), no such program
            app.notify(f"Login not run: {text.safe_notice(str(exc) or type(exc).__name__)}", markup=False)
            return
        if status != 0:
            app.notify(f"The login ended with status {status}: not run again.", severity="warning")
            return
        await self.rerun(pane)

    async def in_terminal(self, argv: list[str], env: dict[str, str], cwd: str | None) -> int:
        # ctrl+c in the login reaches us too (one process group): it must end the login, not the
        # app (asyncio's own SIGINT handler would cancel it). A handler, unlike SIG_IGN, is reset to
        # the default in the child at exec, so the login itself still stops on ctrl+c.
        previous = signal.signal(signal.SIGINT, lambda *_: None)
        try:
            # The login is awaited, so other runs go on streaming meanwhile; nothing is drawn (nor
            # rung) while the terminal is the login's.
            with self.app.batch_update(), self.app.suspend():
                self.terminal_lent = True
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
            self.terminal_lent = False
            signal.signal(signal.SIGINT, previous)
