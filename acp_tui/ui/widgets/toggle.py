"""A check box whose text says whether it is checked (`X` or blank), not its colour alone: Textual's
shows `X` either way.

Ours, not a `Checkbox`, though it looks like Textual's compact one (`▐X▌ label`) in every state and
theme: Checkbox's module, ToggleButton's CSS (1.8 KB, every variant's) and its component classes
(two more nodes styled per box at each style pass) cost the first frame ~52 M instructions
(1,334 M -> 1,282 M under cachegrind) with the prompt bar's five boxes. Here the CSS is the few
rules that style the widget itself; the button and the label take the theme's colours as they render."""

from __future__ import annotations

from typing import ClassVar

from textual.binding import Binding, BindingType
from textual.content import Content, ContentText
from textual.geometry import Size
from textual.message import Message
from textual.reactive import reactive
from textual.style import Style
from textual.widget import Widget

# The button's colours, by (ANSI colours, checked), and the label's when focused or under the mouse:
# ToggleButton's, as `{variable}`s of the theme, filled in here (a `$variable` in a style string loses
# its alpha: `auto 87%` is read as `auto`).
BUTTON = {
    (False, False): "{panel-darken-2} on {panel}",
    (False, True): "{text-success} on {panel}",
    (True, False): "{ansi-foreground} on {ansi-background} dim",
    (True, True): "{accent} on {ansi-background} bold not dim",
}
FOCUSED = "{block-cursor-foreground} on {block-cursor-background} {block-cursor-text-style}"
HOVERED = "on {block-hover-background}"


class Toggle(Widget, can_focus=True):
    """On or off: enter, space or a click turns it over, and it posts `Toggle.Changed`."""

    ALLOW_SELECT = False
    BINDINGS: ClassVar[list[BindingType]] = [Binding("enter,space", "toggle_button", "Toggle", show=False)]
    DEFAULT_CSS = """
    Toggle {
        width: auto;
        height: auto;
        background: $surface;
        text-wrap: nowrap;
        text-overflow: ellipsis;
        pointer: pointer;
        &:focus { background-tint: $foreground 5%; }
        &:ansi { background: ansi_default; }
    }
    """

    value: reactive[bool] = reactive(False, init=False)

    class Changed(Message):
        """The box turned on or off (by a key, a click or an assignment)."""

        def __init__(self, toggle: Toggle, value: bool) -> None:
            super().__init__()
            self.toggle = toggle
            self.value = value

        @property
        def control(self) -> Toggle:
            return self.toggle

    def __init__(
        self,
        label: ContentText = "",
        value: bool = False,
        *,
        name: str | None = None,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self._label = _one_line(label)
        self.set_reactive(Toggle.value, value)  # no Changed for the first value

    @property
    def label(self) -> Content:
        return self._label

    @label.setter
    def label(self, label: ContentText) -> None:
        self._label = _one_line(label)
        self.refresh(layout=True)

    def watch_value(self, value: bool) -> None:
        self.post_message(self.Changed(self, value))

    def watch_mouse_hover(self) -> None:
        self.refresh()  # the label's look under the mouse is drawn here, not by a CSS rule

    def action_toggle_button(self) -> None:
        self.value = not self.value

    def on_click(self) -> None:
        self.action_toggle_button()

    def render(self) -> Content:
        button = self._style(BUTTON[self.app.native_ansi_color, self.value])
        back = self.background_colors[1]
        sides = Style(foreground=back + button.background, background=back)
        label = self._label.pad(1, 1)
        if self.has_focus or self.mouse_hover:
            label = label.stylize_before(self._style(FOCUSED if self.has_focus else HOVERED))
        return Content.assemble(("▐", sides), ("X" if self.value else " ", button), ("▌", sides), label)

    def _style(self, template: str) -> Style:
        """`template` in the theme's colours; a text style `none` (CSS's word) is no style."""
        return Style.parse(template.format_map(self.app.theme_variables).replace(" none", ""))

    def get_content_width(self, container: Size, viewport: Size) -> int:
        return 3 + (self._label.cell_length + 2 if self._label else 0)

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return 1


def _one_line(label: ContentText) -> Content:
    return Content.from_text(label).first_line.rstrip()
