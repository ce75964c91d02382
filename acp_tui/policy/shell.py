"""Command lines read as a shell would run them: what a command rule matches."""

from __future__ import annotations

import fnmatch
import os
import re
import shlex
from collections.abc import Sequence
from typing import Any, TypeGuard

# Raw-input fields holding the command line, as agents send them: Claude Code's Bash `command`
# (a string), Codex's exec approval `command` (an argv list, often ["bash", "-lc", SCRIPT]), `cmd`
# and `argv` elsewhere; `command` + `args` as in ACP's terminal/create.
COMMAND_FIELDS = ("command", "cmd", "argv")


SHELLS = ("sh", "bash", "zsh", "dash", "ksh", "fish")


def command_lines(raw_input: Any) -> list[str]:
    """The command lines a tool call's raw input says it will run (see COMMAND_FIELDS)."""
    if not isinstance(raw_input, dict):
        return []
    lines = []
    for name in COMMAND_FIELDS:
        value = raw_input.get(name)
        if isinstance(value, str) and value.strip():
            args = raw_input.get("args")
            if name == "command" and is_string_list(args) and args:
                lines.append(shlex.join([value, *args]))
            else:
                lines.append(value)
        elif is_string_list(value) and value:
            lines.append(_argv_line(value))
    return lines


def is_string_list(value: Any) -> TypeGuard[list[str]]:
    return isinstance(value, list) and all(isinstance(item, str) for item in value)


def _argv_line(argv: list[str]) -> str:
    """An argv as the line it runs: `bash -lc SCRIPT` is SCRIPT, anything else its shell quoting."""
    if len(argv) >= 3 and os.path.basename(argv[0]) in SHELLS:
        for i, arg in enumerate(argv[1:-1], start=1):
            if arg.startswith("-") and not arg.startswith("--") and "c" in arg:
                return argv[i + 1]
    return shlex.join(argv)


_SEPARATORS = frozenset(";&|()\n")


_OPAQUE = ("$(", "`", "<(", ">(")  # what runs there cannot be read off the line


def simple_commands(line: str) -> list[str] | None:
    """The simple commands of a shell line (split at `;`, `&&`, `||`, `|`, `&`, newlines, parens),
    each as its words joined by one space; None when that cannot be told from the text (unbalanced
    quotes, command or process substitution)."""
    commands = _command_words(line)
    return None if commands is None else [" ".join(words) for words in commands]


def _command_words(line: str) -> list[list[str]] | None:
    if any(mark in line for mark in _OPAQUE):
        return None
    lexer = shlex.shlex(line, posix=True, punctuation_chars=";&|()\n")
    lexer.whitespace = " \t\r"
    lexer.whitespace_split = True
    lexer.commenters = ""  # `a#b; rm x` must not hide `rm x`
    try:
        tokens = list(lexer)
    except ValueError:
        return None
    commands: list[list[str]] = [[]]
    for i, token in enumerate(tokens):
        # `2>&1` and `&>file` are redirections, not a command sent to the background.
        after = tokens[i + 1] if i + 1 < len(tokens) else ""
        before = tokens[i - 1] if i > 0 else ""
        redirect = token == "&" and (before.endswith((">", "<")) or after.startswith(">"))
        if token and set(token) <= _SEPARATORS and not redirect:
            commands.append([])
        else:
            commands[-1].append(token)
    return [words for words in commands if words]


# What a reject rule sees through: `VAR=value`, these wrappers, and `sh -c SCRIPT` (and the like).
WRAPPERS = ("sudo", "env", "nohup", "time", "exec", "command", "nice")


def _unwrapped(words: list[str]) -> list[str]:
    while words and (re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=\S*", words[0]) or words[0] in WRAPPERS):
        words = words[1:]
    return words


def _any_candidates(line: str, depth: int = 0) -> list[str]:
    """Everything a reject or ask rule tries its globs on: the line, each simple command, each
    without its wrappers, and the scripts handed to a shell with `-c`."""
    found = [line.strip()]
    for words in _command_words(line) or ():
        inner = _unwrapped(words)
        found += [" ".join(words), " ".join(inner)]
        if depth < 3 and len(inner) >= 3 and os.path.basename(inner[0]) in SHELLS:
            script = _argv_line(inner)
            if script != shlex.join(inner):
                found += _any_candidates(script, depth + 1)
    return found


def commands_match(globs: Sequence[str], lines: Sequence[str], *, every: bool) -> bool:
    """`every`: each simple command of each line matches a glob (an opaque line never does).
    Otherwise: any line, or anything in it a command could hide behind (see `_any_candidates`)."""
    if not lines:
        return False

    def hit(text: str) -> bool:
        return any(fnmatch.fnmatchcase(text, glob) for glob in globs)

    if every:
        for line in lines:
            commands = simple_commands(line)
            if not commands or not all(hit(command) for command in commands):
                return False
        return True
    return any(hit(candidate) for line in lines for candidate in _any_candidates(line))
