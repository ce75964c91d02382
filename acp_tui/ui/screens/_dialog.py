"""The one base of the modal screens: a centred dialog that fits any terminal (it scrolls), and a
footer with the dialog's own keys; under it, the screen it opened over, dimmed (`Backdrop`).

Each screen's CSS is scoped to it: every rule starts with the screen's class name, so no dialog's
style reaches another (stylesheets are app-wide in Textual once loaded).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, Self, TypeVar

from rich.segment import Segment
from rich.style import Style
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.color import Color
from textual.containers import VerticalScroll
from textual.geometry import Region
from textual.renderables.background_screen import BackgroundScreen
from textual.screen import ModalScreen, Screen
from textual.strip import Strip
from textual.widgets import Button

from acp_tui import compat
from acp_tui.ui.screens._styled import StyledScreen
from acp_tui.ui.widgets.key_footer import KeyFooter

ResultType = TypeVar("ResultType")


class Backdrop:
    """The screen under a dialog as it was last painted, dimmed once.

    Textual draws a modal screen's translucent background by rendering the whole screen under it
    again and tinting every cell, at the dialog's first frame and at each of its repaints: with
    sixteen panes under it, the dialog's first frame cost as much as the grid's. Here the lines
    Textual keeps of that screen's widgets are joined as they are (no widget renders again), each
    style is tinted once, and the dimmed lines are kept until that screen changes."""

    def __init__(self) -> None:
        self._lines: list[Strip] | None = None
        self._tinted: dict[Style | None, Style] = {}

    def line(self, dialog: Screen[Any], y: int) -> Strip:
        if self._lines is None:
            under = dialog.app.screen_stack
            index = under.index(dialog) if dialog in under else 0
            frame = compat.screen_frame(under[index - 1]) if index > 0 else []
            tint = dialog.styles.background
            self._lines = [self._dimmed(strip, tint) for strip in frame]
        lines = self._lines
        return lines[y] if y < len(lines) else Strip.blank(dialog.size.width)

    def _dimmed(self, strip: Strip, tint: Color) -> Strip:
        segments = []
        for text, style, control in strip:
            if control:
                continue
            dimmed = self._tinted.get(style)
            if dimmed is None:
                [segment] = BackgroundScreen.process_segments([Segment(" ", style)], tint)
                dimmed = self._tinted[style] = segment.style or Style()
            segments.append(Segment(text, dimmed))
        return Strip(segments, strip.cell_length)

    def forget(self) -> None:
        """The screen under it changed: dimmed again at the next paint."""
        self._lines = None


class DimmedScreen(ModalScreen[ResultType], StyledScreen[ResultType]):
    """A modal screen over the last frame of the screen under it, dimmed (its `Backdrop`)."""

    def __init__(self, name: str | None = None, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(name, id, classes)
        self.backdrop = Backdrop()

    def render_line(self, y: int) -> Strip:
        return self.backdrop.line(self, y)

    def refresh(
        self, *regions: Region, repaint: bool = True, layout: bool = False, recompose: bool = False
    ) -> Self:
        if regions:  # Textual passes on what changed in the screen under this one
            self.backdrop.forget()
        return super().refresh(*regions, repaint=repaint, layout=layout, recompose=recompose)

    def on_resize(self) -> None:
        self.backdrop.forget()

    def on_screen_resume(self) -> None:
        self.backdrop.forget()  # what is under it may have changed while another was over it


class DialogScreen(DimmedScreen[ResultType]):
    DEFAULT_CSS = """
    DialogScreen {
        align: center middle;
        background: $background 60%;
        & > #dialog {
            width: 90%;
            max-width: 120;
            height: auto;
            max-height: 90%;
            border: thick $primary;
            border-title-color: $text;
            border-title-style: bold;
            background: $surface;
            padding: 0 1;
        }
        & .hint { color: $text-muted; }
        & > Footer { dock: bottom; }
    }
    """
    BINDINGS = [Binding("escape", "close", "Close")]
    DIALOG_FOCUSABLE = False  # True where nothing inside takes the focus: the keys scroll the dialog
    # The dialog's answers: the id of a button that answers it -> what the dialog is dismissed with,
    # the button pressed or its key typed (bound to `answer('ID')`).
    ANSWERS: ClassVar[Mapping[str, Any]] = {}

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="dialog", can_focus=self.DIALOG_FOCUSABLE):
            yield from self.compose_dialog()
        yield KeyFooter()

    def compose_dialog(self) -> ComposeResult:
        yield from ()

    def action_close(self) -> None:
        self.dismiss(None)

    def action_answer(self, button: str) -> None:
        self.dismiss(self.ANSWERS[button])

    @on(Button.Pressed)
    def _answer_pressed(self, event: Button.Pressed) -> None:
        button = event.button.id or ""
        if button in self.ANSWERS:
            self.action_answer(button)
