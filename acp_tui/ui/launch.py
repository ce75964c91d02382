"""Opening the supervisor: what `acp-tui` does with no command, without click.

`acp-tui` alone (no option, no command) comes here straight from the console script
(`acp_tui.__main__`), so that its first frame pays for no command line parser (click: ~10 ms); the
command line's group (`acp_tui.cli.main`) comes here with its options, and says a bad config or
session in its one line. Nothing heavy is imported before the terminal is taken, and the log is
routed after the first frame: a record logged before is held as it is (never formatted, so never
written unmasked) and written first.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, NoReturn

if TYPE_CHECKING:
    from acp_tui.session.saved import SessionStore
    from acp_tui.settings.schema import Settings
    from acp_tui.ui.app import SupervisorApp

EXIT_INTERRUPTED = 130


def supervisor(settings_of: Callable[[], Settings], session_id: str | None) -> SupervisorApp:
    """The app, ready to run. `settings_of` may raise (a bad config); so may `session_id` (a
    `SessionError`): both before anything is shown."""
    from acp_tui.ui.typed_ahead import take_terminal

    take_terminal()  # first: an Enter typed before the app holds the terminal stays an Enter
    import gc

    gc.disable()  # until the first frame (`SupervisorApp.on_ready`): the start-up's objects all live on
    from acp_tui.settings import paths

    settings = settings_of()
    held = _HeldRecords()
    logging.getLogger().addHandler(held)  # until the log is routed (after the first frame)

    def route_logs() -> None:
        from acp_tui.settings.logs import route_logging, secrets_of

        route_logging(secrets_of(settings.presets), held=held.records)

    def sessions() -> SessionStore:
        from acp_tui.session.saved import SessionStore

        return SessionStore(paths.sessions_dir(), keep=settings.keep_sessions)

    # A session reopened is read before the app starts; a new one is made at its first record.
    store: SessionStore | Callable[[], SessionStore] = sessions
    reopened = None
    if session_id is not None:
        store = sessions()
        reopened = store.open(session_id)
    from acp_tui.ui.app import make_app

    return make_app(settings, store=store, reopened=reopened, after_first_frame=route_logs)


class _HeldRecords(logging.Handler):
    """The records logged before the log is routed, kept unformatted for it."""

    def __init__(self) -> None:
        super().__init__()
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


def interrupted() -> NoReturn:
    """Ctrl-C before any child existed: nothing to clean up."""
    sys.stderr.write("acp-tui: interrupted\n")
    sys.exit(EXIT_INTERRUPTED)
