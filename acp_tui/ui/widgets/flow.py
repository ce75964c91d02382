"""A container whose children run left to right and wrap onto the next line, as words do: every
child stays in sight however narrow the terminal (a horizontal row hid what passed its edge)."""

from __future__ import annotations

from textual.geometry import NULL_OFFSET, Region, Size
from textual.layout import ArrangeResult, Layout, WidgetPlacement
from textual.widget import Widget

from acp_tui.compat import resolve_box_models


class FlowLayout(Layout):
    name = "flow"

    def arrange(
        self, parent: Widget, children: list[Widget], size: Size, greedy: bool = True
    ) -> ArrangeResult:
        parent.pre_layout(self)
        boxes = resolve_box_models(
            [child.styles.width for child in children],
            children,
            size,
            parent.app.viewport_size,
            Size(0, 0),
            resolve_dimension="width",
            greedy=greedy,
        )
        placements = []
        x = y = line_height = 0
        for child, box in zip(children, boxes, strict=True):
            width = int(box.width) + box.margin.width
            height = int(box.height) + box.margin.height
            if x and x + width > size.width:  # the next line (a child wider than the line gets one alone)
                x, y, line_height = 0, y + line_height, 0
            region = Region(x + box.margin.left, y + box.margin.top, int(box.width), int(box.height))
            placements.append(WidgetPlacement(region, NULL_OFFSET, box.margin, child))
            x += width
            line_height = max(line_height, height)
        return placements


class Flow(Widget):
    """Children on as many lines as they need (`height: auto`)."""

    DEFAULT_CSS = "Flow { height: auto; }"

    def __init__(self, *children: Widget, id: str | None = None) -> None:
        super().__init__(*children, id=id)
        self._flow = FlowLayout()

    @property
    def layout(self) -> Layout:
        return self._flow
