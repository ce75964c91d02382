"""F2, the agents: each preset's policy, options (mode, model, ...) and sandbox for the next runs
(kept by `ui.next_runs`); an agent's own session picked there is what the next prompt continues."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from acp_tui.ui.widgets.prompt_bar import PromptBar

if TYPE_CHECKING:
    from textual.app import App

    from acp_tui.session.attempts import Session
    from acp_tui.ui.next_runs import NextRuns
    from acp_tui.ui.screens.main_screen import MainScreen

AGENTS = "agents"  # F2's installed screen


@dataclass(eq=False)
class AgentsDialog:
    """`grid`: the screen of the prompt; `want_spares`: said when a choice changes the next runs."""

    app: App[Any]
    next_runs: NextRuns
    session: Session
    grid: Callable[[], MainScreen]
    want_spares: Callable[[], None]

    def open(self) -> None:
        from acp_tui.ui.screens.policy_screen import AgentsChoice

        def apply(chosen: AgentsChoice | None) -> None:
            if chosen:
                self.next_runs.choose(chosen)
                bar = self.grid().query_one(PromptBar)
                bar.show_policies(self.next_runs.policies)
                if (
                    chosen.session is not None
                ):  # one of the agent's own sessions: the next prompt continues it
                    agent, session = chosen.session
                    preset = self.next_runs.preset(agent)
                    where = preset.provider_config(policy="reject").cwd_for(None)  # the policy plays no part
                    bar.enter_follow_up(self.session.agent_session(preset, session, where))
                self.want_spares()  # spares of a changed preset are not its next run's

        self.app.push_screen(self._installed(), apply)

    def _installed(self) -> str:
        """F2's screen, installed: the one made before while what it shows is unchanged (it is
        set back to that when it opens), else a new one (sixteen agents are sixteen menus: a
        second to compose, half a second to take down)."""
        app = self.app
        screen = self.next_runs.agents_screen()
        kept = app.get_screen(AGENTS) if app.is_screen_installed(AGENTS) else None
        if isinstance(kept, type(screen)) and kept.shows_the_same(screen):
            return AGENTS
        if kept is not None:
            app.uninstall_screen(AGENTS)
            kept.remove()  # not in the stack: nothing else takes it down
        app.install_screen(screen, AGENTS)
        return AGENTS
