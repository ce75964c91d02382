"""ctrl+r: the config file read again, for the next runs (`settings.reload` says what stays), and
shown: the prompt bar's agents and policies, the welcome, F2 if it was open, a toast. A bad file
changes nothing."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from acp_tui.ui import text
from acp_tui.ui.welcome import welcome
from acp_tui.ui.widgets.prompt_bar import PromptBar

if TYPE_CHECKING:
    from textual.app import App

    from acp_tui.settings.schema import Settings
    from acp_tui.ui.next_runs import NextRuns
    from acp_tui.ui.screens.main_screen import MainScreen


@dataclass(eq=False)
class ConfigReload:
    """`grid`: the screen of the prompt and the panes; `open_agents`: F2."""

    app: App[Any]
    next_runs: NextRuns
    grid: Callable[[], MainScreen]
    open_agents: Callable[[], None]

    def read(self, old: Settings) -> tuple[Settings, list[str]] | None:
        """The file of `old` again, the choices that still hold kept: the new settings and the F2
        policies the file overruled; or None, said why."""
        from acp_tui.settings.reload import reload
        from acp_tui.settings.schema import ConfigError

        if old.source is None:
            self.app.notify("No config file to reload: these are the demo agents.", severity="warning")
            return None
        try:
            new, kept, overruled = reload(old, self.next_runs.choices())
        except ConfigError as exc:
            self.app.notify(
                f"Config not reloaded: {text.safe_notice(str(exc))}", severity="error", markup=False
            )
            return None
        self.next_runs.reloaded(kept)
        return new, overruled

    async def show(self, old: Settings, new: Settings, overruled: list[str]) -> None:
        if new.names != old.names:
            await self._rebuild_prompt_bar(new)
        else:
            self.grid().query_one(PromptBar).show_policies(self.next_runs.policies)
        self.grid().runs.show_welcome(welcome(new))
        from acp_tui.ui.screens.policy_screen import AgentsScreen

        screen = self.app.screen
        if isinstance(screen, AgentsScreen):  # reloaded from F2: show the new file there
            screen.dismiss(None)
            self.open_agents()
        wins = f"; the file's policy wins over F2's: {', '.join(overruled)}" if overruled else ""
        self.app.notify(
            text.safe_notice(
                f"Config reloaded from {new.source}: {len(new.presets)} agents, "
                f"{len(new.policies)} named policies (for the next runs){wins}"
            ),
            markup=False,
            timeout=10 if overruled else 5,
        )

    async def _rebuild_prompt_bar(self, settings: Settings) -> None:
        """Agents were added or removed: a prompt bar with the new ones, the prompt text kept."""
        grid = self.grid()
        bar = grid.query_one(PromptBar)
        typed = bar.value
        focused = bar.area.has_focus
        # The checks stay as they were; an agent the file added comes checked.
        checked = {*bar.selected(), *(name for name in settings.names if name not in bar.policies)}
        new = PromptBar(self.next_runs.policies, settings.prompt, checked)
        new.commands = self.next_runs.commands
        await grid.mount(new, after=bar)
        if bar.sandbox:  # never unconfined by a reload
            new.toggle("sandbox")
        if bar.worktree:
            new.toggle("worktree")
        elsewhere = grid.app.focused if not focused else None
        if bar.follow_up is not None and bar.follow_up.agent in settings.names:
            new.enter_follow_up(bar.follow_up)  # which takes the focus: given back below
        await bar.remove()
        new.area.text = typed
        if focused:
            new.focus_prompt()
        elif elsewhere is not None and elsewhere.is_attached:
            elsewhere.focus()
