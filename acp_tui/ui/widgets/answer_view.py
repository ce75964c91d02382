"""A streaming answer, rendered as Markdown a block at a time: one widget however long it grows.

Textual's `Markdown` widget mounts a widget per block, and each mount costs a stylesheet pass and a
reflow of the whole screen: with a dozen panes streaming at once that froze the screen for seconds.
Here a finished block is rendered once (with Rich's Markdown) to learn its height; only the block
still growing is rendered again; and the screen asks only for the lines it shows (Textual's line
API), so the cost of a frame does not grow with the answer.

How the work is kept small, each measured with 16 panes streaming flat out:
- Text is rendered a slice at a time (`STEP_CHARS`), at most 15 times a second, the growing views
  of the app in rounds on one timer (a few views, then their screen update, then the next few:
  a key waits for one group, not for sixteen views), and the views together spend at most
  `RENDER_SHARE` of the time rendering: sixteen views streaming at once step less often than one
  (about 5 times a second each), instead of taking the whole loop.
- Markdown is parsed once per step; a finished block keeps its tokens for its render.
- Rendered lines are kept only for the blocks last shown or written (`KEEP_LINES`), and rendered
  again if scrolled back to: kept for every block, they were most of the heap, and the garbage
  collector's full passes over them froze the screen for 0.2 s.
- A growing answer changes only its own scroll range and scrollbar, never the screen's layout (a
  layout is a reflow of the whole screen, 40 to 70 ms with 16 panes): only the first overflow,
  which brings the scrollbar, lays out.
- A line is made into a `Strip` (with the offsets mouse selection needs) once, not at every frame:
  a frame of a pinned view mostly shows the lines of the last frame one row higher.
- A view that is off screen is not repainted (Textual reflows the screen to place it), nor one
  under a dialog or another screen (each repaint would render the dimmed screen under the dialog
  again); it is painted afresh when it is next drawn (scrolled into sight, a zoom undone, the
  dialog closed).

What is shown is capped (`DISPLAY_CAP` characters: the tail, under a line saying how much came
before); the run's result keeps the whole answer, and the export writes it.
"""

from __future__ import annotations

import copy
import itertools
import re
import time
import weakref
from bisect import bisect_right
from collections import OrderedDict
from dataclasses import dataclass

from markdown_it import MarkdownIt
from markdown_it.token import Token
from rich.markdown import Markdown as RichMarkdown
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from rich.theme import Theme
from textual.app import App
from textual.geometry import Region, Size
from textual.scroll_view import ScrollView
from textual.selection import Selection
from textual.strip import Strip
from textual.widget import Widget

from acp_tui import compat
from acp_tui.core.text import visible

DISPLAY_CAP = 256 * 1024  # characters of an answer kept on screen (the tail)
STEP_CHARS = 4 * 1024  # new text taken into one rendering step
OPEN_CAP = 8 * 1024  # a block still growing past this is cut, so that no render of it is long
KEEP_LINES = 400  # rendered lines kept (besides the growing block); the rest is rendered again
FLUSH_INTERVAL = 1 / 15  # seconds between rendering steps of the growing answers, at the least...
RENDER_SHARE = 0.1  # ...and long enough that rendering them takes at most this share of the time

# The parser Rich's Markdown uses (a block boundary found here is one there too), made once: Rich
# makes one per document, which cost as much as the rendering.
_parser = MarkdownIt().enable("strikethrough").enable("table")

TASK_ITEM = re.compile(r"^(\s*(?:[-*+]|\d+[.)])\s+)\[([ xX])\](?=\s)", re.MULTILINE)
# Rich's Markdown, made once: a code block's lines wrap at the view's width (Rich's `CodeBlock`), so
# that a narrow pane cuts none of it.
_template = RichMarkdown("")


def markdown_theme(variables: dict[str, str]) -> Theme:
    """Markdown's styles from the app's theme, quieter than the state colours (no magenta)."""

    def colour(name: str, fallback: str) -> str:
        value = variables.get(name, fallback)
        return value[:7] if value.startswith("#") else fallback  # drop alpha; "auto" is no colour

    primary = colour("text-primary", "#57A5E2")
    muted = colour("foreground-darken-1", "#CACACA")
    panel = colour("panel", "#242F38")
    return Theme(
        {
            "markdown.h1": f"bold underline {primary}",
            "markdown.h1.border": primary,
            "markdown.h2": f"bold {primary}",
            "markdown.h3": "bold",
            "markdown.h4": "bold italic",
            "markdown.h5": "italic",
            "markdown.h6": "dim italic",
            "markdown.code": f"{muted} on {panel}",
            "markdown.code_block": f"on {panel}",
            "markdown.block_quote": f"italic {muted}",
            "markdown.list": primary,
            "markdown.item.bullet": f"bold {primary}",
            "markdown.item.number": primary,
            "markdown.hr": "dim",
            "markdown.link": f"underline {primary}",
            "markdown.link_url": f"dim {primary}",
            "markdown.table.border": "dim",
            "markdown.table.header": "bold",
            "markdown.kbd": "bold",
        }
    )


