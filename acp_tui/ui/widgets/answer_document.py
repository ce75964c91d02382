"""A streaming answer as lines of Markdown, rendered a block at a time: what a view shows of it.

Textual's `Markdown` widget mounts a widget per block, and each mount costs a stylesheet pass and a
reflow of the whole screen: with a dozen panes streaming at once that froze the screen for seconds.
Here the answer is a document, not widgets: it is split into Markdown blocks, a block is rendered
(with Rich's Markdown) only when a view shows it, and the view (the pane, the compare screen's
`AnswerView`) asks for the lines it paints with Textual's line API, so the cost of a frame does not
grow with the answer.

How the work is kept small, each measured with 16 panes streaming flat out:
- Text is taken a slice at a time (`STEP_CHARS`), at most 15 times a second, the growing answers of
  the app in rounds on one timer (a few, then their screen update, then the next few: a key waits
  for one group, not for sixteen), and rendering takes at most `RENDER_SHARE` of the time.
- An answer whose view is out of sight (scrolled away, under a dialog or a zoom) takes no step at
  all: it only keeps the text, and catches up when it is next painted.
- Markdown is parsed once per step; a block is rendered when it is shown (the blocks that fill a
  view pinned to the end, the block still growing), with the tokens of that parse the first time.
  A block not rendered yet has an estimated height.
- Rendered lines are kept only for the blocks last shown (`KEEP_LINES`), and rendered again if
  scrolled back to: kept for every block, they were most of the heap, and the garbage collector's
  full passes over them froze the screen for 0.2 s.
- A line is made into a `Strip` (with the offsets mouse selection needs) once, not at every frame
  (`StripCache`): a frame of a pinned view mostly shows the lines of the last frame one row higher.

What is shown is capped (`DISPLAY_CAP` characters: the tail, under a line saying how much came
before); the run's result keeps the whole answer, and the export writes it.
"""

from __future__ import annotations

import copy
import itertools
import math
import re
import time
import weakref
from bisect import bisect_right
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from markdown_it import MarkdownIt
from markdown_it.token import Token
from rich.markdown import Markdown as RichMarkdown
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from rich.theme import Theme
from textual.strip import Strip

from acp_tui.core.text import visible

if TYPE_CHECKING:
    from textual.app import App
    from textual.selection import Selection

DISPLAY_CAP = 256 * 1024  # characters of an answer kept on screen (the tail)
STEP_CHARS = 32 * 1024  # new text split into blocks in one step (parsed, not rendered: ~8 ms)
OPEN_CAP = 8 * 1024  # a block still growing past this is cut, so that no render of it is long
KEEP_LINES = 400  # rendered lines kept (besides the growing block); the rest is rendered again
FLUSH_INTERVAL = 1 / 15  # seconds between rendering steps of the growing answers, at the least...
RENDER_SHARE = 0.1  # ...and long enough that rendering them takes at most this share of the time
PENDING_LIMIT = 256  # fragments kept apart before they are joined into the text (a hidden answer)

# The parser Rich's Markdown uses (a block boundary found here is one there too), made once: Rich
# makes one per document, which cost as much as the rendering.
_parser = MarkdownIt().enable("strikethrough").enable("table")

TASK_ITEM = re.compile(r"^(\s*(?:[-*+]|\d+[.)])\s+)\[([ xX])\](?=\s)", re.MULTILINE)
# Rich's Markdown, made once: a code block's lines wrap at the view's width (Rich's `CodeBlock`), so
# that a narrow pane cuts none of it. No hyperlinks: a link's target is shown after its text, never
# hidden behind it (an agent's `[github.com](https://evil.example)` says where it leads).
_template = RichMarkdown("", hyperlinks=False)


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
    height: int = 0  # lines at the document's width (estimated until rendered at it)
    width: int = 0  # the width of its last render (0: none yet)
    rendered: int = 0  # lines at `width`
    lines: list[Line] | None = None  # None: not kept (rendered again when shown)


