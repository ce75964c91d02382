"""Protocol traces: every JSON-RPC frame of a run, in and out, one JSON object per line.

A trace is a bug report: `{"t": seconds since the run started, "dir": "out" | "in", "frame": ...}`.
Values the preset passed explicitly in `env` are masked wherever they appear. Writing a trace never
stops a run: a full disk or a closed file ends the trace (said once), not the run.
"""

from __future__ import annotations

import json
import logging
import os
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

log = logging.getLogger(__name__)


class TraceWriter:
    def __init__(self, path: Path, mask: Callable[[str], str], on_failure: Callable[[str], None]) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        # Any string is written: lone surrogates are escaped by json.dumps (ensure_ascii).
        self._file: IO[str] | None = open(path, "w", encoding="utf-8")  # noqa: SIM115 - see close()
        self._started = time.monotonic()
        self._mask = mask
        self._on_failure = on_failure

    @classmethod
    def for_run(
        cls,
        trace_dir: str,
        label: str,
        pid: int,
        mask: Callable[[str], str],
        on_failure: Callable[[str], None],
    ) -> TraceWriter:
        safe = re.sub(r"[^A-Za-z0-9_.-]+", "-", label).strip("-") or "agent"
        stamp = time.strftime("%Y%m%d-%H%M%S")
        return cls(Path(os.path.expanduser(trace_dir)) / f"{safe}-{stamp}-{pid}.jsonl", mask, on_failure)

    def write(self, direction: str, frame: Any) -> None:
        if self._file is None:
            return
        entry = {"t": round(time.monotonic() - self._started, 6), "dir": direction, "frame": frame}
        try:
            self._file.write(self._mask(json.dumps(entry, separators=(",", ":"))) + "\n")
        except (OSError, ValueError, TypeError, RecursionError) as exc:
            self._fail(exc)

    def close(self) -> None:
        file, self._file = self._file, None
        if file is None:
            return
        try:
            file.close()
        except OSError as exc:
            self._fail(exc)

    def _fail(self, exc: BaseException) -> None:
        log.warning("trace %s stopped: %s", self.path, exc)
        file, self._file = self._file, None
        if file is not None:
            try:
                file.close()
            except OSError:
                log.debug("closing the failed trace failed too", exc_info=True)
        self._on_failure(f"the protocol trace stopped: {exc}")
