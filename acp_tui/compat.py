"""Every use of a pinned library's private parts, in one place.

Each entry says why we need it and what upstream change would retire it; `tests/test_compat.py`
fails loudly when a pinned version no longer has what an entry relies on. Libraries are imported
inside the functions, so the core may use its entries without importing textual.
"""

from __future__ import annotations

# textual -----------------------------------------------------------------------------------------

# textual-serve -----------------------------------------------------------------------------------

# pydantic ----------------------------------------------------------------------------------------

# asyncio -----------------------------------------------------------------------------------------