class AnswerHost(Protocol):
    """The view that shows a document (`AnswerView`, a pane): where it is and what it needs."""

    @property
    def app(self) -> App[object]: ...

    def answer_rows(self) -> int:
        """How many lines of the answer the view shows."""
        ...

    def answer_pinned(self) -> bool:
        """Whether the view shows the end of the answer (and follows it)."""
        ...

    def answer_in_sight(self) -> bool:
        """Whether a repaint of the view would be seen now."""
        ...

    def answer_changed(self) -> None:
        """The lines changed (or their count): repaint, and take the new height."""
        ...


class AnswerDocument:
    """Markdown that grows at the end: `append` as it streams, `finish` when it is whole."""

    def __init__(self, host: AnswerHost) -> None:
        self.host = host
        self.text = ""  # the answer as shown: its tail, about DISPLAY_CAP characters at most
        self.omitted = 0  # characters of the answer before `text`
        self._pending: list[str] = []  # appended, not yet in `text`
        self._backlog = ""  # in `text`, not yet split into blocks
        self._blocks: list[_Block] = []  # finished blocks
        self._starts: list[int] = [0]  # the first line of each finished block, then the growing one's
        self._growing = _Block(Piece("", 0))  # the last block, still growing: rendered at every step
        self._notice: list[Line] = []  # the line saying how much of the answer is not shown
        self._kept: OrderedDict[_Block, None] = OrderedDict()  # blocks with lines, least recent first
        self.width = 0
        self._finished = False
        self.waiting = False  # steps wanted while out of sight: taken once it is painted

    # Writing ---------------------------------------------------------------------------------

    def append(self, fragment: str) -> None:
        """Add text at the end. It is rendered soon, with whatever else arrives meanwhile.

        Control characters are made visible here, once: Markdown is rendered as Markdown, but no
        escape sequence the agent wrote can reach the terminal (Rich would pass most through).
        """
        if fragment:
            self._pending.append(visible(fragment))
            if len(self._pending) > PENDING_LIMIT:
                self._absorb()
            self.want_step()

    def finish(self) -> None:
        """The answer is complete: `text` is whole now, and the rest is rendered without delay (or
        when it is next in sight)."""
        self._finished = True
        self._absorb()
        if self.host.answer_in_sight():
            self.step()
        else:
            self.want_step()

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

    @property
    def busy(self) -> bool:
        """Text is waiting to be shown."""
        return bool(self._pending or self._backlog)

    def want_step(self) -> None:
        _render_clock(self.host.app).add(self)

    def painted(self) -> None:
        """The view was painted: an answer that waited out of sight catches up now."""
        if self.waiting:
            self.waiting = False
            self.want_step()

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
        self._reindex(repaint=False)

    def step(self) -> None:
        """Split a slice of the backlog into blocks; render the growing one, and what a view pinned
        to the end shows."""
        self._absorb()
        if not self.width:  # the view's first size renders it
            return
        if self._backlog:
            growing = self._growing.piece
            taken, self._backlog = self._backlog[:STEP_CHARS], self._backlog[STEP_CHARS:]
            finished, rest = split_blocks(Piece(growing.source + taken, growing.covers + len(taken)))
            for piece in finished:
                block = _Block(piece, height=self._estimate(piece.source))
                self._blocks.append(block)
                self._starts.append(self._starts[-1] + block.height)
            self._growing.piece = rest
            self._render_block(self._growing, keep=False)
            self._render_shown()
            self._forget_old_lines()
            self.host.answer_changed()
        if self._backlog:
            self.want_step()

    # Rendering -------------------------------------------------------------------------------

    @property
    def height(self) -> int:
        return self._starts[-1] + self._growing.height

    def fit(self, width: int) -> None:
        """A new width: only what is shown is rendered at it (a zoom, a resized terminal, a pane
        that moved); the other blocks keep a height guessed from their last render (or their
        source), and are rendered when they are shown."""
        if width <= 0 or width == self.width:
            return
        old, self.width = self.width, width
        self._render_notice()
        if not old:
            self._reindex(repaint=False)
            self.step()
            self.host.answer_changed()
            return
        for block in self._blocks:
            if block.width == width:
                block.height = block.rendered
            elif block.width:
                block.height = max(1, round(block.rendered * block.width / width))
            else:
                block.height = self._estimate(block.piece.source)
        self._render_block(self._growing, keep=False)
        self._render_shown()
        self._forget_old_lines()
        self._reindex()

    def _render_shown(self) -> None:
        """A view pinned to the end shows the last blocks: those that fill it are rendered now (at
        their true height), from the bottom up; the others when they are scrolled to."""
        if not self.host.answer_pinned():
            self._reindex(repaint=False)
            return
        rows, shown, index = self.host.answer_rows(), self._growing.height, len(self._blocks)
        while index > 0 and shown < rows:
            index -= 1
            block = self._blocks[index]
            if block.width != self.width or block.lines is None:
                self._render_block(block)
            shown += block.height
        self._reindex(repaint=False)

    def _estimate(self, source: str) -> int:
        """A block's height before it is rendered: its lines wrapped at the width, and a gap."""
        width = max(1, self.width)
        return sum(max(1, math.ceil(len(line) / width)) for line in source.splitlines()) + 1

    def _render_block(self, block: _Block, *, keep: bool = True) -> None:
        block.lines = self._render_lines(block.piece.source, block.piece.tokens)
        block.piece.tokens = None  # used once: a block rendered again (scrolled back to) is parsed again
        block.height = block.rendered = len(block.lines)
        block.width = self.width
        if keep:
            self._kept[block] = None
            self._kept.move_to_end(block)

    def _render_lines(self, source: str, tokens: list[Token] | None = None) -> list[Line]:
        if not source or not self.width:
            return []
        width = self.width
        app = self.host.app
        console = app.console
        options = console.options.update(width=width, height=None)
        if "[" in source and TASK_ITEM.search(source):
            source, tokens = task_boxes(source), None
        try:
            with console.use_theme(_theme(app)):
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

    def _forget_old_lines(self) -> None:
        kept_lines = sum(block.height for block in self._kept)
        limit = max(KEEP_LINES, 2 * self.host.answer_rows())
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
            self.host.answer_changed()

    # Reading ---------------------------------------------------------------------------------

    def line(self, line_no: int) -> Line | None:
        """The answer's line `line_no` at the document's width (a block not rendered at it is
        rendered now; if its height was a guess, the lines below move, and the view is told)."""
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
            if block.width != self.width or block.lines is None:  # not rendered at this width
                guessed = block.height
                self._render_block(block)
                self.host.app.call_later(self._forget_old_lines)
                if block.height != guessed:  # the lines below it moved: placed again
                    self._reindex(repaint=False)
                    self.host.app.call_later(self.host.answer_changed)
                    continue
            else:
                self._kept.move_to_end(block)
            assert block.lines is not None
            return block.lines[line_no - starts[index]]
        return None

    def render_range(self, top: int, rows: int) -> None:
        """Render now the blocks of lines `top` to `top + rows` not rendered at the width (a view
        scrolled to them): the frame that shows them is then the one with their true heights,
        not a frame of guessed ones and another once `line` has found them."""
        index = max(0, bisect_right(self._starts, top) - 1)
        while index < len(self._blocks) and self._starts[index] < top + rows:
            block = self._blocks[index]
            if block.width != self.width or block.lines is None:
                guessed = block.height
                self._render_block(block)
                if block.height != guessed:
                    self._reindex(repaint=False)
            index += 1
        self._forget_old_lines()

    def selected_text(self, selection: Selection) -> str:
        """The text selected with the mouse, as shown (the rendered lines, not the Markdown)."""
        if selection.start is None and selection.end is None:
            return self.text
        first = selection.start.y if selection.start is not None else 0
        last = selection.end.y if selection.end is not None else self.height - 1
        lines = ["" for _ in range(first)]
        for line_no in range(first, last + 1):
            line = self.line(line_no)
            lines.append("".join(segment.text for segment in line).rstrip() if line else "")
        return selection.extract("\n".join(lines))


