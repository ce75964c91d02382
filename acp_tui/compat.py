"""Every use of a pinned library's private parts, in one place.

Each entry says why we need it and what upstream change would retire it; `tests/test_compat.py`
fails loudly when a pinned version no longer has what an entry relies on. Libraries are imported
inside the functions, so the core may use its entries without importing textual.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator
from typing import Any

# textual -----------------------------------------------------------------------------------------

# textual-serve -----------------------------------------------------------------------------------

# pydantic ----------------------------------------------------------------------------------------


@contextlib.contextmanager
def attribute_docstrings_skipped() -> Iterator[None]:
    """While `import acp` runs: pydantic builds a few hundred models and, for each, reads its source
    again to turn attribute docstrings into field descriptions (`use_attribute_docstrings`), 0.6 s
    of a 1.65 s import measured here; those descriptions only feed JSON schemas nobody asks for.
    Relies on the private `pydantic._internal._fields._update_fields_from_docstrings`; if it has
    moved, nothing is skipped (the import takes its usual time). Retired by a public switch in
    pydantic to leave the docstrings unread, or by the SDK no longer asking for them."""
    try:
        from pydantic._internal import _fields

        original = _fields._update_fields_from_docstrings
    except (ImportError, AttributeError):
        yield
        return

    def skip(*args: Any, **kwargs: Any) -> None:
        return None

    _fields._update_fields_from_docstrings = skip
    try:
        yield
    finally:
        _fields._update_fields_from_docstrings = original


# asyncio -----------------------------------------------------------------------------------------


class ExitNoticingProtocol(asyncio.subprocess.SubprocessStreamProtocol):
    """A child's protocol that notices the child's exit as it happens (`exited`). Python 3.11's
    `Process.wait()` also waits for every pipe to close, which never happens while a wrapper's
    grandchild still holds them. Relies on the undocumented `SubprocessStreamProtocol` (its
    `process_exited` hook) and `asyncio.subprocess.Process(transport, protocol, loop)`, the way
    `create_subprocess_exec` builds one (see `process_of`). Retired by a public way to await a
    child's exit whatever holds its pipes."""

    def __init__(self, limit: int, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__(limit=limit, loop=loop)
        self.exited: asyncio.Future[None] = loop.create_future()

    def process_exited(self) -> None:
        super().process_exited()
        if not self.exited.done():
            self.exited.set_result(None)


def process_of(
    transport: asyncio.SubprocessTransport, protocol: ExitNoticingProtocol, loop: asyncio.AbstractEventLoop
) -> asyncio.subprocess.Process:
    """The `Process` over a transport made by `loop.subprocess_exec` with `ExitNoticingProtocol`
    (what `create_subprocess_exec` does inside)."""
    return asyncio.subprocess.Process(transport, protocol, loop)
