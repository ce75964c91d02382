"""Importing the ACP SDK, which is most of what a run waits for before its first frame.

`import acp` builds a few hundred pydantic models, and pydantic reads each one's source again to
turn attribute docstrings into field descriptions (`use_attribute_docstrings`): measured here, 0.6 s
of a 1.65 s import. Those descriptions only feed JSON schemas, which nobody here asks for, so the
step is skipped while the SDK loads. It touches a private pydantic function: if that ever moves,
the import simply takes its usual time.

The garbage collector is paused meanwhile: the import makes a few hundred thousand objects that all
live on, and collecting while they are made only walks them again and again (30 to 50 ms here).
"""

from __future__ import annotations

import contextlib
import gc
import sys
import threading
from collections.abc import Iterator
from typing import Any

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
    with _lock, _collector_paused():
        try:
            from pydantic._internal import _fields

            original = _fields._update_fields_from_docstrings
        except (ImportError, AttributeError):
            import acp

            return

        def skip(*args: Any, **kwargs: Any) -> None:
            return None

        _fields._update_fields_from_docstrings = skip
        try:
            import acp  # noqa: F401
        finally:
            _fields._update_fields_from_docstrings = original