class StripCache:
    """A document's lines as a view paints them: styled, with the offsets mouse selection needs
    (where each cell is in the answer), each made once and kept while it is near the view."""

    def __init__(self, document: AnswerDocument) -> None:
        self.document = document
        self._strips: dict[int, tuple[tuple[Line, int, Style], Strip]] = {}  # line number -> strip

    def strip(self, line_no: int, width: int, base: Style) -> Strip | None:
        """The line `line_no` at `width` over the view's style `base` (None: past the end)."""
        line = self.document.line(line_no)
        if line is None:
            return None
        key = (line, width, base)
        cached = self._strips.get(line_no)
        if cached is not None and cached[0] == key:
            return cached[1]
        if width != self.document.width:  # being rendered at a new width: cut or padded meanwhile
            line = Segment.adjust_line_length(line, width)
        x, segments = 0, []
        for text, style, _ in line:  # the style and the offsets in one pass: one strip, not three
            offset = Style.from_meta({"offset": (x, line_no)})
            segments.append(Segment(text, base + style + offset if style else base + offset))
            x += len(text)
        strip = Strip(segments, width)
        self._strips[line_no] = (key, strip)
        return strip

    def keep_near(self, top: int, height: int) -> None:
        """Forget the strips far from the lines shown (`height` lines from `top`)."""
        if len(self._strips) > 4 * max(1, height):
            self._strips = {n: v for n, v in self._strips.items() if top - height <= n < top + 2 * height}


