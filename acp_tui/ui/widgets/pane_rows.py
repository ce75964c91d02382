"""The rows of a pane's sections, as the line API paints them: its header row (the state's badge,
the context gauge and usage, the clock, Cancel), the prompt it answers, the sections under the
answer (error, failed calls, counts, worktree) and the stderr's last lines.

Each section's rows are made once per change of what it depends on (`PaneRows.section`) and kept:
a frame paints kept strips, and a change repaints that section's rows only, unless its number of
rows changed (then the pane's rows are placed again: a layout of its own rows, never the screen's).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from rich.segment import Segment
from rich.style import Style
from textual.color import Color
from textual.content import Content
from textual.strip import Strip

from acp_tui.core.model import Usage
from acp_tui.ui import text
from acp_tui.ui.summary import usage_summary
from acp_tui.ui.widgets.context_gauge import gauge_level, gauge_text
from acp_tui.ui.widgets.status_badge import STATE_COLOURS, colour_key, label

if TYPE_CHECKING:
    from textual.widget import Widget

STDERR_ROWS = 7  # shown under the answer (and a rule above them)
BADGE_WIDTH = 12  # the longest state's label
CLOCK_WIDTH = 8
CANCEL = " Cancel "
FOOT = ("error", "failed", "stats", "worktree")  # the sections under the answer, in order


@dataclass(frozen=True)
class Part:
    """One section of a pane: its lines, and how they are drawn."""

    lines: tuple[Content, ...] = ()
    style: str = "muted"  # the component class that colours it: muted, failed
    wrap: bool = False  # wrapped at the width; else one row per line, cut with an ellipsis
    limit: int = 1  # rows at most


@dataclass(frozen=True)
class Head:
    """The header row: the state's badge, the usage, the context gauge, the clock and Cancel."""

    state: str = "waiting"
    usage: Usage | None = None  # the run's of now
    gauge: Usage | None = None  # the last one reported (a finished turn's too)
    clock: str = ""
    cancel: str = ""  # "live": Cancel cancels; "pressed": shown dimmed; "": not shown


@dataclass(frozen=True)
class PaneLayout:
    """Which section each row of the pane's content area shows (and which row of it)."""

    rows: tuple[tuple[str, int], ...]
    answer_top: int
    answer_rows: int

    def start(self, name: str) -> tuple[int, int]:
        """The first row of section `name` and its number of rows."""
        found = [y for y, (owner, _) in enumerate(self.rows) if owner == name]
        return (found[0], len(found)) if found else (0, 0)


class Sections(Protocol):
    """What a pane shows, section by section (`pane_view.PaneContent`)."""

    head: Head
    prompt: str  # the conversation's opening prompt: its first line, or whole when there is room
    parts: dict[str, Part]
    stderr: deque[str]
    stderr_shown: bool


