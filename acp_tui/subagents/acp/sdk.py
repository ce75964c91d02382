"""Importing the ACP SDK, which is most of what a run waits for before its first frame.

`import acp` builds a few hundred pydantic models, and pydantic reads each one's source again to
turn attribute docstrings into field descriptions (`use_attribute_docstrings`): measured here, 0.6 s
of a 1.65 s import. Those descriptions only feed JSON schemas, which nobody here asks for, so the
step is skipped while the SDK loads. It touches a private pydantic function: if that ever moves,
the import simply takes its usual time.
"""

from __future__ import annotations

import sys
import threading
from typing import Any

_lock = threading.Lock()


def import_acp() -> None:
    if "acp" in sys.modules:
        return
    with _lock:
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
