"""Where diagnostics go: a log file, never the terminal the app or `run` owns.

The ACP SDK logs to the root logger (a traceback for each frame it cannot validate). Unconfigured,
Python would print those on stderr: over the TUI, or between `run`'s forwarded agent lines. The file
is opened only when something is actually logged; it rotates (a few MiB, two old files kept), the
same record repeated is written a few times and then counted, and values from presets' `env` are
masked, shortened quotes of them included.

The log's name is known, so an agent unconfined could plant a link there (the log folder is ours,
but the agent runs as our user): the file is opened without following a link, a folder or a link
in place of the log's folder is not written into, and a log that cannot be written loses its
records quietly rather than print over the terminal the app owns.
"""

from __future__ import annotations

import io
import logging
import logging.handlers
import os
import stat
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from acp_tui.core.masking import SecretMask
from acp_tui.settings import paths

if TYPE_CHECKING:
    from acp_tui.settings.schema import AgentPreset

MAX_LOG_BYTES = 4 << 20
LOG_BACKUPS = 2
REPEATS_WRITTEN = 3  # then only every 10th, 100th, 1000th ... repeat, with its count
_REPEAT_KEYS_KEPT = 1000


def secrets_of(presets: Iterable[AgentPreset]) -> list[str]:
    """Every value these presets hand their agents that could be a credential: what the log masks."""
    return [value for preset in presets for value in preset.secrets()]


class _MaskingFormatter(logging.Formatter):
    def __init__(self, mask: SecretMask) -> None:
        super().__init__("%(asctime)s %(levelname)s %(name)s: %(message)s")
        self._mask = mask

    def format(self, record: logging.LogRecord) -> str:
        return self._mask(super().format(record))


class RepeatFilter(logging.Filter):
    """Counts records of the same origin and message instead of writing each one.

    An agent sending 20,000 frames the SDK rejects makes 20,000 tracebacks of one shape.
    """

    def __init__(self) -> None:
        super().__init__()
        self._seen: dict[tuple[str, str, int, str], int] = {}

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[0].__name__ if record.exc_info and record.exc_info[0] else ""
        key = (record.name, record.pathname, record.lineno, f"{record.msg}{exc}")
        count = self._seen.get(key, 0) + 1
        if len(self._seen) >= _REPEAT_KEYS_KEPT and key not in self._seen:
            self._seen.clear()
        self._seen[key] = count
        if count <= REPEATS_WRITTEN:
            return True
        if str(count).strip("0") != "1":  # 10, 100, 1000, ...
            return False
        record.msg = f"[the same record {count} times] {record.msg}"
        record.exc_info = None  # the traceback was written already
        record.exc_text = None
        return True


_LOG_FLAGS = (
    os.O_WRONLY
    | os.O_CREAT
    | os.O_APPEND
    | os.O_NONBLOCK  # a FIFO planted there must not block the first record
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_CLOEXEC", 0)
)


class LogFile(logging.handlers.RotatingFileHandler):
    """The rotating log, opened only as a regular file of its own (never through a link)."""

    def _open(self) -> io.TextIOWrapper:
        fd = os.open(self.baseFilename, _LOG_FLAGS, 0o600)
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise OSError(f"{self.baseFilename}: not a regular file")
            return os.fdopen(fd, "a", encoding=self.encoding, errors=self.errors)
        except BaseException:
            os.close(fd)
            raise

    def handleError(self, record: logging.LogRecord) -> None:
        """A record that cannot be written is lost: the terminal is the app's, not the log's."""


def route_logging(
    secrets: Iterable[str] = (), path: Path | None = None, held: Iterable[logging.LogRecord] = ()
) -> Path:
    """Send every log record (WARNING and up) to the log file instead of the terminal; `held`:
    records logged before, written first."""
    from acp_tui.core.files import private_dir

    path = path or paths.log_file()
    handler: logging.Handler
    try:
        private_dir(path.parent)
    except OSError:
        handler = logging.NullHandler()  # no folder of ours to log in: the records are lost
    else:
        handler = LogFile(
            path,
            maxBytes=MAX_LOG_BYTES,
            backupCount=LOG_BACKUPS,
            encoding="utf-8",
            errors="backslashreplace",  # any string is written, lone surrogates included
            delay=True,
        )
    handler.setFormatter(_MaskingFormatter(SecretMask(secrets, fragments=True)))
    handler.addFilter(RepeatFilter())
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(logging.WARNING)
    for record in held:
        handler.handle(record)
    return path
