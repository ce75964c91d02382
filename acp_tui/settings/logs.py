"""Where diagnostics go: a log file, never the terminal the app or `run` owns.

The ACP SDK logs to the root logger (a traceback for each frame it cannot validate). Unconfigured,
Python would print those on stderr: over the TUI, or between `run`'s forwarded agent lines. The file
is opened only when something is actually logged; it rotates (a few MiB, two old files kept), the
same record repeated is written a few times and then counted, and values from presets' `env` are
masked, shortened quotes of them included.
"""

from __future__ import annotations

import logging
import logging.handlers
from collections.abc import Iterable
from pathlib import Path

from acp_tui.core.masking import SecretMask

MAX_LOG_BYTES = 4 << 20
LOG_BACKUPS = 2
REPEATS_WRITTEN = 3  # then only every 10th, 100th, 1000th ... repeat, with its count
_REPEAT_KEYS_KEPT = 1000


def log_file() -> Path:
    import platformdirs

    return platformdirs.user_log_path("acp-tui", appauthor=False) / "acp-tui.log"


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


def route_logging(secrets: Iterable[str] = (), path: Path | None = None) -> Path:
    """Send every log record (WARNING and up) to the log file instead of the terminal."""
    path = path or log_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    handler = logging.handlers.RotatingFileHandler(
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
    return path
