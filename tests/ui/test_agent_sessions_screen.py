"""The sessions an agent keeps, on the screen: asked for, then listed (or why not), enter continues
one; titles and paths from the agent are shown literally."""

from __future__ import annotations

from textual.app import App
from textual.widgets import OptionList, Static

from acp_tui.core.model import AgentSessionInfo
from acp_tui.ui.screens.agent_sessions_screen import AgentSessionsScreen

HOSTILE = "\x1b]0;pwned\x07[bold red]x[/]"
SESSIONS = (
    AgentSessionInfo("kept-2", "/work/b", f"fix the build {HOSTILE}", "2026-08-20T10:00:00Z"),
    AgentSessionInfo("kept-1", "/work/a", None, None),
)


class Host(App[None]):
    def __init__(self, screen: AgentSessionsScreen) -> None:
        super().__init__()
        self.sessions = screen
        self.chosen: list[AgentSessionInfo | None] = []

    def on_mount(self) -> None:
        self.push_screen(self.sessions, self.chosen.append)


async def test_the_list_arrives_and_enter_continues_the_highlighted_session() -> None:
    screen = AgentSessionsScreen("kept")
    app = Host(screen)
    async with app.run_test(size=(80, 24)) as pilot:
        status = screen.query_one("#status", Static)
        assert str(status.render()) == "asking kept (session/list)…"
        screen.show(SESSIONS)
        await pilot.pause()
        assert str(status.render()).startswith("2 sessions · enter continues one")
        options = screen.query_one(OptionList)
        first = str(options.get_option_at_index(0).prompt)
        assert "fix the build \\x1b]0;pwned\\x07[bold red]x[/]" in first and "\x1b" not in first
        assert "/work/b · 2026-08-20T10:00:00Z · kept-2" in first
        assert "(untitled)" in str(options.get_option_at_index(1).prompt)
        await pilot.press("down", "enter")
    assert app.chosen == [SESSIONS[1]]


async def test_why_there_is_none_is_one_line_and_escape_closes() -> None:
    screen = AgentSessionsScreen("plain")
    app = Host(screen)
    async with app.run_test(size=(80, 24)) as pilot:
        screen.show("plain does not list its sessions (it offers no session/list)")
        await pilot.pause()
        assert str(screen.query_one("#status", Static).render()) == (
            "plain does not list its sessions (it offers no session/list)"
        )
        await pilot.press("enter", "escape")
    assert app.chosen == [None]