def _blank(line: Line) -> bool:
    return all(not segment.text.strip() and not (segment.style and segment.style.bgcolor) for segment in line)


_themes: dict[str, Theme] = {}  # app theme name -> Markdown styles


def _theme(app: App[object]) -> Theme:
    cached = _themes.get(app.theme)
    if cached is None:
        cached = _themes[app.theme] = markdown_theme(app.get_css_variables())
    return cached


class KeyOrdered(Protocol):
    def when_done(self, callback: Callable[[], object]) -> None:
        """`callback` once the keys typed so far are handled and painted (at once if none is)."""
        ...


@runtime_checkable
class KeyedApp(Protocol):
    """An app whose keys are handled in order (`SupervisorApp`): the answers' steps wait for them."""

    key_order: KeyOrdered


class _RenderClock:
    """Steps the growing answers of an app in rounds on one timer: each once a round, a few at a
    time (a screen update each, short enough for a key to be handled between two). The pause after
    a round is long enough that rendering takes at most RENDER_SHARE of the time (FLUSH_INTERVAL at
    the least, unless a backlog is being caught up with). An answer out of sight is left waiting."""

    GROUP = 4  # answers stepped, then painted, before the loop may handle a key

    def __init__(self, app: App[object]) -> None:
        self._app = app
        self._documents: dict[AnswerDocument, None] = {}  # waiting for the next round, in order
        self._round: list[AnswerDocument] = []  # this round's documents not stepped yet
        self._armed = False
        self._started = 0.0  # this round's start
        self._spent = 0.0  # this round's rendering so far
        self._next = 0.0

    def add(self, document: AnswerDocument) -> None:
        self._documents[document] = None
        self._arm(self._next)

    def _arm(self, at: float) -> None:
        if not self._armed:
            self._armed = True
            self._app.set_timer(max(0.001, at - time.monotonic()), self._tick, name="answers")

    def _tick(self) -> None:
        # A key being handled goes first: its frame is painted, then the group steps (routed
        # through six message queues, a key could otherwise wait for a group at each).
        if isinstance(self._app, KeyedApp):
            self._app.key_order.when_done(self._step_group)
        else:
            self._step_group()

    def _step_group(self) -> None:
        self._armed = False
        if not self._round:
            self._round, self._documents = [d for d in self._documents if d not in self._round], {}
            self._started, self._spent = time.monotonic(), 0.0
        group, self._round = self._round[: self.GROUP], self._round[self.GROUP :]
        started = time.monotonic()
        with self._app.batch_update():
            for document in group:
                if not document.host.answer_in_sight():
                    document.waiting = True  # it steps once it is painted again
                else:
                    document.step()
        self._spent += time.monotonic() - started
        if self._round:  # the rest of the round, once the loop had its turn
            self._arm(0.0)
            return
        behind = any(document._backlog for document in self._documents)
        pause = self._spent / RENDER_SHARE
        self._next = self._started + (pause if behind else max(FLUSH_INTERVAL, pause))
        if self._documents:
            self._arm(self._next)


_clocks: weakref.WeakKeyDictionary[App[object], _RenderClock] = weakref.WeakKeyDictionary()


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
