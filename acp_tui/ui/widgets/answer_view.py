"""An answer on its own, as the compare screen shows each: an `AnswerDocument` in a scrolling view.

The document does the work (what is rendered, and when: `answer_document`); the view gives it a
width and a window, and paints the lines in that window with Textual's line API. A growing answer
changes only this view's scroll range and scrollbar, never the screen's layout (a layout is a
reflow of the whole screen, 40 to 70 ms with 16 panes): only the first overflow, which brings the
scrollbar, lays out. A view out of sight is not repainted (Textual reflows the screen to place it);
it is painted afresh when it is next drawn.
"""

from __future__ import annotations

from rich.style import Style
from textual.geometry import Region, Size
from textual.scroll_view import ScrollView
from textual.selection import Selection
from textual.strip import Strip
from textual.widget import Widget

from acp_tui import compat
from acp_tui.ui.widgets.answer_document import AnswerDocument, StripCache


class AnswerView(ScrollView, can_focus=False):
    """Markdown that grows at the end: `append` as it streams, `finish` when it is whole."""

    DEFAULT_CSS = """
    AnswerView {
        height: 1fr;
        scrollbar-gutter: stable;
        scrollbar-size-vertical: 1;
        overflow-x: hidden;
    }
    """

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.document = AnswerDocument(self)
        self._strips = StripCache(self.document)
        self._line_style = Style()
        self._unpainted = False  # changed while out of sight: what Textual kept of it is stale

    @property
    def text(self) -> str:
        """The answer as shown: its tail, about `DISPLAY_CAP` characters at most."""
        return self.document.text

    def append(self, fragment: str) -> None:
        self.document.append(fragment)

    def finish(self) -> None:
        self.document.finish()

    # What the document asks of its view (`AnswerHost`) ----------------------------------------

    def answer_rows(self) -> int:
        return self.scrollable_content_region.height

    def answer_pinned(self) -> bool:
        return self.pinned

    def answer_in_sight(self) -> bool:
        return in_sight(self)

    def answer_changed(self) -> None:
        if in_sight(self):
            self.refresh()
        else:
            self._unpainted = True
        self._sync_size()

    def _sync_size(self) -> None:
        """The scroll range for the lines there are now: this view's scrollbar, not a layout of the
        screen (its size does not change), unless the scrollbar appears or goes."""
        size = Size(self.document.width, self.document.height)
        if size == self.virtual_size:
            return
        if not self.is_mounted or not self.container_size:
            self.virtual_size = size
            return
        scrollbar = self.show_vertical_scrollbar
        self.set_reactive(ScrollView.virtual_size, size)
        self._scroll_update(size)  # Textual's own step after a size change: scrollbars, scroll bounds
        if self.show_vertical_scrollbar != scrollbar:
            self.refresh(layout=True)  # the scrollbar is placed by a layout
        elif self.is_anchored and not self._anchor_released:  # what a layout does for an anchored view
            self.scroll_target_y = self.scroll_y = self.max_scroll_y

    def on_resize(self) -> None:
        self.document.fit(self.scrollable_content_region.width)

    # The line API ----------------------------------------------------------------------------

    @property
    def pinned(self) -> bool:
        """Following the end of the answer (until the user scrolls up)."""
        return self.is_anchored and self.scroll_y >= self.max_scroll_y

    def render_lines(self, crop: Region) -> list[Strip]:
        if self._unpainted:  # changed while out of sight: Textual's lines of it are stale
            self._unpainted = False
            compat.forget_painted_lines(self)
        self.document.painted()
        self._line_style = self.rich_style  # once a frame, not once a line: it walks every ancestor
        strips = super().render_lines(crop)
        self._strips.keep_near(self._top(), self.size.height)
        return strips

    def _top(self) -> int:
        """The answer's line shown first."""
        if self.pinned:  # the newest lines, even before the scroll position has caught up
            return max(0, self.document.height - self.scrollable_content_region.height)
        return self.scroll_offset.y

    def render_line(self, y: int) -> Strip:
        width = self.scrollable_content_region.width
        line_no = self._top() + y
        strip = self._strips.strip(line_no, width, self._line_style)
        if strip is None:
            return Strip.blank(width, self._line_style)
        return with_selection(self, strip, line_no, width)

    def get_selection(self, selection: Selection) -> tuple[str, str] | None:
        """The text selected with the mouse, as shown (the rendered lines, not the Markdown)."""
        return self.document.selected_text(selection), "\n"

    def selection_updated(self, selection: Selection | None) -> None:
        self.refresh()


def in_sight(widget: Widget) -> bool:
    """Whether a repaint of `widget` would be seen: its screen is the one on top (not under a
    dialog) and the widget is at least partly within it."""
    if not widget.is_attached:  # being removed, or the app is ending
        return False
    screen = widget.screen
    return screen is widget.app.screen and screen.can_view_partial(widget)


def with_selection(widget: Widget, strip: Strip, line_no: int, width: int) -> Strip:
    """The answer's line `line_no` with the part of it selected with the mouse highlighted."""
    selection = widget.text_selection
    if selection is None or (span := selection.get_span(line_no)) is None:
        return strip
    start, end = span
    end = width if end == -1 else min(end, width)
    if end <= start:
        return strip
    before, chosen, after = strip.divide([start, end, width])
    style = widget.screen.get_component_rich_style("screen--selection")
    return Strip.join([before, chosen.apply_style(style), after])