class PaneRows:
    """A view's sections as rows at its width, each made once per change, and where each goes.
    `full`: the zoom's (the whole prompt, and the stderr sharing the room with the answer)."""

    def __init__(self, view: Widget, *, full: bool) -> None:
        self.view = view
        self.full = full
        self.content: Sections | None = None
        self._sections: dict[str, tuple[object, list[Strip]]] = {}  # name -> (what drew it, its rows)
        self._layout: PaneLayout | None = None
        self._stderr_rows = STDERR_ROWS  # the stderr's lines shown (more in the zoom)

    @property
    def whole_prompt(self) -> bool:
        """The whole prompt shows, not its first line (the zoom; a focused pane)."""
        return self.full or self.view.has_focus

    def forget(self) -> None:
        """Another size or another content: every section is made again when painted."""
        self._sections.clear()
        self._layout = None

    def changed(self, name: str) -> tuple[int, int]:
        """Section `name` says something else: the rows to repaint as (top, count), (0, 0) for the
        whole pane (it has more or fewer rows now, or is not laid out: not painted yet, or resized
        since, when a change repainting nothing left its rows as they were)."""
        before = self._sections.pop(name, None)
        if self._layout is None or self.content is None:
            return (0, 0)
        if before is None or len(self.section(name)) != len(before[1]):
            self._layout = None
            return (0, 0)
        return self._layout.start(name)

    @property
    def laid_out(self) -> PaneLayout | None:
        """The layout of the last frame, if any."""
        return self._layout

    def layout(self) -> PaneLayout:
        if self._layout is None:
            self._layout = self._lay_out()
        return self._layout

    def _lay_out(self) -> PaneLayout:
        """Header and prompt on top, the sections under the answer at the bottom, the answer between
        (and the stderr, when shown: a few lines, or as much room as the answer in the zoom); what
        does not fit is cut at the bottom."""
        height = self.view.content_region.height
        head = [("head", 1), ("asked", len(self.section("asked")))]
        foot = [(name, len(self.section(name))) for name in FOOT]
        room = height - sum(n for _, n in head + foot)
        self._stderr_rows = max(STDERR_ROWS, room // 2 - 1) if self.full else STDERR_ROWS
        stderr = len(self.section("stderr"))
        answer = max(0, room - stderr)
        rows: list[tuple[str, int]] = []
        for name, count in [*head, ("answer", answer), *foot, ("stderr", stderr)]:
            rows.extend((name, i) for i in range(count))
        return PaneLayout(tuple(rows[:height]), sum(n for _, n in head), answer)

    def section(self, name: str) -> list[Strip]:
        """The rows of section `name` at the width (made once per change)."""
        content = self.content
        width = self.view.content_region.width
        if content is None or width <= 0:  # not laid out (or being removed)
            return []
        what = self._drawn(name, content, width)
        cached = self._sections.get(name)
        if cached is not None and cached[0] == what:
            return cached[1]
        if name == "head":
            rows = [self._head_row(content.head, width)]
        elif name == "stderr":
            rows = self._stderr_lines(content, width) if content.stderr_shown else []
        else:
            rows = self._part_rows(self.part(name, content, width), width)
        self._sections[name] = (what, rows)
        return rows

    def _drawn(self, name: str, content: Sections, width: int) -> object:
        """What section `name` depends on: drawn again when it changes."""
        if name == "head":
            return (content.head, width)
        if name == "stderr":
            return (content.stderr_shown, len(content.stderr), width, self._stderr_rows)
        if name == "asked":
            return (content.prompt, self.whole_prompt, width)
        return (content.parts[name], width)

    def part(self, name: str, content: Sections, width: int) -> Part:
        """Section `name` (not the header nor the stderr) as it is drawn at `width`."""
        if name != "asked":
            return content.parts[name]
        prompt = content.prompt.strip()
        first = prompt.splitlines()[0] if prompt else ""
        if self.whole_prompt and ("\n" in prompt or len(prompt) >= width):
            return Part((text.literal(prompt),), "asked", wrap=True, limit=6)
        return Part((text.line(first),), "asked")

    def _row(self, content: Content, component: str, width: int) -> Strip:
        style = self.view.get_visual_style(f"pane--{component}")
        segments = content.render_segments(style)
        return Strip(Segment.adjust_line_length(segments, width, style=style.rich_style), width)

    def _part_rows(self, part: Part, width: int) -> list[Strip]:
        rows: list[Content] = []
        for line in part.lines:
            if part.wrap:
                rows.extend(line.wrap(width))
            else:
                rows.append(line.truncate(width, ellipsis=True))
        return [self._row(row, part.style, width) for row in rows[: part.limit]]

    def _head_row(self, head: Head, width: int) -> Strip:
        """Badge, then the usage (right-aligned), the context gauge, the clock, Cancel. The usage, then
        the gauge, give way before the clock does."""
        badge = Content(label(head.state).center(BADGE_WIDTH))
        cancel = Content(CANCEL) if head.cancel else Content()
        rest = max(0, width - BADGE_WIDTH - CLOCK_WIDTH - len(cancel) - 1)
        view = self.view
        gauge = Content(gauge_text(head.gauge))
        if gauge and gauge.cell_length < rest:
            level = view.get_visual_style(f"pane--{gauge_level(head.gauge)}")
            gauge = Content.assemble(" ", gauge.stylize(level))
        else:
            gauge = Content()
        room = rest - gauge.cell_length
        said = usage_summary(head.usage)  # `0.0004 USD · 1.2k/200k tok`: what fits, never a cut figure
        for shorter in (said.partition(" · ")[0], said.partition(" ")[0]):
            said = said if len(said) <= room else shorter
        usage = Content(said).truncate(room, ellipsis=True)
        usage = usage.pad_left(room - usage.cell_length)
        clock = Content(head.clock.rjust(CLOCK_WIDTH - 1)[: CLOCK_WIDTH - 1] + " ")
        muted = view.get_visual_style("pane--muted")
        segments = [
            Segment(badge.plain, self._badge_style(head.state)),
            *Content.assemble(" ", usage, gauge, clock).render_segments(muted),
        ]
        if head.cancel:
            style = view.get_visual_style("pane--cancel").rich_style
            if head.cancel == "pressed":
                style += Style(dim=True)
            segments.append(Segment(CANCEL, style + Style.from_meta({"@click": "cancel"})))
        return Strip(Segment.adjust_line_length(segments, width, style=muted.rich_style), width)

    def _badge_style(self, state: str) -> Style:
        key = colour_key(state)
        colour = Color.parse(STATE_COLOURS[key])
        if key == "error":
            return Style(color="white", bgcolor=colour.rich_color, bold=True)
        if key == "needs-you":
            return Style(color="black", bgcolor=colour.rich_color, bold=True)
        background = self.view.background_colors[1] + colour.with_alpha(0.2)
        return Style(color=colour.rich_color, bgcolor=background.rich_color, bold=True)

    def _stderr_lines(self, content: Sections, width: int) -> list[Strip]:
        """A rule, then the last lines of the run's stderr (as many rows, lines or not)."""
        lines = list(content.stderr)[-self._stderr_rows :]
        lines += [""] * (self._stderr_rows - len(lines))
        rule = self._row(Content("╌" * width), "rule", width)
        return [rule, *(self._row(text.line(line).truncate(width), "muted", width) for line in lines)]
