"""The sessions an agent keeps (`session/list`), to continue one in a pane.

Opened at once, it says it is asking (`lister`, in a worker of its own: closing the screen ends
it); `show` gives it the sessions (as the agent listed them: title, working directory, last
activity, id) or the one line saying why there are none (the agent offers no `session/list`, it
failed). Enter continues the highlighted one; escape closes. Titles, paths and ids come from the
agent: shown literally, on one line each.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from textual import on
from textual.app import ComposeResult
from textual.content import Content
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from acp_tui.core.model import AgentSessionInfo
from acp_tui.core.text import one_line
from acp_tui.ui import text
from acp_tui.ui.screens._dialog import DialogScreen

TITLE_CHARS = 60
Listed = tuple[tuple[AgentSessionInfo, ...], str | None]  # the sessions, or why there are none


class AgentSessionsScreen(DialogScreen[AgentSessionInfo | None]):
    """Dismisses with the session to continue, or None."""

    DEFAULT_CSS = """
    AgentSessionsScreen {
        & #who { text-style: bold; }
        & #status { color: $text-muted; margin-bottom: 1; }
        & OptionList { height: auto; max-height: 20; }
    }
    """

    def __init__(self, agent: str, lister: Callable[[], Awaitable[Listed]] | None = None) -> None:
        super().__init__()
        self.agent = agent
        self.sessions: tuple[AgentSessionInfo, ...] = ()
        self._lister = lister

    def compose_dialog(self) -> ComposeResult:
        yield Static(text.markup("the sessions $agent keeps", agent=self.agent), id="who")
        yield Static(text.line(f"asking {self.agent} (session/list)…"), id="status")
        yield OptionList(id="sessions")

    def on_mount(self) -> None:
        self.query_one(OptionList).focus()
        if self._lister is not None:
            self.run_worker(self._list(self._lister), exit_on_error=False)

    async def _list(self, lister: Callable[[], Awaitable[Listed]]) -> None:
        found, error = await lister()
        self.show(error if error is not None else found)

    def show(self, found: tuple[AgentSessionInfo, ...] | str) -> None:
        """The sessions the agent listed, or why there are none (one line)."""
        status = self.query_one("#status", Static)
        if isinstance(found, str):
            status.update(text.line(found))
            return
        self.sessions = found
        count = f"{len(found)} session{'s' * (len(found) != 1)}" if found else "no session kept"
        status.update(text.line(f"{count} · enter continues one in a new pane · escape closes"))
        options = self.query_one(OptionList)
        options.clear_options()
        options.add_options(Option(_row(session), id=str(n)) for n, session in enumerate(found))
        if found:
            options.highlighted = 0

    @on(OptionList.OptionSelected)
    def chosen(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(self.sessions[int(event.option_id or 0)])


def _row(session: AgentSessionInfo) -> Content:
    title = session.title or "(untitled)"
    when = session.updated or "?"
    return text.markup(
        "[b]$title[/b]\n  $cwd · $when · $id",
        title=one_line(title, TITLE_CHARS),
        cwd=session.cwd,
        when=when,
        id=session.session_id,
    )
