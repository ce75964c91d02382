"""The prompt as the first frame shows it, until the text box is there.

Importing and mounting Textual's TextArea (`ui.widgets.prompt_area`) is about 80 M instructions, a
fifth of the first frame. The first frame draws this instead, as the text box will draw it: the
same text, wrapped at the same places, its last line highlighted as the cursor's, the cursor at
the end. Right after that frame the prompt bar mounts the text box in its place
(`PromptBar.make_prompt`); a key typed meanwhile waits for it (`KeyOrder.hold`), so none is lost
or lands elsewhere.
"""

from __future__ import annotations

from itertools import pairwise
from typing import ClassVar

from rich.segment import Segment
from rich.style import Style
from textual.geometry import Size
from textual.strip import Strip
from textual.widget import Widget

from acp_tui import compat


class PromptStandIn(Widget, can_focus=True):
    COMPONENT_CLASSES: ClassVar[set[str]] = {"stand-in--cursor", "stand-in--cursor-line"}
    # TextArea's own rules for what it draws here (compact, no gutter, no selection).
    DEFAULT_CSS = """
    PromptStandIn {
        padding: 0 1;
        color: $foreground;
        background: $surface;
        & .stand-in--cursor { text-style: $input-cursor-text-style; }
        & .stand-in--cursor-line { background: $boost; }
        &:ansi .stand-in--cursor {
            color: $input-cursor-foreground;
            background: $input-cursor-background;
            text-style: reverse;
        }
        &:dark .stand-in--cursor { color: $input-cursor-foreground; background: $input-cursor-background; }
    }
    """

    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text

    @staticmethod
    def can_draw(text: str) -> bool:
        """Text whose lines this draws as the text box does (a tab or a CR the box expands its own way)."""
        return "\t" not in text and "\r" not in text

    def _rows(self, width: int) -> list[tuple[str, bool]]:
        """The rows the text takes at `width` (a cell kept for the cursor at a line's end, as the text
        box keeps it): each row's text, and whether it is of the cursor's (the last) line."""
        wrap = max(0, width - 1)
        lines = self.text.split("\n")
        rows: list[tuple[str, bool]] = []
        for index, line in enumerate(lines):
            cuts = [0, *(compat.wrap_offsets(line, wrap) if wrap else []), len(line)]
            last = index == len(lines) - 1
            rows += [(line[start:end], last) for start, end in pairwise(cuts)]
        return rows

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return len(self._rows(width))

    def render_line(self, y: int) -> Strip:
        width = self.content_size.width
        rows = self._rows(width)
        y += max(0, len(rows) - self.content_size.height)  # scrolled to the cursor, as the box is
        base = self.rich_style
        if y >= len(rows):
            return Strip.blank(width, base)
        row, cursor_line = rows[y]
        style = self.get_component_rich_style("stand-in--cursor-line") if cursor_line else Style()
        segments = [Segment(row, style)]
        if cursor_line and y == len(rows) - 1 and self.has_focus:
            segments.append(Segment(" ", style + self._cursor_style(base)))
        strip = Strip(segments).extend_cell_length(width, style if cursor_line else base)
        return strip.apply_style(base)

    def _cursor_style(self, base: Style) -> Style:
        """The text box's cursor: its component style, else the background's inverse."""
        style = self.get_component_rich_style("stand-in--cursor")
        if style:
            return style
        return Style(color=base.bgcolor, bgcolor=base.color)
