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


# claude-agent-sdk --------------------------------------------------------------------------------


def claude_bundled_cli() -> str | None:
    """The Claude Code CLI the SDK's wheel bundles, where the SDK itself looks for it first
    (`SubprocessCLITransport._find_bundled_cli`); None when this wheel has none. We start the CLI
    ourselves (see `acp_tui.claude.transport`), so we need its path; retired if the SDK ever says
    it publicly."""
    import importlib.util
    import platform
    from pathlib import Path

    spec = importlib.util.find_spec("claude_agent_sdk")  # found, not imported: that takes a second
    if spec is None or not spec.submodule_search_locations:
        return None
    name = "claude.exe" if platform.system() == "Windows" else "claude"
    bundled = Path(spec.submodule_search_locations[0]) / "_bundled" / name
    return str(bundled) if bundled.is_file() else None
