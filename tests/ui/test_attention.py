"""The bell and the desktop notification: what is written, and that no text of an agent's can end
the sequence early or start another."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from acp_tui.ui.attention import Attention, notification, prefers_osc777, safe

HOSTILE = "build\x07\x1b]0;pwned\x1b\\\x9c\x9d2;x\u202egnp.exe\nline two"


def test_osc_9_by_default_and_osc_777_where_the_terminal_prefers_it() -> None:
    assert notification("ed needs you", {"TERM": "xterm-256color"}) == "\x1b]9;acp-tui: ed needs you\x07"
    for env in (
        {"TERM": "foot"},
        {"TERM": "rxvt-unicode-256color"},
        {"VTE_VERSION": "7600"},
        {"WT_SESSION": "x"},
    ):
        assert prefers_osc777(env)
        assert notification("ed; done", env) == "\x1b]777;notify;acp-tui;ed, done\x07"
    assert not prefers_osc777({"TERM": "xterm-kitty"})


def test_untrusted_text_cannot_end_or_start_a_sequence() -> None:
    text = safe(HOSTILE)
    assert text == "build ]0;pwned \\ 2;x gnp.exe line two"
    sequence = notification(HOSTILE, {})
    body = sequence.removeprefix("\x1b]9;").removesuffix("\x07")
    assert not any(ord(c) < 0x20 or 0x7F <= ord(c) < 0xA0 for c in body)
    assert body.startswith("acp-tui: ")  # ConEmu reads `9;<digit>;` as a command


@given(st.text())
def test_any_text_makes_exactly_one_sequence(text: str) -> None:
    for env in ({}, {"TERM": "foot"}):
        sequence = notification(text, env)
        assert sequence.count("\x1b") == 1 and sequence.count("\x07") == 1 and sequence.endswith("\x07")
        assert not any(0x80 <= ord(c) < 0xA0 for c in sequence)


def test_notify_off_bell_or_all() -> None:
    written: list[str] = []
    for mode in ("off", "bell", "all"):
        attention = Attention(mode, written.append, env={})
        attention.call("a question from ed")
        attention.bell()
    assert written == ["\x07", "\x07", "\x07\x1b]9;acp-tui: a question from ed\x07", "\x07"]


def test_a_lone_surrogate_goes_nowhere_near_the_terminal() -> None:
    assert "\ud800" not in safe("done \ud800 now")
    notification("done \ud800 now", {}).encode()  # what is written can be written
