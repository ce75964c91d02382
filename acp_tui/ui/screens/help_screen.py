"""Every key of the app, from the one key table (`acp_tui.ui.keys`; the README's table says the same)."""

from __future__ import annotations

from rich.cells import cell_len
from rich.segment import Segment
from textual.app import ComposeResult
from textual.binding import Binding
from textual.content import Content
from textual.geometry import Size
from textual.strip import Strip
from textual.widget import Widget

from acp_tui.ui import keys
from acp_tui.ui.screens._dialog import DialogScreen

KEY_WIDTH = 18  # the key column; the other takes the rest, two cells after it
GUTTER = 2


def _wrapped(text: str, width: int) -> list[str]:
    return [line.plain for line in Content(text).wrap(max(1, width))]


class KeyTable(Widget):
    """The table of keys, drawn as lines by one widget: a section's title (after a blank line), then
    a row per key, each column wrapped as a grid of labels would wrap it (ninety labels were a
    stylesheet pass each and a layout of them all at the help's first opening)."""

    COMPONENT_CLASSES = {"key-table--key", "key-table--section"}
    DEFAULT_CSS = """
    KeyTable {
        height: auto;
        & > .key-table--key { color: $text-accent; }
        & > .key-table--section { text-style: bold; }
    }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._lines: tuple[int, list[Strip]] | None = None  # the width they were made for, and them

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return len(self._layout(width))

    def _layout(self, width: int) -> list[Strip]:
        if self._lines is not None and self._lines[0] == width:
            return self._lines[1]
        base = self.rich_style
        key = base + self.get_component_rich_style("key-table--key", partial=True)
        section = base + self.get_component_rich_style("key-table--section", partial=True)
        lines: list[Strip] = []

        def line(*segments: Segment) -> None:
            lines.append(Strip(segments).adjust_cell_length(width, base))

        for title, rows in keys.help_sections():  # our own text only
            if lines:  # a blank line between sections
                line()
            line(Segment(title, section))
            for shown, what in rows:
                left, right = _wrapped(shown, KEY_WIDTH), _wrapped(what, width - KEY_WIDTH - GUTTER)
                for i in range(max(len(left), len(right))):
                    cell = left[i] if i < len(left) else ""
                    line(
                        Segment(cell, key),
                        Segment(" " * (KEY_WIDTH + GUTTER - cell_len(cell)), base),
                        Segment(right[i] if i < len(right) else "", base),
                    )
        self._lines = (width, lines)
        return lines

    def render_line(self, y: int) -> Strip:
        width = self.content_region.width
        lines = self._layout(width)
        return lines[y] if y < len(lines) else Strip.blank(width, self.rich_style)

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._lines = None  # a theme's colours


class HelpScreen(DialogScreen[None]):
    DEFAULT_CSS = """
    HelpScreen {
        & > #dialog { max-width: 100; }
    }
    """
    BINDINGS = [Binding("escape,q,question_mark", "close", "Close")]
    DIALOG_FOCUSABLE = True  # nothing else to focus: the keys scroll it

    def compose_dialog(self) -> ComposeResult:
        yield KeyTable(id="keys")

    def on_mount(self) -> None:
        dialog = self.query_one("#dialog")
        dialog.border_title = "every key (escape: close)"
        dialog.focus()
