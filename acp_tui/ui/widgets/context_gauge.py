"""How full the agent's context window is: `usage_update`'s `used` of `size`, as a bar and a percent.

Shown once the agent reports a size, in the pane's header row (`pane_rows`). Past 80 % it warns,
past 95 % it is an error's colour: the agent will soon compact or refuse.
"""

from __future__ import annotations

from acp_tui.core.model import Usage

BLOCKS = " ▏▎▍▌▋▊▉█"  # eighths of a cell
WARN, FULL = 0.8, 0.95


def bar(fraction: float, width: int) -> str:
    """`fraction` (0-1) of `width` cells, to an eighth of a cell."""
    eighths = round(max(0.0, min(1.0, fraction)) * width * 8)
    whole, part = divmod(eighths, 8)
    return ("█" * whole + (BLOCKS[part] if part else "")).ljust(width, " ")


def gauge_text(usage: Usage | None, width: int = 6) -> str:
    """`ctx ▕██    ▏ 34%`, or nothing before the agent reports a context size."""
    if usage is None or usage.size <= 0:
        return ""
    fraction = usage.used / usage.size
    return f"ctx ▕{bar(fraction, width)}▏ {min(999, round(fraction * 100))}%"


def gauge_level(usage: Usage | None) -> str:
    """How it is drawn: `gauge` (muted), `warn` past WARN, `full` past FULL."""
    fraction = usage.used / usage.size if usage is not None and usage.size > 0 else 0.0
    return "full" if fraction >= FULL else "warn" if fraction >= WARN else "gauge"
