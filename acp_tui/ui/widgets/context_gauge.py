"""How full the agent's context window is: `usage_update`'s `used` of `size`, as a bar and a percent.

Shown once the agent reports a size. Past 80 % it warns, past 95 % it is an error's colour: the
agent will soon compact or refuse.
"""

from __future__ import annotations

from textual.reactive import reactive
from textual.widgets import Static

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


class ContextGauge(Static):
    DEFAULT_CSS = """
    ContextGauge {
        width: auto;
        height: 1;
        color: $text-muted;
        &.-warn { color: $warning; }
        &.-full { color: $error; }
    }
    """

    usage: reactive[Usage | None] = reactive(None, init=False)

    def watch_usage(self, usage: Usage | None) -> None:
        fraction = usage.used / usage.size if usage is not None and usage.size > 0 else 0.0
        self.set_class(WARN <= fraction < FULL, "-warn")
        self.set_class(fraction >= FULL, "-full")
        self.update(gauge_text(usage))
