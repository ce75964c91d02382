"""The terminal login an agent offers, asked first: its whole command line, the focus on Cancel.

The command line comes from the agent, so it is shown whole: one argument per line, quoted as a
shell would need it, wrapped rather than cut, every control character made visible; the dialog
scrolls when it is long.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence

from textual.binding import Binding
from textual.content import Content

from acp_tui.ui import text
from acp_tui.ui.screens.confirm_screen import ConfirmScreen


def login_question(agent: str, argv: Sequence[str]) -> Content:
    header = text.markup(
        "Run the login of [b]$agent[/b] in this terminal, with your rights? It runs exactly this "
        "(one argument a line, quoted):",
        agent=agent,
    )
    arguments = [text.line(f"{n:>3}  {shlex.quote(arg)}") for n, arg in enumerate(argv, start=1)]
    return Content("\n").join([header, Content(""), *arguments])


class LoginConfirmScreen(ConfirmScreen):
    BINDINGS = [Binding("escape,n", "answer('no')", "Cancel"), Binding("y", "answer('yes')", "Log in")]

    def __init__(self, agent: str, argv: Sequence[str]) -> None:
        super().__init__(login_question(agent, argv), "Log in (y)", "Cancel (n)")
        self.argv = list(argv)
