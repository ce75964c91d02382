"""Importing the ACP SDK, which is most of what a run waits for before its first frame.

`import acp` builds a few hundred pydantic models; the attribute docstrings pydantic would read for
each are skipped meanwhile (`compat.attribute_docstrings_skipped`: 0.6 s of a 1.65 s import).

The garbage collector is paused meanwhile: the import makes a few hundred thousand objects that all
live on, and collecting while they are made only walks them again and again (30 to 50 ms here).
"""

from __future__ import annotations

import contextlib
import gc
import sys
import threading
from collections.abc import Iterator

from acp_tui.compat import attribute_docstrings_skipped

_lock = threading.Lock()


@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def import_acp() -> None:
    if "acp" in sys.modules:
        return
    with _lock, _collector_paused(), attribute_docstrings_skipped():
        import acp  # noqa: F401
