"""Where diagnostics go: a log file, never the terminal the app or `run` owns.

The ACP SDK logs to the root logger (a traceback for each frame it cannot parse). Unconfigured,
Python would print those on stderr: over the TUI, or between `run`'s forwarded agent lines. The file
is opened only when something is actually logged, and values from presets' `env` are masked.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from pathlib import Path

from .subagents.acp.masking import SecretMask


def log_file() -> Path:
    import platformdirs

    return platformdirs.user_log_path("acp-tui", appauthor=False) / "acp-tui.log"


class _MaskingFormatter(logging.Formatter):
    def __init__(self, mask: SecretMask) -> None:
        super().__init__("%(asctime)s %(levelname)s %(name)s: %(message)s")
        self._mask = mask

    def format(self, record: logging.LogRecord) -> str:
        return self._mask(super().format(record))


def route_logging(secrets: Iterable[str] = (), path: Path | None = None) -> Path:
    """Send every log record (WARNING and up) to the log file instead of the terminal."""
    path = path or log_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    handler = logging.FileHandler(path, encoding="utf-8", delay=True)
    handler.setFormatter(_MaskingFormatter(SecretMask(secrets)))
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(logging.WARNING)
    return path
