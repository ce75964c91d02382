"""A provider's optional dependency (`pip install 'acp-tui[PROVIDER]'`): whether it is installed,
and if not, the one line that says what to install. Nothing else breaks without it: only the runs
of that provider end `error` with this line. Nothing is imported here: a run starts its child
first, and pays for the SDK while the child boots."""

from __future__ import annotations

import importlib.util


def missing_extra(module: str, provider: str) -> str | None:
    """None when `module` is installed; else why `provider`'s runs cannot start, in one line."""
    try:
        found = importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a broken install is none
        found = False
    if found:
        return None
    return f"provider \"{provider}\" needs its optional extra: pip install 'acp-tui[{provider}]'"
