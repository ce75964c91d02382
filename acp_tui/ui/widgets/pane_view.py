"""A pane drawn in one piece: its header row, the prompt it answers, the answer, and the lines under
it, all rendered by one widget with Textual's line API.

A pane used to be a dozen widgets (a badge, a clock, a button, a view, a log, five lines of text):
sixteen panes were two hundred widgets, and every repaint of the screen, every zoom and every
class toggled on a pane (its state) restyled, placed and painted all of them. Here what a pane
shows is data (`PaneContent`: its sections, its answer as an `AnswerDocument`, its stderr's last
lines) and one widget (`PaneView`) lays it out in its own rows and paints the rows that changed:

- A section that keeps its number of rows repaints those rows only (the clock: one row); one that
  grows or shrinks repaints the pane, never lays out the screen (the pane's size is the grid's).
- The state's colour is the border's, set inline on the pane (no class: a class is a stylesheet
  pass); the badge is a styled cell range of the header row.
- A pane that is out of sight (scrolled away, under a dialog, under the zoom) paints nothing and
  its answer takes no step: what changed meanwhile is painted when it is next drawn.

The zoom is another `PaneView` (`ZoomView`, one per screen) that draws the focused pane's content
over the grid at the screen's size: nothing of the grid is restyled or laid out again but the zoom.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.content import Content
from textual.css.types import EdgeType
from textual.geometry import Region
from textual.scrollbar import ScrollBarRender
from textual.selection import Selection
from textual.strip import Strip
from textual.widget import Widget

from acp_tui import compat
from acp_tui.core.text import visible
from acp_tui.ui.summary import usage_summary
from acp_tui.ui.widgets.answer_document import AnswerDocument, StripCache
from acp_tui.ui.widgets.answer_view import in_sight, with_selection
from acp_tui.ui.widgets.context_gauge import gauge_text
from acp_tui.ui.widgets.pane_rows import FOOT, Head, PaneRows, Part
from acp_tui.ui.widgets.status_badge import STATE_COLOURS, colour_key, label

if TYPE_CHECKING:
    from textual.app import App

STDERR_LINES = 500  # kept of a run's stderr
SCROLL_LINES = 3  # a turn of the mouse wheel


@dataclass
class PaneContent:
    """What a pane shows, section by section. Its `RunPane` fills it; the view showing it now (the
    pane, or the zoom) draws it. The answer document asks that view (`AnswerHost`) where it is."""

    viewer: PaneView
    title: Content = field(default_factory=Content)
    subtitle: Content = field(default_factory=Content)
    head: Head = field(default_factory=Head)
    prompt: str = ""  # the conversation's opening prompt: its first line, or whole when there is room
    parts: dict[str, Part] = field(default_factory=lambda: {name: Part() for name in FOOT})
    stderr: deque[str] = field(default_factory=lambda: deque(maxlen=STDERR_LINES))
    stderr_shown: bool = False
    top: int = 0  # the answer's first line shown, once scrolled up...
    pinned: bool = True  # ...else it follows the end
    answer: AnswerDocument = field(init=False)

    def __post_init__(self) -> None:
        self.answer = AnswerDocument(self)

    @property
    def state(self) -> str:
        return self.head.state

    def show(self, name: str, part: Part) -> None:
        if self.parts[name] != part:
            self.parts[name] = part
            self.viewer.part_changed(name)

    def show_head(self, head: Head) -> None:
        if head != self.head:
            state_changed = head.state != self.head.state
            self.head = head
            self.viewer.part_changed("head")
            if state_changed:
                self.viewer.show_border()

    def show_titles(self, title: Content, subtitle: Content) -> None:
        if (title, subtitle) != (self.title, self.subtitle):
            self.title, self.subtitle = title, subtitle
            self.viewer.show_border()

    def add_stderr(self, lines: list[str]) -> None:
        self.stderr.extend(lines)
        if self.stderr_shown:
            self.viewer.part_changed("stderr")

    def toggle_stderr(self) -> None:
        self.stderr_shown = not self.stderr_shown
        self.viewer.part_changed("stderr")

    # What the answer document asks of its view (`AnswerHost`) --------------------------------

    @property
    def app(self) -> App[object]:
        return self.viewer.app

    def answer_rows(self) -> int:
        return self.viewer.answer_rows()

    def answer_pinned(self) -> bool:
        return self.pinned

    def answer_in_sight(self) -> bool:
        return self.viewer.in_sight()

    def answer_changed(self) -> None:
        self.viewer.answer_changed()


class PaneView(Widget):
    """Draws a `PaneContent` at its own size: one widget, its rows painted by the line API."""

    COMPONENT_CLASSES = {
        *("pane--muted", "pane--asked", "pane--failed", "pane--cancel", "pane--rule"),
        *("pane--gauge", "pane--warn", "pane--full"),
    }
    DEFAULT_CSS = """
    PaneView {
        border: round $panel-lighten-2;
        border-title-color: $text;
        border-title-style: bold;
        border-subtitle-color: $text-muted;
        padding: 0 1;
        height: 1fr;
        scrollbar-size-vertical: 1;
        &:focus, &.-zoom { border-title-style: bold reverse; }
        & > .pane--muted { color: $text-muted; }
        & > .pane--asked { color: $text-muted; text-style: italic; }
        & > .pane--failed { color: #e5484d; text-style: bold; }
        & > .pane--cancel { background: $error; color: $button-color-foreground; text-style: bold; }
        & > .pane--rule { color: $panel-lighten-2; }
        & > .pane--gauge { color: $text-muted; }
        & > .pane--warn { color: $warning; }
        & > .pane--full { color: $error; }
    }
    """

    FULL = False  # the zoom: the whole prompt, and the stderr sharing the room with the answer

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self._content: PaneContent | None = None
        self._strips: StripCache | None = None
        self.rows = PaneRows(self, full=self.FULL)
        self._stale = False  # changed while out of sight: what Textual kept of it is stale
        self._framed = False  # this frame's style and scrollbar are made (at its first row painted)
        self._line_style = Style()
        self._bar: list[Segment] = []  # this frame's scrollbar, a cell per answer row

    # What it shows ---------------------------------------------------------------------------

    @property
    def content(self) -> PaneContent | None:
        return self._content

    def show_content(self, content: PaneContent | None) -> None:
        """Draw `content` from now on (the zoom moves from pane to pane)."""
        self._content = content
        self._strips = StripCache(content.answer) if content is not None else None
        self.rows.content = content
        self.rows.forget()
        if content is not None:
            content.viewer = self
            content.answer.fit(self._answer_width())
            self.show_border()
        self._repaint()

    def in_sight(self) -> bool:
        """Whether a repaint would be seen now."""
        content = self._content
        return content is not None and content.viewer is self and in_sight(self)

    def show_border(self) -> None:
        """The state's colour on the border (heavy while focused or zoomed, thick for an error),
        and the titles on it: inline styles of this one widget, no stylesheet pass."""
        content = self._content
        if content is None:
            return
        key = colour_key(content.state)
        kind: EdgeType = "thick" if key == "error" else "heavy" if self.rows.whole_prompt else "round"
        self.styles.border = (kind, STATE_COLOURS[key])
        self.border_title = content.title
        self.border_subtitle = content.subtitle

    def watch_has_focus(self, has_focus: bool) -> None:
        """Focused, the border is heavy and the whole prompt shows. (Not `on_focus`: a subclass's
        handler runs before Textual's own sets `has_focus`.)"""
        super().watch_has_focus(has_focus)
        self.show_border()
        self.part_changed("asked")

    def shown(self, name: str) -> str:
        """What part `name` of the pane says, as plain text: `state`, `usage`, `gauge`, `clock`, `asked`,
        `error`, `failed`, `stats`, `worktree`, `stderr` (the answer: `content.answer.text`)."""
        content = self._content
        if content is None:
            return ""
        head = content.head
        if name in ("state", "usage", "gauge", "clock"):
            said = {"state": label(head.state), "usage": usage_summary(head.usage), "clock": head.clock}
            return gauge_text(head.gauge) if name == "gauge" else said[name]
        if name == "stderr":
            return "\n".join(visible(line) for line in content.stderr)
        part = self.rows.part(name, content, self.content_region.width)
        return "\n".join(line.plain for line in part.lines)

    # Changes ---------------------------------------------------------------------------------

    def part_changed(self, name: str) -> None:
        """A section says something else: its rows are repainted, or the pane if it has more or
        fewer rows now (a layout of its own rows, not of the screen)."""
        self._repaint(*self.rows.changed(name))

    def answer_changed(self) -> None:
        layout = self.rows.laid_out
        if layout is None:
            self._repaint()
        else:
            self._repaint(layout.answer_top, layout.answer_rows)

    def _repaint(self, top: int = 0, rows: int = 0) -> None:
        """Rows `top` to `top + rows` of the content area (all of it for 0 rows), if in sight; else
        they are painted when the pane is next drawn (Textual reflows the whole screen to place a
        repainted widget that is out of sight, and under a dialog it renders the dimmed screen)."""
        if not self.is_mounted:
            return
        if self.region.area and not self.in_sight():  # (one not placed yet is asked to paint: it will)
            self._stale = True
        elif rows and not self._stale:
            self.refresh(Region(0, top, self.content_region.width, rows))
        else:  # all of it: rows changed while out of sight are not painted by a repaint of others
            self.refresh()

    def on_resize(self) -> None:
        self.rows.forget()
        if self._content is not None and self._content.viewer is self:
            self._content.answer.fit(self._answer_width())

    def _answer_width(self) -> int:
        return max(0, self.content_region.width - 1)  # the scrollbar's column

    # Layout ----------------------------------------------------------------------------------

    def answer_rows(self) -> int:
        return self.rows.layout().answer_rows if self.content_region.height else 0

    # The line API ----------------------------------------------------------------------------

    def render_lines(self, crop: Region) -> list[Strip]:
        if self._stale:  # changed while out of sight: Textual's lines of it are stale
            self._stale = False
            compat.forget_painted_lines(self)
        content = self._content
        if content is not None and content.viewer is self:
            content.answer.painted()
        self._framed = False
        lines = super().render_lines(crop)
        if self._framed and content is not None and self._strips is not None:  # strips near the view are kept
            rows = self.rows.layout().answer_rows
            self._strips.keep_near(self._answer_top(content, rows), rows)
        return lines

    def _frame(self) -> None:
        """The frame's style and scrollbar, made at its first row painted: Textual asks every pane
        of the grid for its lines at each frame that paints any of them, and most panes keep all
        theirs (nothing is made for those)."""
        self._framed = True
        self._line_style = self.rich_style  # once a frame: it walks every ancestor
        content = self._content
        self._bar = self._scrollbar(content) if content is not None and content.viewer is self else []

    def render_line(self, y: int) -> Strip:
        if not self._framed:
            self._frame()
        width = self.content_region.width
        if self._content is None or self._content.viewer is not self:
            return Strip.blank(width, self._line_style)
        layout = self.rows.layout()
        if y >= len(layout.rows):
            return Strip.blank(width, self._line_style)
        name, row = layout.rows[y]
        if name == "answer":
            return self._answer_row(row, width)
        rows = self.rows.section(name)
        return rows[row] if row < len(rows) else Strip.blank(width, self._line_style)

    def _answer_top(self, content: PaneContent, rows: int) -> int:
        bottom = max(0, content.answer.height - rows)
        return bottom if content.pinned else min(content.top, bottom)

    def _answer_row(self, row: int, width: int) -> Strip:
        content, strips = self._content, self._strips
        assert content is not None and strips is not None
        rows = self.rows.layout().answer_rows
        line_no = self._answer_top(content, rows) + row
        answer_width = width - 1
        strip = strips.strip(line_no, answer_width, self._line_style)
        strip = Strip.blank(answer_width, self._line_style) if strip is None else strip
        strip = with_selection(self, strip, line_no, answer_width)
        bar = self._bar[row] if row < len(self._bar) else Segment(" ", self._line_style)
        return Strip.join([strip, Strip([bar], 1)])

    def _scrollbar(self, content: PaneContent) -> list[Segment]:
        rows = self.rows.layout().answer_rows
        height = content.answer.height
        if height <= rows or not rows:
            return []
        styles = self.styles
        background = styles.scrollbar_background
        bar = ScrollBarRender.render_bar(
            size=rows,
            virtual_size=height,
            window_size=rows,
            position=self._answer_top(content, rows),
            back_color=background.rich_color,
            bar_color=(background + styles.scrollbar_color).rich_color,
        ).segments
        # Textual's scrollbar widget acts on its cells' actions; here a click is the pane's own.
        return [Segment(cell.text, cell.style and cell.style.clear_meta_and_links()) for cell in bar]

    # Scrolling and the mouse -----------------------------------------------------------------

    def action_scroll_answer(self, where: str) -> None:
        """`up`, `down`, `page_up`, `page_down`, `home` or `end` (which follows the answer again)."""
        if self._content is None:
            return
        rows, top, bottom = self._scroll_range(self._content)
        step = {"up": -1, "down": 1, "page_up": -rows, "page_down": rows, "home": -top, "end": bottom}
        self._scroll_answer_to(self._content, top + step[where], bottom)

    def _scroll_range(self, content: PaneContent) -> tuple[int, int, int]:
        """The answer's rows shown, its first line shown, and the last first line there can be."""
        rows = max(1, self.answer_rows())
        return rows, self._answer_top(content, rows), max(0, content.answer.height - rows)

    def _scroll_answer_to(self, content: PaneContent, top: int, bottom: int) -> None:
        content.top = max(0, min(top, bottom))
        content.pinned = content.top >= bottom
        if not content.pinned:
            content.answer.render_range(content.top, self.answer_rows())
        self.answer_changed()

    def _wheel(self, event: events.MouseScrollDown | events.MouseScrollUp, lines: int) -> None:
        """The answer scrolls under the wheel; at its end the grid does."""
        if self._content is None:
            return
        _, top, bottom = self._scroll_range(self._content)
        if top > 0 if lines < 0 else top < bottom:
            event.stop()
            self._scroll_answer_to(self._content, top + lines, bottom)

    def on_mouse_scroll_down(self, event: events.MouseScrollDown) -> None:
        self._wheel(event, SCROLL_LINES)

    def on_mouse_scroll_up(self, event: events.MouseScrollUp) -> None:
        self._wheel(event, -SCROLL_LINES)

    def on_click(self, event: events.Click) -> None:
        """A click on the scrollbar pages the answer towards it."""
        offset = event.get_content_offset(self)
        layout, content = self.rows.laid_out, self._content
        if offset is None or layout is None or content is None or offset.x != self.content_region.width - 1:
            return
        row = offset.y - layout.answer_top
        if 0 <= row < layout.answer_rows and self._bar:
            thumb = [i for i, segment in enumerate(self._bar) if segment.style and segment.style.color]
            self.action_scroll_answer("page_up" if thumb and row < thumb[0] else "page_down")

    def get_selection(self, selection: Selection) -> tuple[str, str] | None:
        """The text of the answer selected with the mouse, as shown (the rendered lines)."""
        return (self._content.answer.selected_text(selection), "\n") if self._content else None

    def selection_updated(self, selection: Selection | None) -> None:
        self.answer_changed()


class ZoomView(PaneView):
    """The zoom: the focused pane's content over the whole grid, drawn at the screen's size. The
    pane keeps the focus (its keys act as before); only what is drawn moves here."""

    DEFAULT_CSS = """
    ZoomView { layer: zoom; dock: top; height: 100%; margin-bottom: 1; display: none; }
    """
    FULL = True

    def __init__(self) -> None:
        super().__init__(id="zoom", classes="-zoom")
        self.subject: PaneView | None = None

    def show(self, pane: PaneView | None) -> None:
        """Draw `pane` (None: the zoom ends, and the pane draws itself again)."""
        previous, self.subject = self.subject, pane
        if previous is not None and previous is not pane and previous.content is not None:
            previous.show_content(previous.content)
        self.display = pane is not None  # a layout only when the zoom comes or goes
        self.show_content(pane.content if pane is not None else None)

    async def action_cancel(self) -> None:
        """Cancel, clicked in the zoom: the zoomed pane's."""
        if self.subject is not None:
            await self.subject.run_action("cancel")