def task_boxes(source: str) -> str:
    """Task list items as check boxes: `- [ ] x` reads `- ☐ x`, `- [x] x` reads `- ☑ x`."""
    return TASK_ITEM.sub(lambda m: m.group(1) + ("☐" if m.group(2) == " " else "☑"), source)


Line = list[Segment]  # plain segments: a `Strip` carries five caches, so strips are made per frame


def rich_markdown(source: str, tokens: list[Token] | None = None) -> RichMarkdown:
    markdown = copy.copy(_template)
    markdown.markup = source
    markdown.parsed = _parser.parse(source) if tokens is None else tokens
    return markdown


@dataclass
class Piece:
    """A block's Markdown source, and how many characters of the answer it stands for."""

    source: str
    covers: int  # less than len(source) when a cut code fence was reopened in front of it
    tokens: list[Token] | None = None  # as parsed by the split, for the first render


@dataclass(eq=False)
class _Block:
    piece: Piece
    height: int = 0  # lines at the view's width (a guess from the last render, at another width)
    width: int = 0  # the width of its last render (0: none yet)
    rendered: int = 0  # lines at `width`
    lines: list[Line] | None = None  # None: not kept (rendered again when shown)


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
        self.text = ""  # the answer as shown: its tail, about DISPLAY_CAP characters at most
        self.omitted = 0  # characters of the answer before `text`
        self._pending: list[str] = []  # appended, not yet in `text`
        self._backlog = ""  # in `text`, not yet rendered
        self._blocks: list[_Block] = []  # finished blocks
        self._starts: list[int] = [0]  # the first line of each finished block, then the growing one's
        self._growing = _Block(Piece("", 0))  # the last block, still growing: rendered at every step
        self._notice: list[Line] = []  # the line saying how much of the answer is not shown
        self._kept: OrderedDict[_Block, None] = OrderedDict()  # blocks with lines, least recent first
        self._width = 0
        self._finished = False
        self._line_style = Style()
        self._unpainted = False  # changed while off screen: what Textual kept of it is stale
        self._strips: dict[int, tuple[tuple[Line, int, Style], Strip]] = {}  # line number -> strip

    # Writing ---------------------------------------------------------------------------------

    def append(self, fragment: str) -> None:
        """Add text at the end. It is rendered soon, with whatever else arrives meanwhile.

        Control characters are made visible here, once: Markdown is rendered as Markdown, but no
        escape sequence the agent wrote can reach the terminal (Rich would pass most through).
        """
        if fragment:
            self._pending.append(visible(fragment))
            self._arm_step()

    def finish(self) -> None:
        """The answer is complete: `text` is whole now, and the rest is rendered without delay."""
        self._finished = True
        self._absorb()
        self._step()

    def go_on(self) -> None:
        """More comes after a finished answer (a follow-up's turn): it streams again."""
        self._finished = False

    def clear(self) -> None:
        self.text = ""
        self.omitted = 0
        self._pending.clear()
        self._backlog = ""
        self._blocks.clear()
        self._kept.clear()
        self._growing = _Block(Piece("", 0))
        self._notice = []
        self._finished = False
        self._reindex()
        self._sync_size()

    def _arm_step(self) -> None:
        _render_clock(self.app).add(self)

    def _absorb(self) -> None:
        """Move what was appended into `text` and the backlog, within the cap."""
        if self._pending:
            fragment = "".join(self._pending)
            self._pending.clear()
            self.text += fragment
            self._backlog += fragment
        excess = len(self.text) - DISPLAY_CAP
        if excess > DISPLAY_CAP // 4:  # forget in steps, not at every fragment
            self._forget(excess)

    def _forget(self, excess: int) -> None:
        """Forget the oldest text: finished blocks, then the growing one, then the backlog's head."""
        forgotten = count = 0
        for block in self._blocks:
            if forgotten >= excess:
                break
            forgotten += block.piece.covers
            self._kept.pop(block, None)
            count += 1
        del self._blocks[:count]
        if forgotten < excess:
            forgotten += self._growing.piece.covers
            self._growing = _Block(Piece("", 0))
        if forgotten < excess:
            cut = excess - forgotten
            self._backlog = self._backlog[cut:]
            forgotten += cut
        self.text = self.text[forgotten:]
        self.omitted += forgotten
        self._render_notice()
        self._reindex()

    def _step(self) -> None:
        """Render a slice of the backlog: the blocks it completes once, the growing one again."""
        self._absorb()
        if not self._width:  # the first resize renders it
            return
        if self._backlog:
            growing = self._growing.piece
            taken, self._backlog = self._backlog[:STEP_CHARS], self._backlog[STEP_CHARS:]
            finished, rest = split_blocks(Piece(growing.source + taken, growing.covers + len(taken)))
            for piece in finished:
                block = _Block(piece)
                self._render_block(block)
                self._blocks.append(block)
                self._starts.append(self._starts[-1] + block.height)
            self._growing.piece = rest
            self._render_block(self._growing, keep=False)
            self._forget_old_lines()
            self._after_change()
        if self._backlog:
            self._arm_step()
        elif self._finished:
            self._after_change()

    # Rendering -------------------------------------------------------------------------------

    def _render_block(self, block: _Block, *, keep: bool = True) -> None:
        block.lines = self._render_lines(block.piece.source, block.piece.tokens)
        block.piece.tokens = None  # used once: a block rendered again (scrolled back to) is parsed again
        block.height = block.rendered = len(block.lines)
        block.width = self._width
        if keep:
            self._kept[block] = None
            self._kept.move_to_end(block)

    def _render_lines(self, source: str, tokens: list[Token] | None = None) -> list[Line]:
        if not source or not self._width:
            return []
        width = self._width
        console = self.app.console
        options = console.options.update(width=width, height=None)
        if "[" in source and TASK_ITEM.search(source):
            source, tokens = task_boxes(source), None
        try:
            with console.use_theme(self._theme()):
                lines = list(Segment.split_lines(console.render(rich_markdown(source, tokens), options)))
        except Exception:  # a renderer bug must not take the pane down: show the text plain
            lines = console.render_lines(Text(source), options, pad=False)
        # Rich sets some blocks apart with blank lines of their own: one gap after each, here.
        while lines and _blank(lines[0]):
            del lines[0]
        while lines and _blank(lines[-1]):
            del lines[-1]
        rendered = [Segment.adjust_line_length(line, width) for line in lines]
        rendered.append([Segment(" " * width)])
        return rendered

    def _theme(self) -> Theme:
        name = self.app.theme
        cached = _themes.get(name)
        if cached is None:
            cached = _themes[name] = markdown_theme(self.app.get_css_variables())
        return cached

    def _forget_old_lines(self) -> None:
        kept_lines = sum(block.height for block in self._kept)
        limit = max(KEEP_LINES, 2 * self.scrollable_content_region.height)
        while kept_lines > limit and self._kept:
            block, _ = self._kept.popitem(last=False)
            block.lines = None
            kept_lines -= block.height

    def _render_notice(self) -> None:
        notice = f"*… {self.omitted:,} earlier characters not shown (ctrl+s exports the whole answer)*"
        self._notice = self._render_lines(notice) if self.omitted else []

    def _reindex(self, *, repaint: bool = True) -> None:
        """Recount where each block starts (after blocks were forgotten or rendered anew)."""
        starts = [len(self._notice)]
        for block in self._blocks:
            starts.append(starts[-1] + block.height)
        self._starts = starts
        if repaint:
            self._after_change()

    def _after_change(self) -> None:
        # Only a view in sight is repainted: Textual reflows the whole screen to place a repainted
        # widget that is off screen, and under a dialog each repaint renders the dimmed screen
        # again. One that is not in sight is painted afresh when it is next drawn.
        if in_sight(self):
            self.refresh()
        else:
            self._unpainted = True
        self._sync_size()

    def _sync_size(self) -> None:
        """The scroll range for the lines there are now: this view's scrollbar, not a layout of the
        screen (its size does not change), unless the scrollbar appears or goes."""
        size = Size(self._width, self._starts[-1] + self._growing.height)
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
        self.fit()

    def fit(self) -> None:
        """A new width: only what is shown is rendered at it (a zoom, a resized terminal, a pane
        that moved); the other blocks keep a height guessed from their last render, and are
        rendered when they are shown."""
        width = self.scrollable_content_region.width
        if width <= 0 or width == self._width:
            return
        old, self._width = self._width, width
        self._render_notice()
        if not old:
            self._reindex()
            self._step()
            self._sync_size()
            return
        for block in self._blocks:
            block.height = (
                block.rendered
                if block.width == width
                else max(1, round(block.rendered * block.width / width))
            )
        self._render_block(self._growing, keep=False)
        shown, index = self._growing.height, len(self._blocks)
        if self.pinned:  # it shows the end: the blocks that fill the view, from the bottom up
            while index > 0 and shown < self.scrollable_content_region.height:
                index -= 1
                self._render_block(self._blocks[index])
                shown += self._blocks[index].height
        self._forget_old_lines()
        self._reindex()

    # The line API ----------------------------------------------------------------------------

    @property
    def pinned(self) -> bool:
        """Following the end of the answer (until the user scrolls up)."""
        return self.is_anchored and self.scroll_y >= self.max_scroll_y

    def render_lines(self, crop: Region) -> list[Strip]:
        if self._unpainted:  # changed while off screen: Textual's lines of it are stale
            self._unpainted = False
            compat.forget_painted_lines(self)
        self._line_style = self.rich_style  # once a frame, not once a line: it walks every ancestor
        strips = super().render_lines(crop)
        height = max(1, self.size.height)
        if len(self._strips) > 4 * height:  # keep the strips of the lines around those shown
            top = self._top()
            self._strips = {n: v for n, v in self._strips.items() if top - height <= n < top + 2 * height}
        return strips

    def _top(self) -> int:
        """The answer's line shown first."""
        if self.pinned:  # the newest lines, even before the scroll position has caught up
            return max(0, self._starts[-1] + self._growing.height - self.scrollable_content_region.height)
        return self.scroll_offset.y

    def render_line(self, y: int) -> Strip:
        width = self.scrollable_content_region.width
        line_no = self._top() + y
        line = self._line(line_no)
        if line is None:
            return Strip.blank(width, self._line_style)
        strip = self._strip(line_no, line, width)
        selection = self.text_selection
        if selection is not None and (span := selection.get_span(line_no)) is not None:
            start, end = span
            end = width if end == -1 else min(end, width)
            if end > start:
                before, chosen, after = strip.divide([start, end, width])
                style = self.screen.get_component_rich_style("screen--selection")
                strip = Strip.join([before, chosen.apply_style(style), after])
        return strip

    def _strip(self, line_no: int, line: Line, width: int) -> Strip:
        """The line as the screen takes it, styled and with the offsets of mouse selection (where
        each cell is in the answer): made again only if the line, the width or the style changed."""
        key = (line, width, self._line_style)
        cached = self._strips.get(line_no)
        if cached is not None and cached[0] == key:
            return cached[1]
        if width != self._width:  # being rendered at a new width: cut or padded meanwhile
            line = Segment.adjust_line_length(line, width)
        base, x, segments = self._line_style, 0, []
        for text, style, _ in line:  # the style and the offsets in one pass: one strip, not three
            offset = Style.from_meta({"offset": (x, line_no)})
            segments.append(Segment(text, base + style + offset if style else base + offset))
            x += len(text)
        strip = Strip(segments, width)
        self._strips[line_no] = (key, strip)
        return strip

    def get_selection(self, selection: Selection) -> tuple[str, str] | None:
        """The text selected with the mouse, as shown (the rendered lines, not the Markdown)."""
        if selection.start is None and selection.end is None:
            return self.text, "\n"
        first = selection.start.y if selection.start is not None else 0
        last = selection.end.y if selection.end is not None else self._starts[-1] + self._growing.height - 1
        lines = ["" for _ in range(first)]
        for line_no in range(first, last + 1):
            line = self._line(line_no)
            lines.append("".join(segment.text for segment in line).rstrip() if line else "")
        return selection.extract("\n".join(lines)), "\n"

    def selection_updated(self, selection: Selection | None) -> None:
        self.refresh()

    def _line(self, line_no: int) -> Line | None:
        for _ in range(len(self._blocks) + 1):
            starts = self._starts
            if line_no < starts[0]:
                return self._notice[line_no]
            if line_no >= starts[-1]:
                lines = self._growing.lines or []
                offset = line_no - starts[-1]
                return lines[offset] if offset < len(lines) else None
            index = bisect_right(starts, line_no) - 1
            block = self._blocks[index]
            if block.width != self._width:  # its height at this width was a guess: rendered now
                guessed = block.height
                self._render_block(block)
                self.call_later(self._forget_old_lines)
                if block.height != guessed:  # the lines below it moved: placed again
                    self._reindex(repaint=False)
                    self.call_later(self._after_change)
                    continue
            elif block.lines is None:  # scrolled back to: render it again
                self._render_block(block)
                self.call_later(self._forget_old_lines)
            else:
                self._kept.move_to_end(block)
            assert block.lines is not None
            return block.lines[line_no - starts[index]]
        return None


