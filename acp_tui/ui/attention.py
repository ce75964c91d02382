"""Telling the person that something needs them: the terminal's bell, and a desktop notification.

When a permission request or a question waits for the person, or a run ends while they are
elsewhere, the app writes BEL and asks the terminal for a notification: OSC 9 (`ESC ] 9 ; TEXT
BEL`: iTerm2, kitty, WezTerm, Ghostty, Windows Terminal's ConEmu heritage aside), or OSC 777
(`ESC ] 777 ; notify ; TITLE ; BODY BEL`: rxvt-unicode, foot, VTE-based terminals such as GNOME
Terminal with their distributions' patch, Windows Terminal) where the terminal prefers that one.
A terminal that knows neither ignores it. `notify` in the config: `off` (nothing), `bell` (BEL
only), `all` (the default: both).

The notification's text comes partly from agents (a name, a title): nothing in it may end the
sequence early or start another, so every control character (C0, DEL, C1, which holds the 8-bit
ST and OSC) and every bidi control is replaced by a space. OSC 9's text never starts with a digit
(ConEmu and Windows Terminal read `9;4;...` as a command, not a message): it starts `acp-tui:`.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping

from acp_tui.core.text import CONTROL_CODES, without_surrogates
from acp_tui.settings.schema import Notify

BEL = "\x07"
ESC = "\x1b"
TEXT_CHARS = 200  # a notification is a line, not a document
_SAFE = str.maketrans(dict.fromkeys((0x09, 0x0A, *CONTROL_CODES), " "))


def safe(text: str, limit: int = TEXT_CHARS) -> str:
    """`text` as it can go inside an OSC: no control or bidi character, one line, cut to `limit`."""
    return " ".join(without_surrogates(text).translate(_SAFE).split())[:limit]


def prefers_osc777(env: Mapping[str, str]) -> bool:
    """The terminal shows OSC 777 notifications, and not OSC 9 ones (as its environment says)."""
    term = env.get("TERM", "")
    return term.startswith(("foot", "rxvt")) or "VTE_VERSION" in env or "WT_SESSION" in env


def notification(text: str, env: Mapping[str, str]) -> str:
    """The escape sequence that asks the terminal for a desktop notification saying `text`."""
    body = safe(text)
    if prefers_osc777(env):
        return f"{ESC}]777;notify;acp-tui;{body.replace(';', ',')}{BEL}"
    return f"{ESC}]9;acp-tui: {body}{BEL}"


class Attention:
    """What the app writes to call the person, as `notify` says; `write` puts it on the terminal."""

    def __init__(
        self, mode: Notify, write: Callable[[str], None], env: Mapping[str, str] | None = None
    ) -> None:
        self.mode: Notify = mode
        self.write = write
        self._env = os.environ if env is None else env

    def call(self, text: str) -> None:
        """Something waits for the person, or ended while they were elsewhere."""
        if self.mode == "off":
            return
        self.write(BEL if self.mode == "bell" else BEL + notification(text, self._env))

    def bell(self) -> None:
        """Something went wrong where the person is looking: the bell alone."""
        if self.mode != "off":
            self.write(BEL)
