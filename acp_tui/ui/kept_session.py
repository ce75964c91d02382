"""The session kept as it goes (`acp-tui --session ID` reopens it): each attempt's record appended as
it ends, to a saved session made at the first end; and a saved one reopened, its panes as they were."""

from __future__ import annotations

import logging
import os
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable

    from textual.app import App

    from acp_tui.session.attempts import Attempt, Session
    from acp_tui.session.driver import SessionDriver
    from acp_tui.session.saved import SavedSession, SessionStore
    from acp_tui.settings.schema import Settings
    from acp_tui.ui.screens.main_screen import MainScreen


class KeptSession:
    """`store`: where sessions are kept, or how to open it at the first record kept (its module is
    not the first frame's); None: this one is not kept. `reopened`: a saved session and its
    records, to show again."""

    def __init__(
        self,
        app: App[Any],
        session: Session,
        store: SessionStore | Callable[[], SessionStore] | None,
        reopened: tuple[SavedSession, list[dict[str, Any]]] | None,
    ) -> None:
        self.app = app
        self.session = session
        self.store = store
        self.saved: SavedSession | None = reopened[0] if reopened else None
        self._reopened = reopened[1] if reopened else []
        self._kept: set[int] = set()  # attempts whose record the saved session has

    def ended(self, attempt: Attempt) -> bool:
        """Whether `attempt` has just ended: its record is kept then, once, as it ended."""
        if attempt.result is None or attempt.id in self._kept:
            return False
        self._kept.add(attempt.id)
        if self.store is None:
            return True
        try:
            if callable(self.store):
                self.store = self.store()
            if self.saved is None:
                self.saved = self.store.new(os.getcwd())
            self.saved.append(attempt.record(numbered=True))
        except OSError as exc:  # the session goes on; it is just not kept
            logging.getLogger(__name__).warning("could not keep the session: %s", exc)
        return True

    async def reopen(self, settings: Settings, driver: SessionDriver, grid: MainScreen) -> None:
        """The saved session's panes as they were; follow-ups (`f`) continue their turns (in their
        worktrees, where those were kept)."""
        from acp_tui.reports.records import preset_for

        saved = self.saved
        assert saved is not None  # the session reopened
        conversations, skipped = self.session.restore(
            self._reopened, lambda record: preset_for(record, settings)
        )
        skipped += saved.damaged
        if skipped:  # what is left of it reopens; the file keeps every line as it was
            self.app.notify(
                f"Session {saved.id}: skipped {skipped} damaged record{'s' * (skipped != 1)}.",
                severity="warning",
                markup=False,
            )
        self._kept.update(attempt.id for attempt in self.session.attempts)  # saved already
        for attempt in conversations:
            driver.reopen_worktree(attempt)  # gone or not ours: `f` says so, and nothing runs
        if conversations:  # in the grid's order: by round, agents as the config lists them
            names = settings.names
            place = {name: index for index, name in enumerate(names)}
            conversations.sort(key=lambda a: (a.round_no, place.get(a.agent, len(names)), a.attempt_no))
            await grid.show(conversations)
