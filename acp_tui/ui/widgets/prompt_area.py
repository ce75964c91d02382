"""The prompt's text box: Textual's TextArea, where Enter sends and history lives at the edges.

Its own module, for it is not the first frame's: importing and mounting a TextArea is a fifth of
that frame, which shows the prompt's stand-in instead (`ui.widgets.prompt_stand_in`) and mounts
this right after it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual import events
from textual.widgets import TextArea

if TYPE_CHECKING:
    from acp_tui.ui.widgets.command_menu import CommandMenu


class PromptArea(TextArea):
    """A TextArea where Enter sends and history lives at the edges.

    What a key does here is done before the next key is routed (`ui.key_order`): Enter sends the
    round and moves the focus to it, escape leaves follow-up mode, before this returns.
    """

    def __init__(self, value: str, *, id: str | None = None) -> None:
        super().__init__(
            value, id=id, soft_wrap=True, show_line_numbers=False, tab_behavior="focus", compact=True
        )
        self.sent: list[str] = []  # the prompts of this session
        self.follow_up_mode = False  # set by the bar: escape leaves it
        self.menu: CommandMenu | None = None  # the bar's slash commands, made at the first `/`
        self._walk: int | None = None  # index in history while walking it
        self._draft = ""

    async def on_key(self, event: events.Key) -> None:
        """Ours before the text box's: a key handled here never reaches it (`prevent_default`)."""
        key, row = event.key, self.cursor_location[0]
        menu = self.menu
        if menu is not None and menu.shown and key in ("tab", "enter", "up", "down", "escape"):
            self._pick_command(menu, key)
        elif key == "enter":
            await self.app.run_action("screen.send_prompt")
        elif key == "escape" and self.follow_up_mode:
            await self.app.run_action("screen.leave_follow_up")
        elif key in ("ctrl+j", "shift+enter", "newline"):
            start, end = self.selection
            self.replace("\n", start, end, maintain_selection_offset=False)
        elif key == "up" and row == 0 and self.sent:
            self._step_history(-1)
        elif key == "down" and row == self.document.line_count - 1 and self._walk is not None:
            self._step_history(+1)
        else:
            return
        event.stop()
        event.prevent_default()

    def _pick_command(self, menu: CommandMenu, key: str) -> None:
        chosen = menu.chosen
        if key in ("up", "down"):
            menu.move(-1 if key == "up" else +1)
            return
        menu.show([])
        if key != "escape" and chosen is not None:
            self.text = chosen.completion
            self.move_cursor(self.document.end)

    def _step_history(self, step: int) -> None:
        if self._walk is None:
            self._draft = self.text
            self._walk = len(self.sent)
        self._walk = max(0, self._walk + step)
        if self._walk >= len(self.sent):
            self._walk = None
            self.text = self._draft
        else:
            self.text = self.sent[self._walk]
        self.move_cursor(self.document.end)

    def remember(self, prompt: str) -> None:
        if not self.sent or self.sent[-1] != prompt:
            self.sent.append(prompt)
        self._walk = None
