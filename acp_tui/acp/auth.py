"""Logging in to an agent: the words for "authentication required", and the terminal login an agent offers.

A login runs in the user's terminal with the user's rights, so what the agent says to run is
screened: a `terminal` method runs the agent's own command line plus the method's args; a command
named in a method's description (``run `opencode auth login` ``) runs only when its program is the
agent's own (the preset's command, by name: the preset's path is what runs) and neither a shell nor
an interpreter nor a wrapper (whatever those run is more text of the agent's), and, for a launcher
such as `npx` or `uvx`, when it launches the agent's own package. The app still shows the whole
command line and asks first.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Sequence

from acp_tui.core.model import AuthMethodInfo

# "Run `opencode auth login` in the terminal": a login command named in a method's description.
_RUN_COMMAND = re.compile(r"\brun\s+`([^`]+)`", re.IGNORECASE)

# Programs that run whatever text they are given: shells, interpreters, and wrappers of another
# command. A login named in a description never runs one, even when the agent's own program is one.
_RUNS_ANYTHING = re.compile(
    r"(?:sh|bash|rbash|zsh|dash|ksh|mksh|yash|ash|csh|tcsh|fish|busybox|nu|elvish|xonsh|pwsh|powershell|cmd"
    r"|python[0-9.]*|pypy[0-9.]*|node|nodejs|deno|bun|perl[0-9.]*|ruby[0-9.]*|php[0-9.]*|lua[0-9.]*"
    r"|luajit|tclsh[0-9.]*|wish[0-9.]*|expect|osascript|awk|gawk|mawk|nawk|sed|jq"
    r"|env|sudo|doas|su|runuser|pkexec|setsid|nohup|nice|ionice|chrt|taskset|timeout|stdbuf|time"
    r"|xargs|exec|eval|command|builtin|script|watch|chroot|unshare|nsenter|flock|strace|gdb)"
    r"(?:\.exe)?",
    re.IGNORECASE,
)
# Programs that fetch and run a package: the package is what is run, so it is compared too.
LAUNCHERS = frozenset({"npx", "bunx", "pnpx", "uvx", "pipx", "uv", "pnpm", "yarn", "npm"})
_LAUNCHER_WORDS = frozenset({"run", "tool", "exec", "dlx", "x"})  # `pipx run PKG`, `pnpm dlx PKG`


class LoginRefused(ValueError):
    """A login command the agent names that is not run; the message says why, in one line."""


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
        command = _named_command(method)
        if command:
            hints.append(f'run "{command}" in a terminal')
        elif method.type == "terminal":
            hints.append(f'log in with "{method.name}" from the app')
    return f"authentication required: {agent} offers {names}" + (f" ({'; or '.join(hints)})" if hints else "")


def _named_command(method: AuthMethodInfo) -> str | None:
    """A command the method's description tells the user to run, if it names one."""
    found = _RUN_COMMAND.search(method.description or "")
    return found.group(1).strip() if found else None


def terminal_login(method: AuthMethodInfo, command: str, args: Sequence[str]) -> list[str] | None:
    """The command line to run in a terminal for a login: a terminal method runs the agent's own
    program with the method's args; a description naming a command runs that, with the agent's
    own program in its place. None: no such thing; LoginRefused: one that is not run."""
    if method.type == "terminal":
        return [command, *args, *method.args]
    named = _named_command(method)
    if not named:
        return None
    try:
        argv = shlex.split(named)
    except ValueError as exc:
        raise LoginRefused(f"login refused: the command the agent names cannot be read ({exc})") from None
    if not argv:
        return None
    program, own = _program(argv[0]), _program(command)
    if _RUNS_ANYTHING.fullmatch(program):
        raise LoginRefused(
            f'login refused: the agent names "{program}" to run, a shell or an interpreter '
            "(it would run whatever it is given)"
        )
    if program != own:
        raise LoginRefused(f'login refused: the agent names "{program}" to run, not its own program "{own}"')
    if own in LAUNCHERS and (named_package := _package(argv[1:])) != (package := _package(args)):
        raise LoginRefused(
            f'login refused: the agent names "{program} {named_package}" to run, '
            f'not its own package "{package}"'
        )
    return [command, *argv[1:]]


def _program(path: str) -> str:
    return os.path.basename(path.rstrip("/")) or path


def _package(args: Sequence[str]) -> str | None:
    """The package a launcher runs: its first argument that is no option (nor `run`, `dlx`, ...),
    without a version (`@scope/name@1.2` and `name==1.2` are `@scope/name` and `name`)."""
    for arg in args:
        if arg.startswith("-") or arg in _LAUNCHER_WORDS:
            continue
        match = re.match(r"@?[^@=<>~!\[\s]+", arg)
        return match.group() if match else arg
    return None