def in_sight(widget: Widget) -> bool:
    """Whether a repaint of `widget` would be seen: its screen is the one on top (not under a
    dialog) and the widget is at least partly within it."""
    screen = widget.screen
    return screen is widget.app.screen and screen.can_view_partial(widget)


def _blank(line: Line) -> bool:
    return all(not segment.text.strip() and not (segment.style and segment.style.bgcolor) for segment in line)


class _RenderClock:
    """Steps the growing views of an app in rounds on one timer: each view once a round, a few
    views at a time (a screen update each, short enough for a key to be handled between two). The
    pause after a round is long enough that rendering takes at most RENDER_SHARE of the time
    (FLUSH_INTERVAL at the least, unless a backlog is being caught up with)."""

    GROUP = 4  # views stepped, then painted, before the loop may handle a key

    def __init__(self, app: App[object]) -> None:
        self._app = app
        self._views: dict[AnswerView, None] = {}  # waiting for the next round, in the order they asked
        self._round: list[AnswerView] = []  # this round's views not stepped yet
        self._armed = False
        self._started = 0.0  # this round's start
        self._spent = 0.0  # this round's rendering so far
        self._next = 0.0

    def add(self, view: AnswerView) -> None:
        self._views[view] = None
        self._arm(self._next)

    def _arm(self, at: float) -> None:
        if not self._armed:
            self._armed = True
            self._app.set_timer(max(0.001, at - time.monotonic()), self._tick, name="answers")

    def _tick(self) -> None:
        self._armed = False
        if not self._round:
            self._round, self._views = [v for v in self._views if v not in self._round], {}
            self._started, self._spent = time.monotonic(), 0.0
        group, self._round = self._round[: self.GROUP], self._round[self.GROUP :]
        started = time.monotonic()
        with self._app.batch_update():
            for view in group:
                if view.is_attached:
                    view._step()
        self._spent += time.monotonic() - started
        if self._round:  # the rest of the round, once the loop had its turn
            self._arm(0.0)
            return
        behind = any(view._backlog for view in self._views)
        pause = self._spent / RENDER_SHARE
        self._next = self._started + (pause if behind else max(FLUSH_INTERVAL, pause))
        if self._views:
            self._arm(self._next)


