"""Protocol traces: every JSON-RPC frame of a run, in and out, one JSON object per line.

A trace is a bug report: `{"t": seconds since the run started, "dir": "out" | "in", "frame": ...}`.
Values the preset passed explicitly in `env` are masked wherever they appear.
"""

from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path
from typing import IO, Any

from .masking import SecretMask


class TraceWriter:
    def __init__(self, path: Path, mask: SecretMask) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._file: IO[str] = open(path, "w", encoding="utf-8")  # noqa: SIM115 - closed in close()
        self._started = time.monotonic()
        self._mask = mask

    @classmethod
    def for_run(cls, trace_dir: str, label: str, pid: int, mask: SecretMask) -> TraceWriter:
        safe = re.sub(r"[^A-Za-z0-9_.-]+", "-", label).strip("-") or "agent"
        stamp = time.strftime("%Y%m%d-%H%M%S")
        return cls(Path(os.path.expanduser(trace_dir)) / f"{safe}-{stamp}-{pid}.jsonl", mask)

    def observe(self, event: Any) -> None:
        """An SDK stream observer: `event.direction` and `event.message`."""
        if self._file.closed:
            return
        direction = "out" if event.direction.value == "outgoing" else "in"
        line = json.dumps(
            {"t": round(time.monotonic() - self._started, 6), "dir": direction, "frame": event.message},
            separators=(",", ":"),
        )
        self._file.write(self._mask(line) + "\n")

    def close(self) -> None:
        self._file.close()


def read_trace(path: str | Path) -> list[dict[str, Any]]:
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]
