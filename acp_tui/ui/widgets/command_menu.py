"""The slash commands that complete the prompt, shown above it while a `/name` is being typed.

It never takes the focus: the prompt keeps it, and hands it the keys that move (up, down) and pick
(tab, enter) while it is shown (see `PromptArea`). Each line: the command, the input it takes, its
description and the agents that offer it, all from agents: shown literally.
"""

from __future__ import annotations

from collections.abc import Sequence

from textual.content import Content
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from acp_tui.ui import text
from acp_tui.ui.slash import Offered

SHOWN = 8  # lines at most: the grid keeps the rest of the screen


class CommandMenu(OptionList, can_focus=False):
    DEFAULT_CSS = f"""
    CommandMenu {{
        display: none;
        height: auto;
        max-height: {SHOWN + 2};
        border: round $primary;
        &.-shown {{ display: block; }}
    }}
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id, compact=True)
        self.offers: list[Offered] = []

    def show(self, offers: Sequence[Offered]) -> None:
        """Offer these (none: hidden)."""
        self.offers = list(offers)
        self.clear_options()
        self.add_options(Option(_line(offer)) for offer in self.offers)
        self.set_class(bool(self.offers), "-shown")
        if self.offers:
            self.highlighted = 0

    @property
    def shown(self) -> bool:
        return bool(self.offers)

    @property
    def chosen(self) -> Offered | None:
        """The highlighted command."""
        index = self.highlighted
        return self.offers[index] if self.offers and index is not None else None

    def move(self, step: int) -> None:
        if self.offers:
            self.highlighted = ((self.highlighted or 0) + step) % len(self.offers)


def _line(offer: Offered) -> Content:
    command = offer.command
    hint = f" <{command.hint}>" if command.hint else ""
    return text.markup(
        "[b]/$name[/b]$hint  $description  [dim]· $agents[/dim]",
        name=command.name,
        hint=hint,
        description=command.description,
        agents=", ".join(offer.agents),
    )
