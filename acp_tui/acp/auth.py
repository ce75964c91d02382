"""Logging in to an agent: the words for "authentication required", and the terminal login an agent offers."""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence
from typing import TYPE_CHECKING

from acp_tui.core.model import AuthMethodInfo

if TYPE_CHECKING:
    pass


# "Run `opencode auth login` in the terminal": a login command named in a method's description.
_RUN_COMMAND = re.compile(r"\brun\s+`([^`]+)`", re.IGNORECASE)


def auth_message(agent: str, methods: Sequence[AuthMethodInfo]) -> str:
    """`authentication required: codex offers "Login with ChatGPT", "Use CODEX_API_KEY" (set
    CODEX_API_KEY in this agent's env)`: what the user can do, in one line."""
    if not methods:
        return f"authentication required: {agent} advertises no login method (see its documentation)"
    names = ", ".join(f'"{method.name}"' for method in methods)
    hints = []
    variables = [var for method in methods for var in method.vars]
    if variables:
        hints.append(f"set {' or '.join(dict.fromkeys(variables))} in this agent's env")
    for method in methods:
        command = login_command(method)
        if command:
            hints.append(f'run "{command}" in a terminal')
        elif method.type == "terminal":
            hints.append(f'log in with "{method.name}" from the app')
    return f"authentication required: {agent} offers {names}" + (f" ({'; or '.join(hints)})" if hints else "")


def login_command(method: AuthMethodInfo) -> str | None:
    """A command the method's description tells the user to run, if it names one."""
    found = _RUN_COMMAND.search(method.description or "")
    return found.group(1).strip() if found else None


def terminal_login(method: AuthMethodInfo, command: str, args: Sequence[str]) -> list[str] | None:
    """The command line to run in a terminal for a login: a terminal method runs the agent's own
    program with the method's args; a description naming a command runs that. None: no such thing."""
    if method.type == "terminal":
        return [command, *args, *method.args]
    named = login_command(method)
    return shlex.split(named) if named else None
