"""When the app calls the person: a run failed (a toast and the bell), something waits for them (a
toast and a call), or a run ended while they were looking elsewhere (a call). How it is written to
the terminal is `ui.attention`'s; `toasts` and `notify` in the config switch each off."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from acp_tui import compat
from acp_tui.ui import text
from acp_tui.ui.attention import Attention

if TYPE_CHECKING:
    from textual.app import App
    from textual.notifications import SeverityLevel

    from acp_tui.core.model import SubagentResult
    from acp_tui.session.attempts import Attempt
    from acp_tui.settings.schema import Settings
    from acp_tui.ui.screens.grid_screen import GridScreen


class Calls:
    """The app's calls to the person. `grid`: the screen of the panes; `terminal_lent`: whether a
    login has the terminal (nothing is written to it then)."""

    def __init__(
        self,
        app: App[Any],
        settings: Settings,
        grid: Callable[[], GridScreen],
        terminal_lent: Callable[[], bool],
    ) -> None:
        self.app = app
        self.grid = grid
        self.terminal_lent = terminal_lent
        self.attention = Attention(settings.notify, self._write)
        self.toasts_on = settings.toasts

    def configure(self, settings: Settings) -> None:
        """The config's `notify` and `toasts` again (reloaded)."""
        self.attention.mode, self.toasts_on = settings.notify, settings.toasts

    def ended(self, attempt: Attempt, result: SubagentResult) -> None:
        """A failure is said (a toast, the bell); any end is called out to a person elsewhere."""
        elsewhere = self._elsewhere(attempt)
        if result.stop_reason == "error":
            reason = f": {result.error}" if result.error else ""
            self.alert(f"{attempt.agent} failed{reason}", "error", call=elsewhere)
        elif elsewhere:
            from acp_tui.core.model import stop_word  # (loaded by then: a run ended)

            self.attention.call(f"{attempt.agent} {attempt.label} ended: {stop_word(result.stop_reason)}")

    def _elsewhere(self, attempt: Attempt) -> bool:
        """The person is not looking at `attempt`'s pane: another pane is zoomed, a dialog or a
        screen is open over the grid, or the terminal is not focused (where it says so)."""
        grid = self.grid()
        zoomed = grid.zoomed
        shown = zoomed is None or zoomed is grid.pane_for(attempt)
        return not (self.app.app_focus and len(self.app.screen_stack) == 1 and shown)

    def alert(self, message: str, severity: SeverityLevel, *, call: bool) -> None:
        """A run errors or needs the user: a toast, and the bell (`call`: with a desktop
        notification), each as the config says (`toasts`, `notify`)."""
        if call:
            self.attention.call(message)
        else:
            self.attention.bell()
        if self.toasts_on:
            self.app.notify(text.safe_notice(message), severity=severity, markup=False)

    def _write(self, sequence: str) -> None:
        """The bell and notifications, straight to the terminal (not a login's, nor a test's)."""
        driver = compat.app_driver(self.app)
        if driver is not None and not self.app.is_headless and not self.terminal_lent():
            driver.write(sequence)
