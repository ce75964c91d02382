"""One value among a few, on one line (`label ▼`): enter, space, up or down (or a click) opens its
menu, which picks with enter or a click and closes with escape or when the focus leaves it.

Ours, not a `Select`, for F2's rows (a choice or more per agent): a Select is five widgets, its line a
container of three and its menu an option list made with it and kept hidden, all styled, laid out
and painted at each opening of F2 (sixty-four agents: a fifth of its first opening, a third of its
reopening). Here the line is the widget itself, and the menu is made when it opens, gone once it
closes."""

from __future__ import annotations

from collections.abc import Iterable
from typing import ClassVar

from textual import events
from textual.binding import Binding, BindingType
from textual.content import Content, ContentText
from textual.geometry import Size
from textual.message import Message
from textual.reactive import reactive
from textual.style import Style
from textual.widget import Widget
from textual.widgets import OptionList


class ChoiceMenu(OptionList):
    """A choice's open menu: on the screen's top layer, under the choice's line."""

    def on_click(self, event: events.Click) -> None:
        event.stop()  # the option list picks it; the choice under it is not clicked too

    def on_blur(self) -> None:
        if isinstance(self.parent, Choice):
            self.parent.close()


class Choice(Widget, can_focus=True):
    """Posts `Choice.Changed` when its value changes (picked, or assigned). `None`: nothing chosen
    (the value it came with is not among the choices); the prompt shows then."""

    ALLOW_SELECT = False
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter,down,space,up", "open", "Open", show=False),
        Binding("escape", "close", "Dismiss menu"),  # only while open (`check_action`)
    ]
    DEFAULT_CSS = """
    Choice {
        width: 1fr;
        height: 1;
        background: $surface;
        pointer: pointer;
        &:focus { background-tint: $foreground 5%; }
        &:ansi { background: ansi_default; }
        /* As a compact Select's: right under the line, as wide, no border. */
        & > ChoiceMenu {
            overlay: screen;
            constrain: none inside;
            offset-y: 1;
            width: 1fr;
            max-height: 12;
        }
    }
    """

    value: reactive[str | None] = reactive(None, init=False)

    class Changed(Message):
        """Its value changed (picked in the menu, or assigned)."""

        def __init__(self, choice: Choice, value: str | None) -> None:
            super().__init__()
            self.choice = choice
            self.value = value

        @property
        def control(self) -> Choice:
            return self.choice

    def __init__(
        self,
        options: Iterable[tuple[ContentText, str]],
        value: str | None = None,
        *,
        prompt: str = "choose",
        name: str | None = None,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self._labels = {value: Content.from_text(label).first_line for label, value in options}
        self._prompt = Content(prompt)
        self._menu: ChoiceMenu | None = None
        self.set_reactive(Choice.value, self.validate_value(value))  # no Changed for the first value

    @property
    def values(self) -> list[str]:
        return list(self._labels)

    @property
    def expanded(self) -> bool:
        return self._menu is not None

    def validate_value(self, value: str | None) -> str | None:
        if value is not None and value not in self._labels:
            raise ValueError(f"{value!r} is not one of the choices")
        return value

    def watch_value(self, value: str | None) -> None:
        self.post_message(self.Changed(self, value))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        return self.expanded if action == "close" else True

    async def action_open(self) -> None:
        if self._menu is not None:
            return
        values = self.values
        self._menu = menu = ChoiceMenu(*self._labels.values(), compact=True)
        menu.highlighted = values.index(self.value) if self.value in values else 0
        await self.mount(menu)
        menu.focus()
        self.refresh()

    def action_close(self) -> None:
        self.close()

    def close(self) -> None:
        """The menu gone, the focus back here if it was in the menu."""
        menu, self._menu = self._menu, None
        if menu is None:
            return
        if menu.has_focus:
            self.focus()
        menu.remove()
        self.refresh()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.value = self.values[event.option_index]
        self.close()

    async def on_click(self, event: events.Click) -> None:
        if self._menu is None:
            await self.action_open()
        else:
            self.close()

    def render(self) -> Content:
        muted = Style.parse(self.app.theme_variables.get("foreground-muted", ""))  # (with its alpha)
        label = self._labels[self.value] if self.value is not None else self._prompt.stylize(muted)
        width = max(self.size.width - 2, 1)
        arrow = "▲ " if self.expanded else "▼ "
        return Content.assemble(label.truncate(width, ellipsis=True, pad=True), (arrow, muted))

    def get_content_width(self, container: Size, viewport: Size) -> int:
        return max((label.cell_length for label in self._labels.values()), default=0) + 2

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return 1