_clocks: weakref.WeakKeyDictionary[App[object], _RenderClock] = weakref.WeakKeyDictionary()
_themes: dict[str, Theme] = {}  # app theme name -> Markdown styles


def _render_clock(app: App[object]) -> _RenderClock:
    if app not in _clocks:
        _clocks[app] = _RenderClock(app)
    return _clocks[app]


def split_blocks(growing: Piece) -> tuple[list[Piece], Piece]:
    """The blocks of `growing` that are complete (another block starts after them), and the rest.

    A last block longer than OPEN_CAP is cut at line breaks (or at the cap, for a line that long),
    so that rendering it again stays short; a code fence cut this way is reopened in each part.
    """
    source = growing.source
    reopened = len(source) - growing.covers  # a fence opener we put in front: not the answer's
    groups: list[list[Token]] = []  # the tokens of each top-level block
    starts: list[int] = []  # the line each block starts on
    for token in _parser.parse(source):
        if token.level == 0 and token.map is not None:
            groups.append([token])
            starts.append(token.map[0])
        elif groups:
            groups[-1].append(token)
    if not groups:
        return [], growing
    lines = source.splitlines(keepends=True)
    bounds = [0, *starts[1:], len(lines)]
    parts = ["".join(lines[a:b]) for a, b in itertools.pairwise(bounds)]
    finished = [Piece(part, len(part), tokens) for part, tokens in zip(parts[:-1], groups, strict=False)]
    if finished:
        finished[0].covers -= reopened
        reopened = 0
    last, last_tokens = parts[-1], groups[-1]
    if len(last) <= OPEN_CAP:
        return finished, Piece(last, len(last) - reopened, last_tokens)
    fence = last_tokens[0] if last_tokens[0].type == "fence" else None
    opener = f"{fence.markup}{fence.info}\n" if fence else ""
    while len(last) > OPEN_CAP:
        cut = last.rfind("\n", 0, OPEN_CAP) + 1 or OPEN_CAP
        finished.append(Piece(last[:cut], cut - reopened))
        reopened = len(opener)
        last = opener + last[cut:]
    return finished, Piece(last, len(last) - reopened)
