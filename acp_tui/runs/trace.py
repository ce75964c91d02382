"""Protocol traces: every frame of a run, in and out, one JSON object per line.

A trace is a bug report: `{"t": seconds since the run started, "dir": "out" | "in", "frame": ...}`.
A frame is what the run's protocol sends: an ACP agent's JSON-RPC messages, Claude Code's
stream-json lines, an A2A agent's card, request and stream events (A2A's JSON, not HTTP's bytes).
Values the preset passed explicitly (`env`, `headers`) are masked wherever they appear. Writing a
trace never stops a run: a full disk or a closed file ends the trace (said once), not the run.

A trace's name is predictable (`NAME-STAMP-PID.jsonl`; `NAME-STAMP.jsonl` for a run without a
child), so an agent can plant a link there: the file is always a new one (`create_unique`: never
through a link), and a name already taken gets a `-2`, `-3`, ... instead.
"""

from __future__ import annotations

import json
import logging
import os
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from acp_tui.core.files import create_unique
from acp_tui.core.masking import SecretMask

if TYPE_CHECKING:
    from acp_tui.settings.provider_config import AcpProviderConfig

log = logging.getLogger(__name__)


class TraceWriter:
    def __init__(self, path: Path, mask: Callable[[str], str], on_failure: Callable[[str], None]) -> None:
        """A new trace at `path`, or beside it (`-2`, `-3`, ... before `.jsonl`) when it is taken."""
        path.parent.mkdir(parents=True, exist_ok=True)
        base, opened = create_unique(path.parent, path.stem, [path.suffix])
        self.path = Path(f"{base}{path.suffix}")
        self._file: IO[str] | None = opened[path.suffix]  # see close()
        self._started = time.monotonic()
        self._mask = mask
        self._on_failure = on_failure

    @classmethod
    def for_run(
        cls,
        trace_dir: str,
        label: str,
        pid: int | None,
        mask: Callable[[str], str],
        on_failure: Callable[[str], None],
    ) -> TraceWriter:
        safe = re.sub(r"[^A-Za-z0-9_.-]+", "-", label).strip("-") or "agent"
        name = "-".join([safe, time.strftime("%Y%m%d-%H%M%S"), *([str(pid)] if pid is not None else [])])
        return cls(Path(os.path.expanduser(trace_dir)) / f"{name}.jsonl", mask, on_failure)

    def write(self, direction: str, frame: Any) -> None:
        if self._file is None:
            return
        entry = {"t": round(time.monotonic() - self._started, 6), "dir": direction, "frame": frame}
        try:
            # Any string is written: lone surrogates are escaped by json.dumps (ensure_ascii).
            line = json.dumps(entry, separators=(",", ":"), allow_nan=False)
            self._file.write(self._mask(line) + "\n")
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


def open_trace(
    config: AcpProviderConfig, pid: int | None, on_failure: Callable[[str], None]
) -> TraceWriter | None:
    """The trace of a run of `config` (its child's `pid`), when the config asks for one
    (`trace_dir`); None when not, or when it cannot be made: no trace is no reason to fail a run.
    Frames are traced as they came, so a value split across two of them is masked by its fragments."""
    if not config.trace_dir:
        return None
    mask = SecretMask(config.secrets(), fragments=True)
    try:
        return TraceWriter.for_run(config.trace_dir, config.label, pid, mask, on_failure)
    except OSError:
        return None
