"""A check box whose text says whether it is checked (`X` or blank), not its colour alone: Textual's
shows `X` either way."""

from __future__ import annotations

from textual.content import Content
from textual.widgets import Checkbox


class Toggle(Checkbox):
    def render(self) -> Content:
        self.BUTTON_INNER = "X" if self.value else " "
        return super().render()
