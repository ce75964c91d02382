"""The first screen's words: who will answer, how, and the keys that matter from the prompt."""

from __future__ import annotations

import shlex
import sys
from typing import TYPE_CHECKING

from textual.content import Content

from acp_tui.ui import keys, text

if TYPE_CHECKING:
    from acp_tui.settings.schema import Settings

INTRO_WIDTH = 74  # the first screen's lines of keys fit 80 columns


def display_command(argv: list[str]) -> str:
    """The command as a person would type it: our own interpreter's long path reads `python`."""
    return shlex.join(["python" if arg == sys.executable else arg for arg in argv])


def intro_lines(width: int = INTRO_WIDTH) -> list[Content]:
    """The keys that act from the prompt (the first screen's focus), as few lines as fit `width`."""
    lines: list[list[tuple[str, str]]] = [[]]
    used = 0
    for key, what in keys.intro():
        size = len(key) + 1 + len(what) + (3 if lines[-1] else 0)
        if lines[-1] and used + size > width:
            lines.append([])
            size, used = size - 3, 0
        lines[-1].append((key, what))
        used += size
    return [
        Content(" · ").join(Content.assemble((key, "bold"), " ", what) for key, what in line)
        for line in lines
    ]


def welcome(settings: Settings) -> Content:
    """What a newcomer sees first: who will answer, how, and the keys that matter."""
    presets = settings.presets
    names = [text.line(p.name, 24).plain for p in presets]
    policies = [text.line(p.policy, 16).plain for p in presets]
    name_width = max(map(len, names), default=0)
    policy_width = max(map(len, policies), default=0)
    rows = [
        Content.assemble(
            "  ",
            (name.ljust(name_width), "bold"),
            "  ",
            (policy.ljust(policy_width), "dim"),
            "  ",
            text.line(display_command(preset.argv)).plain,
        )
        for name, policy, preset in zip(names, policies, presets, strict=True)
    ]
    source = f" from {settings.source}" if settings.source else ""
    return Content("\n").join(
        [
            Content.from_markup("[b]acp-tui[/] runs ACP agents side by side: each one's final answer."),
            text.markup("[dim]Agents$source (name, policy, command):[/]", source=source),
            *rows,
            Content(""),
            *intro_lines(),
        ]
    )
