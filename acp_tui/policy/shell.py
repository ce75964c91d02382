"""Command lines read as a shell would run them: what a command rule matches.

A line is read by a small tokenizer of bash's grammar, on the raw text: quotes, backslash escapes,
comments, `$(...)`, backticks, `${...}`, here-documents, and every separator and redirection
operator are found before any quote is removed, so a quoted `'>'` is a word and `&` followed by a
blank always ends a command. What cannot be read off the text (substitutions, `eval`, a shell
reading a script from its input or a file, a variable as the command name) makes the line opaque:
an allow rule never matches it, while a reject rule still sees every command found in it, and reads
any program's arguments as a command it may run (`flock /tmp/l git push`, `su -c 'git push' me`).
"""

from __future__ import annotations

import functools
import os
import re
import shlex
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple, TypeGuard

# Raw-input fields holding the command line, as agents send them: Claude Code's Bash `command`
# (a string), Codex's exec approval `command` (an argv list, often ["bash", "-lc", SCRIPT]), `cmd`
# and `argv` elsewhere; `command` + `args` as in ACP's terminal/create.
COMMAND_FIELDS = ("command", "cmd", "argv")


SHELLS = frozenset(
    {"sh", "bash", "rbash", "zsh", "dash", "ash", "ksh", "mksh", "yash", "fish", "csh", "tcsh"}
)


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
    if os.path.basename(argv[0]) in SHELLS and (script := shell_script(argv)) is not None:
        return script
    return shlex.join(argv)


def shell_script(argv: Sequence[str]) -> str | None:
    """The script of `sh [OPTIONS] -c SCRIPT [NAME ARGS...]`: `-c` counts only among the leading
    options (`bash evil.sh -c x` runs evil.sh). None when the shell reads its script from a file or
    its input, or sources a file of its choosing first (`--rcfile`, `--init-file`)."""
    command, i = False, 1
    while i < len(argv):
        arg = argv[i]
        i += 1
        if arg in ("--", "-"):
            break
        if arg in ("--rcfile", "--init-file"):
            return None
        if arg.startswith("--"):
            continue
        if len(arg) > 1 and arg[0] in "-+":
            command |= arg[0] == "-" and "c" in arg
            i += ("o" in arg) + ("O" in arg)  # `-o NAME`, `-O NAME` take the next word
            continue
        i -= 1
        break
    return argv[i] if command and i < len(argv) else None


# Reading a line -----------------------------------------------------------------------------------


class Word(NamedTuple):
    text: str  # after quote removal; an expansion stays as written (`$HOME`, `$(date)`)
    raw: str  # as written
    expands: bool = False  # holds an expansion or substitution: its value is not on the line
    pattern: bool = False  # holds an unquoted `*`, `?`, `[...]` or `{a,b}`: pathname or brace
    # expansion may change it


# Redirections that open their file for writing (`<>` too: it creates the file).
WRITING = frozenset({">", ">>", ">|", "&>", "&>>", "<>", ">&"})
HARMLESS = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr"})


@dataclass(slots=True)
class Redirect:
    op: str  # `>`, `>>`, `<`, `&>`, `<<`, `<<<`, ... (an fd number before it is dropped)
    target: Word | None  # the file; None for an fd duplication, a here-document or a here-string
    body: str = ""  # a here-document's or here-string's text (filled when the line reaches it)

    def writes_file(self) -> bool:
        """Opens a file other than /dev/null (and the like) for writing."""
        return (
            self.target is not None
            and self.op in WRITING
            and (self.target.expands or self.target.pattern or self.target.text not in HARMLESS)
        )


class Command(NamedTuple):
    """One simple command: its words (redirections apart) and redirections."""

    words: tuple[Word, ...]
    redirects: tuple[Redirect, ...]
    calls: tuple[tuple[Word, ...], ...]  # the command as each layer passes it on (see _calls)

    @property
    def text(self) -> str:
        return " ".join(word.text for word in self.words)


@dataclass(frozen=True)
class Reading:
    """A line as the shell will run it."""

    commands: tuple[Command, ...]  # every simple command, those inside substitutions too
    opaque: str | None  # why what runs cannot be read off the text; None: it can
    unreadable: bool = False  # too deep or too long to read (see _Unreadable): nothing is known


MAX_DEPTH = 8  # substitutions within substitutions, scripts handed to shells within scripts
MAX_COMMANDS = 10_000  # simple commands in one script: no person wrote more, and reading costs


class _Unreadable(Exception):
    """Nested deeper than MAX_DEPTH, longer than MAX_COMMANDS, or wrapped more than MAX_CALLS times."""


def read_line(line: str) -> Reading:
    return _read(line, 0)


@functools.lru_cache(maxsize=8)  # an agent's lines: a few, as large as it likes
def _read(text: str, depth: int) -> Reading:
    try:
        lexer = _Lexer(text, depth)
        lexer.script(closing=False)
    except _Unreadable:
        return Reading((), "too deep or too long to read", unreadable=True)
    opaque = lexer.opaque
    for command in lexer.commands:
        opaque = opaque or _opacity(command)
    return Reading(tuple(lexer.commands), opaque)


def simple_commands(line: str) -> list[str] | None:
    """The simple commands of a shell line, each as its words joined by one space; None when what
    runs cannot be read off the text (see `Reading.opaque`)."""
    reading = read_line(line)
    return None if reading.opaque else [command.text for command in reading.commands]


_METACHARS = frozenset(" \t\n;&|()<>")
_PLAIN = re.compile(r"[^ \t\n;&|()<>\\'\"$`*?\[\]]+")
# Plain words (none starting with `#`: a comment) and the blanks between them.
_PLAIN_WORDS = re.compile(
    r"[^ \t\n;&|()<>\\'\"$`*?\[\]#][^ \t\n;&|()<>\\'\"$`*?\[\]]*"
    r"(?:[ \t]+[^ \t\n;&|()<>\\'\"$`*?\[\]#][^ \t\n;&|()<>\\'\"$`*?\[\]]*)*"
)
_IN_DOUBLE_QUOTES = re.compile(r'[^"\\$`]+')
_IN_HEREDOC = re.compile(r"[^\\$`]+")
_IN_BACKTICKS = re.compile(r"[^`\\]+")
_IN_BRACES = re.compile(r"[^{}\\'\"$`]+")
_IN_ANSI_C = re.compile(r"[^\\']+")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_FD = re.compile(r"[0-9]+|\{[A-Za-z_][A-Za-z0-9_]*\}")  # `2>`, `{var}>`
_FD_DUPLICATE = re.compile(r"[0-9]+-?|-")  # `>&2`, `2>&-`, `>&3-`
# `${name}`, `${#name}` and the operators that only substitute text; others (`${!x}`, `${a[i]}`,
# `${x@P}`, `${x:i}`) can evaluate a variable's value as arithmetic or a prompt: code.
_PLAIN_PARAMETER = re.compile(
    r"#?(?:[A-Za-z_][A-Za-z0-9_]*|[0-9]+|[@*#?$!-])(?:(?::?[-=?+]|##?|%%?|//?|\^\^?|,,?).*)?", re.DOTALL
)
_BLANKS = re.compile("[ \t]+")
_REDIRECTIONS = frozenset({"&>>", "&>", "<<<", "<<-", "<<", "<>", "<&", ">>", ">&", ">|", "<", ">"})
# Every operator, longest first: `&>` is a redirection, `&` followed by anything else a separator.
_OPERATOR = re.compile(r"&>>|&>|<<<|<<-|<<|<>|<&|>>|>&|>\||<|>|&&|\|\||;;&|;;|;&|\|&|;|&|\|")
_ANSI_C_ESCAPES = {
    "a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b", "f": "\f", "n": "\n", "r": "\r", "t": "\t",
    "v": "\v", "\\": "\\", "'": "'", '"': '"', "?": "?",
}  # fmt: skip
_ANSI_C_NUMBERS = {
    "x": (16, re.compile("[0-9a-fA-F]{1,2}")),
    "u": (16, re.compile("[0-9a-fA-F]{1,4}")),
    "U": (16, re.compile("[0-9a-fA-F]{1,8}")),
}
_OCTAL = re.compile("[0-7]{1,3}")


class _Lexer:
    """Reads commands off `text` from `i` on, char by char but for runs of plain text: linear."""

    def __init__(self, text: str, depth: int) -> None:
        if depth > MAX_DEPTH:
            raise _Unreadable
        self.text = text
        self.i = 0
        self.depth = depth
        self.commands: list[Command] = []
        self.opaque: str | None = None

    def because(self, why: str) -> None:
        self.opaque = self.opaque or why

    def take(self, run: re.Pattern[str], parts: list[str]) -> bool:
        """The run of plain characters at `i`, if there is one, added to `parts`."""
        found = run.match(self.text, self.i)
        if found:
            parts.append(found.group())
            self.i = found.end()
        return found is not None

    def nested(self, text: str, start: int = 0) -> _Lexer:
        inner = _Lexer(text, self.depth + 1)
        inner.i = start
        return inner

    def merge(self, inner: _Lexer) -> None:
        self.commands += inner.commands
        if inner.opaque:
            self.because(inner.opaque)

    def script(self, *, closing: bool) -> None:
        """Commands up to the end of the text, or (`closing`) to the `)` of a substitution."""
        text, n = self.text, len(self.text)
        words: list[Word] = []
        redirects: list[Redirect] = []
        heredocs: list[tuple[Redirect, str, bool, bool]] = []  # (redirect, delimiter, tabs, expands)
        parens = 0

        def end() -> None:
            if words or redirects:
                if len(self.commands) >= MAX_COMMANDS:
                    raise _Unreadable
                written = tuple(words)
                self.commands.append(Command(written, tuple(redirects), _calls(written, self.depth)))
            words.clear()
            redirects.clear()

        while self.i < n:
            char = text[self.i]
            if char in " \t":
                self.i = _BLANKS.match(text, self.i).end()  # type: ignore[union-attr]
            elif text.startswith("\\\n", self.i):  # a line continuation between words
                self.i += 2
            elif char == "\n":
                self.i += 1
                end()
                self.heredocs(heredocs)
                heredocs.clear()
            elif char == "#":  # a comment: up to the newline
                newline = text.find("\n", self.i)
                self.i = n if newline < 0 else newline
            elif char in "<>&;|" and not text.startswith(("<(", ">("), self.i):
                op = _OPERATOR.match(text, self.i).group()  # type: ignore[union-attr]
                self.i += len(op)
                if op not in _REDIRECTIONS:
                    end()
                elif redirect := self.redirect(op, heredocs):
                    redirects.append(redirect)
            elif char == "(":
                self.i += 1
                parens += 1
                end()
            elif char == ")":
                self.i += 1
                end()
                if parens:
                    parens -= 1
                elif closing:
                    return
                else:
                    self.because("unbalanced parentheses")
            else:
                if run := _PLAIN_WORDS.match(text, self.i):  # plain words: split at once
                    plain = _BLANKS.split(run.group())
                    stop = run.end()
                    if stop < n and text[stop] not in " \t\n;&|()":
                        stop -= len(plain.pop())  # it goes on (`x'y'`) or names a descriptor (`2>`)
                    words += [_plain_word(word) for word in plain]
                    self.i = stop
                    if plain:
                        continue
                word = self.word()
                if text.startswith(("<", ">"), self.i) and _FD.fullmatch(word.raw):
                    continue  # `2>file`: the number names the descriptor, it is no word
                words.append(word)
        end()
        self.heredocs(heredocs)
        if closing:
            self.because("an unterminated substitution")
        elif parens:
            self.because("unbalanced parentheses")

    def redirect(self, op: str, heredocs: list[tuple[Redirect, str, bool, bool]]) -> Redirect | None:
        text = self.text
        while text.startswith((" ", "\t"), self.i):
            self.i += 1
        if self.i >= len(text) or (text[self.i] in _METACHARS and not text.startswith(("<(", ">("), self.i)):
            self.because("a redirection without a target")
            return None
        if op in (">&", "<&") and text.startswith("-", self.i):  # bash: `>&-c` closes, then `c`
            self.i += 1
            return Redirect(op, None)
        target = self.word()
        if op in ("<<", "<<-"):
            redirect = Redirect(op, None)
            quoted = any(mark in target.raw for mark in "'\"\\")
            heredocs.append((redirect, target.text, op == "<<-", not quoted))
            return redirect
        if op == "<<<":
            return Redirect(op, None, target.text)
        if op in (">&", "<&") and not target.expands and _FD_DUPLICATE.fullmatch(target.text):
            return Redirect(op, None)
        if op == ">&" and any(mark in target.text for mark in "'\"\\"):
            target = target._replace(expands=True)  # bash removes quotes from this name twice
        return Redirect(op, target)

    def heredocs(self, pending: list[tuple[Redirect, str, bool, bool]]) -> None:
        """The bodies of the here-documents opened on the line just ended: they follow it."""
        for redirect, delimiter, tabs, expands in pending:
            closing = re.compile("^" + ("\t*" if tabs else "") + re.escape(delimiter) + "$", re.MULTILINE)
            found = closing.search(self.text, self.i)
            end = found.start() if found else len(self.text)
            body = self.text[self.i : end]
            redirect.body = re.sub(r"(?m)^\t+", "", body) if tabs else body
            self.i = min(found.end() + 1, len(self.text)) if found else len(self.text)
            if expands:  # an unquoted delimiter: `$(...)` and backticks in the body run
                inner = _Lexer(body, self.depth)
                inner.quoted([], terminator=None)
                self.merge(inner)

    def word(self) -> Word:
        text, n, start = self.text, len(self.text), self.i
        plain = _PLAIN.match(text, start)
        if plain and (plain.end() == n or text[plain.end()] in _METACHARS):  # most words
            self.i = plain.end()
            return _plain_word(plain.group())
        parts: list[str] = []
        expands = pattern = bracket = False
        while self.i < n:
            if self.take(_PLAIN, parts):
                continue
            char = text[self.i]
            if text.startswith(("<(", ">("), self.i):
                self.because("process substitution")
                self.substitution(parts, start=self.i, skip=2)
                expands = True
            elif char in _METACHARS:
                break
            elif char == "\\":
                if self.i + 1 == n and "\n" in text:  # bash keeps it, or not: it depends on quotes
                    self.because("a backslash ending a script of several lines")
                elif not text.startswith("\n", self.i + 1):  # else a line continuation: nothing
                    parts.append(text[self.i + 1 : self.i + 2] or "\\")
                self.i = min(self.i + 2, n)
            elif char == "'":
                close = text.find("'", self.i + 1)
                if close < 0:
                    self.because("unbalanced quotes")
                    close = n
                parts.append(text[self.i + 1 : close])
                self.i = close + 1
            elif text.startswith("$'", self.i):
                self.ansi_c(parts)
            elif char == '"' or text.startswith('$"', self.i):
                self.i += 1 if char == '"' else 2
                expands |= self.quoted(parts, terminator='"')
            elif char == "$":
                expands |= self.dollar(parts)
            elif char == "`":
                self.backticks(parts)
                expands = True
            else:  # `*`, `?`, `[`, `]`
                pattern |= char in "*?" or (char == "]" and bracket)
                bracket |= char == "["
                parts.append(char)
                self.i += 1
        raw = text[start : self.i].replace("\\\n", "")  # bash drops line continuations first
        return Word("".join(parts), raw, expands, pattern or _braced(raw))

    def quoted(self, parts: list[str], *, terminator: str | None) -> bool:
        """Inside double quotes (or a here-document's body: no terminator); True if it expands."""
        text, n = self.text, len(self.text)
        run = _IN_DOUBLE_QUOTES if terminator else _IN_HEREDOC
        expands = False
        while self.i < n:
            if self.take(run, parts):
                continue
            char = text[self.i]
            if char == terminator:
                self.i += 1
                return expands
            if char == "\\":
                escaped = text[self.i + 1 : self.i + 2]
                if escaped and escaped in ("$", "`", "\\", "\n", terminator or "$"):
                    parts.append("" if escaped == "\n" else escaped)
                    self.i += 2
                else:
                    parts.append("\\")
                    self.i += 1
            elif char == "$":
                expands |= self.dollar(parts)
            else:  # a backtick
                self.backticks(parts)
                expands = True
        if terminator:
            self.because("unbalanced quotes")
        return expands

    def dollar(self, parts: list[str]) -> bool:
        """At a `$`: an expansion (True) or a plain `$` (False)."""
        text, start = self.text, self.i
        after = text[start + 1 : start + 2]
        if after == "(":
            if text.startswith("$((", start):
                self.because("arithmetic expansion")  # it can run a variable's value as code
            self.because("command substitution")
            self.substitution(parts, start=start, skip=2)
        elif after == "[":  # `$[...]`, the old arithmetic expansion
            self.because("arithmetic expansion")
            close = text.find("]", start)
            self.i = len(text) if close < 0 else close + 1
            parts.append(text[start : self.i])
        elif after == "{":
            self.i += 2
            self.parameter()
            parts.append(text[start : self.i])
        elif name := _NAME.match(text, start + 1):
            self.i = name.end()
            parts.append(text[start : self.i])
        elif after and after in "@*#?$!-0123456789":
            self.i += 2
            parts.append(text[start : self.i])
        else:
            self.i += 1
            parts.append("$")
            return False
        return True

    def substitution(self, parts: list[str], *, start: int, skip: int) -> None:
        """`$(...)`, `<(...)`, `>(...)`: a script up to its `)`, read for what it runs."""
        inner = self.nested(self.text, start + skip)
        inner.script(closing=True)
        self.i = inner.i
        self.merge(inner)
        parts.append(self.text[start : self.i])

    def backticks(self, parts: list[str]) -> None:
        text, n, start = self.text, len(self.text), self.i
        self.because("command substitution")
        self.i += 1
        content: list[str] = []
        while self.i < n and text[self.i] != "`":
            if self.take(_IN_BACKTICKS, content):
                continue
            escaped = text[self.i + 1 : self.i + 2] in ("`", "$", "\\")  # at a backslash
            content.append(text[self.i + 1] if escaped else "\\")
            self.i += 2 if escaped else 1
        if self.i >= n:
            self.because("unbalanced backticks")
        self.i = min(self.i + 1, n)
        inner = self.nested("".join(content))
        inner.script(closing=False)
        self.merge(inner)
        parts.append(text[start : self.i])

    def parameter(self) -> None:
        """`${...}` from after its `{` to its `}`."""
        text, n, start = self.text, len(self.text), self.i
        level = 0
        while self.i < n:
            if self.take(_IN_BRACES, []):
                continue
            char = text[self.i]
            if char == "}" and not level:
                if not _PLAIN_PARAMETER.fullmatch(text, start, self.i):
                    self.because("an expansion that can evaluate a variable's value")
                self.i += 1
                return
            if char in "{}":
                level += 1 if char == "{" else -1
                self.i += 1
            elif char == "\\":
                self.i += 2
            elif char == "'":
                close = text.find("'", self.i + 1)
                self.i = n if close < 0 else close + 1
            elif char == '"':
                self.i += 1
                self.quoted([], terminator='"')
            elif char == "$":
                self.dollar([])
            else:
                self.backticks([])
        self.because("unbalanced braces")

    def ansi_c(self, parts: list[str]) -> None:
        """`$'...'`, its escapes decoded (`$'\\x67it'` is `git`)."""
        text, n = self.text, len(self.text)
        self.i += 2
        while self.i < n:
            if self.take(_IN_ANSI_C, parts):
                continue
            if text[self.i] == "'":
                self.i += 1
                return
            escape = text[self.i + 1 : self.i + 2]
            number = _ANSI_C_NUMBERS.get(escape)
            if escape in _ANSI_C_ESCAPES:
                parts.append(_ANSI_C_ESCAPES[escape])
                self.i += 2
            elif number and (digits := number[1].match(text, self.i + 2)):
                parts.append(chr(min(int(digits.group(), number[0]), 0x10FFFF)))
                self.i = digits.end()
            elif digits := _OCTAL.match(text, self.i + 1):
                parts.append(chr(int(digits.group(), 8)))
                self.i = digits.end()
            elif escape == "c" and self.i + 2 < n:
                parts.append(chr(ord(text[self.i + 2]) & 0x1F))
                self.i += 3
            else:
                parts.append("\\" + escape)
                self.i += 2
        self.because("unbalanced quotes")


def _plain_word(text: str) -> Word:
    return Word(text, text, pattern=_braced(text))


def _braced(raw: str) -> bool:
    """The word as written holds a brace expression."""
    try:
        return "{" in raw and _brace_expansions(raw) != [raw]
    except _Unreadable:  # one that gives too many words: one all the same
        return True


# Brace expansion: `{git,} push` runs `git push` ------------------------------------------------

MAX_BRACES = 1024  # words one brace expansion may give: more is unreadable
# What bracex, which knows no shell quotes, must not expand: an escaped character, `'...'`, `$'...'`, `"..."`.
_QUOTED = re.compile(r"""\\.|'[^']*'?|\$?"(?:[^"\\]|\\.)*"?|\$'(?:[^'\\]|\\.)*'?""", re.DOTALL)
_HELD = re.compile("\0([0-9]+)\0")


def _brace_expansions(raw: str) -> list[str]:
    """The words a word as written (quotes kept) expands to, braces expanded as bash does (bracex,
    its quoted parts held apart); an empty word goes."""
    import bracex  # only a word with a brace needs it

    if "\0" in raw:  # no shell word holds a NUL: nothing here reads it
        raise _Unreadable
    held: list[str] = []

    def hold(quoted: re.Match[str]) -> str:
        held.append(quoted.group())
        return f"\0{len(held) - 1}\0"

    try:
        words = bracex.expand(_QUOTED.sub(hold, raw), keep_escapes=True, limit=MAX_BRACES)
    except bracex.ExpansionLimitException:
        raise _Unreadable from None
    return [_HELD.sub(lambda at: held[int(at[1])], word) for word in words if word]


def _expanded(words: tuple[Word, ...], depth: int) -> tuple[Word, ...]:
    """The words after brace expansion, each expansion read as a word again."""
    found: list[Word] = []
    for word in words:
        if word.pattern and "{" in word.raw:
            for raw in _brace_expansions(word.raw):
                inner = _Lexer(raw, depth + 1)
                found.append(inner.word())
        else:
            found.append(word)
        if len(found) > 4 * MAX_BRACES:
            raise _Unreadable
    return tuple(found)


# What a command runs ------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Options:
    """How a wrapper takes its options before the command it runs."""

    valued: str = ""  # short options that take a value (`-u USER`, `-uUSER`)
    long_valued: frozenset[str] = frozenset()  # long ones (`--user USER`; `--user=USER` always)
    attached: str = ""  # short options whose value, if any, is attached (`xargs -i{}`)
    operands: int = 0  # words between the options and the command (`timeout DURATION`)


# What a reject rule sees through: `NAME=value`, these wrappers (with their options), an absolute
# program path, git's options before its subcommand, `find -exec`, and scripts handed to a shell.
WRAPPERS = {
    "env": _Options("uCSP", frozenset({"unset", "chdir", "split-string"})),
    "sudo": _Options(
        "CDghpRrTtUu",
        frozenset({"close-from", "chdir", "group", "host", "prompt", "chroot", "role", "type"})
        | frozenset({"command-timeout", "other-user", "user"}),
    ),
    "doas": _Options("uC"),
    "nice": _Options("n", frozenset({"adjustment"})),
    "nohup": _Options(),
    "time": _Options("fo", frozenset({"format", "output"})),
    "exec": _Options("a"),
    "command": _Options(),
    "builtin": _Options(),
    "setsid": _Options(),
    "timeout": _Options("ks", frozenset({"kill-after", "signal"}), operands=1),
    "stdbuf": _Options("ioe", frozenset({"input", "output", "error"})),
    "ionice": _Options("cnpPu", frozenset({"class", "classdata", "pid", "pgid", "uid"})),
    "xargs": _Options(
        "adEILnPs",
        frozenset({"arg-file", "delimiter", "eof", "replace", "max-lines", "max-args", "max-procs"})
        | frozenset({"max-chars", "process-slot-var"}),
        attached="eil",
    ),
}
RESERVED = frozenset({"!", "{", "if", "then", "elif", "else", "do", "while", "until", "coproc"})
GIT_VALUED = frozenset(
    {"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--super-prefix", "--config-env"}
)
FIND_EXEC = frozenset({"-exec", "-execdir", "-ok", "-okdir"})
# Builtins that run text they are given (or a file) as shell code.
RUNS_TEXT = frozenset({"eval", "source", ".", "trap"})
MAX_CALLS = 64  # views of one command (wrappers within wrappers): more is unreadable
# A program name no layer above applies to: most commands, read at once.
_LAYERED = "|".join(map(re.escape, [*WRAPPERS, *RESERVED, "git", "find"]))
_SIMPLE = re.compile(rf"(?!(?:{_LAYERED})$)[A-Za-z0-9_.+:@%^,-]+")
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\[[^\]]*\])?\+?=")


def _calls(words: tuple[Word, ...], depth: int) -> tuple[tuple[Word, ...], ...]:
    """The command as written, then as each layer passes it on: without its leading `NAME=value`
    and reserved words, its program by its base name, without a wrapper and its options, git
    without its options before the subcommand and with a `-c alias.NAME=` it is given; each
    `find -exec` command; and, wherever `git` is among its arguments, the git command from there
    (`flock /tmp/l git -C . push`: any program may run its arguments as a command)."""
    if depth > MAX_DEPTH:
        raise _Unreadable
    if any(word.pattern and "{" in word.raw for word in words):
        return (words, *_calls(_expanded(words, depth), depth + 1))
    if not words or (_SIMPLE.fullmatch(words[0].raw) and not any(map(_is_git, words[1:]))):
        return (words,) if words else ()
    calls = [words]
    aliased: tuple[Word, ...] = ()
    while words:
        head = words[0]
        if _ASSIGNMENT.match(head.raw) or head.text in RESERVED:
            words = words[1:]
        elif "/" in head.text and (base := head.text.rsplit("/", 1)[1]):
            words = (Word(base, base, head.expands, head.pattern), *words[1:])
        elif head.text in WRAPPERS:
            words = _unwrapped(words, depth)
        elif head.text == "git" and words[1:] and words[1].text.startswith("-"):
            words, aliased = _git_subcommand(words, depth)
        else:
            break
        calls.append(words)
        if len(calls) > MAX_CALLS:
            raise _Unreadable
    if aliased:
        calls += _calls(aliased, depth + 1)
    for i, word in enumerate(words[1:], start=1):
        if _is_git(word):
            calls += _calls(words[i:], depth + 1)
        elif word.text in FIND_EXEC and words[0].text == "find":
            command = words[i + 1 :]
            end = next((j for j, w in enumerate(command) if w.text in (";", "+")), len(command))
            calls += _calls(command[:end], depth + 1)
        if len(calls) > MAX_CALLS:
            raise _Unreadable
    return tuple(call for call in calls if call)


def _is_git(word: Word) -> bool:
    return word.text == "git" or word.text.endswith("/git")


def _unwrapped(words: tuple[Word, ...], depth: int) -> tuple[Word, ...]:
    """What a wrapper (`sudo -u root`, `env -i`, `timeout 5`, ...) runs: the words after its options."""
    name, options = words[0].text, WRAPPERS[words[0].text]
    i = 1
    while i < len(words):
        arg = words[i].text
        value: str | None = None
        if arg == "--":
            i += 1
            break
        if arg.startswith("--"):
            key, equals, given = arg[2:].partition("=")
            if key in options.long_valued:
                value = given if equals else (words[i + 1].text if i + 1 < len(words) else "")
                i += 0 if equals else 1
            if name == "env" and key == "split-string":
                return (*_split(value or "", depth), *words[i + 1 :])
        elif len(arg) > 1 and arg[0] == "-":
            for k, letter in enumerate(arg[1:], start=1):
                if letter in options.attached:
                    break
                if letter in options.valued:
                    value = arg[k + 1 :]
                    if not value and i + 1 < len(words):
                        i += 1
                        value = words[i].text
                    if name == "env" and letter == "S":
                        return (*_split(value, depth), *words[i + 1 :])
                    break
        elif not (arg == "-" and name == "env") and not (
            name in ("env", "sudo") and _ASSIGNMENT.match(words[i].raw)
        ):
            break
        i += 1
    return words[i + options.operands :]


def _split(string: str, depth: int) -> list[Word]:
    """`env -S STRING`: the words STRING splits into."""
    inner = _Lexer(string, depth + 1)
    inner.script(closing=False)
    return [word for command in inner.commands for word in command.words]


def _git_subcommand(words: tuple[Word, ...], depth: int) -> tuple[tuple[Word, ...], tuple[Word, ...]]:
    """`git` without its options before the subcommand; and, when an option defines the
    subcommand as an alias, what the alias runs (else empty): `git VALUE...`, or `sh -c COMMAND`
    for `!COMMAND`; a command name that expands when the alias is taken from a variable
    (`--config-env=alias.NAME=VAR`)."""
    aliases: dict[str, Word] = {}
    i = 1
    while i < len(words) and words[i].text.startswith("-"):
        option, _, setting = words[i].text.partition("=")
        if not setting and option in ("-c", "--config-env") and i + 1 < len(words):
            setting = words[i + 1].text
        if option in ("-c", "--config-env") and setting.lower().startswith("alias."):
            name, _, value = setting[6:].partition("=")
            from_variable = option == "--config-env"
            aliases[name.lower()] = Word(f"${value}" if from_variable else value, value, from_variable)
        i += 2 if words[i].text in GIT_VALUED else 1
    view = (words[0], *words[i:])
    alias = aliases.get(view[1].text.lower()) if view[1:] else None
    if alias is None:
        return view, ()
    if alias.expands:
        return view, (alias, *view[2:])
    if alias.text.startswith("!"):  # git runs it with the shell, the arguments after it
        return view, (Word("sh", "sh"), Word("-c", "-c"), Word(alias.text[1:], alias.text[1:]), *view[2:])
    return view, (words[0], *_split(alias.text, depth), *view[2:])


def _opacity(command: Command) -> str | None:
    """Why what this command runs cannot be read off its text, if it cannot."""
    for call in command.calls:
        head = call[0]
        if _ASSIGNMENT.match(head.raw) or head.text in RESERVED:
            continue
        if head.expands or head.pattern:
            return "a command name that expands"
        if head.text == "{}":
            return "a command named by what find, xargs or parallel fill in"
        if head.text == "parallel":
            return "`parallel` builds its commands from its input"
        if head.text in RUNS_TEXT:
            return f"`{head.text}` runs text that is not on the line"
        if head.text in SHELLS and shell_script([word.text for word in call]) is None:
            return "a shell reading its script from its input or a file"
    return None


def _scripts(command: Command) -> Iterator[str]:
    """The scripts a command hands a shell: `sh -c SCRIPT`, `eval ARGS`, `trap SCRIPT`, the
    values `alias NAME=VALUE` defines, and a here-document or here-string given to a shell that
    reads its input."""
    for call in command.calls:
        name, args = call[0].text, [word.text for word in call[1:]]
        if name in SHELLS:
            script = shell_script([name, *args])
            if script is not None:
                yield script
            else:
                yield from (r.body for r in command.redirects if r.op in ("<<", "<<-", "<<<"))
        elif name == "eval":
            yield " ".join(args)
        elif name == "trap":
            yield from [arg for arg in args if not arg.startswith("-")][:1]
        elif name == "alias":
            yield from (arg.partition("=")[2] for arg in args if "=" in arg)


class Candidates(NamedTuple):
    """What a reject or ask rule tries its globs on (see `any_candidates`)."""

    texts: tuple[str, ...]  # matched whole
    tails: tuple[str, ...]  # matched from any of their words on (see `rules.commands_match`)
    opaque: str | None  # the line, or a script it hands a shell, cannot be read off the text
    unreadable: bool  # part of it is nested too deep or too long to read: nothing is known


# A word a program may run as a command line: it has a blank, a newline or an operator in it.
_LINE_LIKE = re.compile(r"[ \t\n;&|<>()]")


@functools.lru_cache(maxsize=8)  # an agent's lines: a few, as large as it likes
def any_candidates(line: str, depth: int = 0) -> Candidates:
    """The line; each simple command (those in substitutions too) as written and as each layer
    passes it on (see `_calls`); and the words of each from any word on, since any program may
    run its arguments as a command (`flock /tmp/l git push`, `watch -n 60 git push`). The same for
    the scripts they hand a shell (`_scripts`), and for each argument that reads as a command line
    (`su -c 'git push' me`, `ssh host 'git push'`) or the value of a `NAME=value` one: the line
    only names them, unless a program runs them, but which program does is not on any list."""
    reading = _read(line, depth)
    if reading.unreadable:
        return Candidates((), (), None, True)
    texts, tails, opaque = [line.strip()], [], reading.opaque
    nested: dict[str, bool] = {}  # each script, and whether its opacity is the line's
    for command in reading.commands:
        for call in command.calls:
            texts.append(" ".join(word.text for word in call))
            tails.append(" ".join(_base_name(word.text) for word in call[1:]))
        nested.update(dict.fromkeys(_scripts(command), True))
        for word in command.words:  # one that expands: its substitutions are read already
            for text in () if word.expands else (word.text, word.text.partition("=")[2]):
                if _LINE_LIKE.search(text):
                    nested.setdefault(text, False)
    for script, runs in nested.items():
        inner = any_candidates(script, depth + 1)
        if inner.unreadable:
            return inner
        texts += inner.texts
        tails += inner.tails
        opaque = opaque or (inner.opaque if runs else None)
    return Candidates(tuple(texts), tuple(tails), opaque, False)


def _base_name(word: str) -> str:
    """A program's path by its name (`/usr/bin/git` is `git`), any other word as it is."""
    base = word.rsplit("/", 1)[-1]
    return base if base and not word.startswith("-") else word


def redirect_paths(lines: Sequence[str]) -> tuple[list[str], bool]:
    """The files the lines' redirections open (/dev/null and the like apart), those of the scripts
    they hand a shell included; and whether all of them are known: not when the line is opaque, a
    target expands, or a relative one comes in a line that changes directory."""
    found: list[str] = []
    known = True

    def visit(text: str, depth: int) -> None:
        nonlocal known
        reading = _read(text, depth)
        known = known and not reading.opaque
        moves = any(call[0].text in ("cd", "pushd", "popd") for c in reading.commands for call in c.calls)
        for command in reading.commands:
            for redirect in command.redirects:
                target = redirect.target
                if target is None or (target.text in HARMLESS and not target.expands):
                    continue
                # A quoted `~` is a folder named `~`, not the home.
                path = (
                    "./" + target.text
                    if target.text.startswith("~") and target.raw[:1] != "~"
                    else target.text
                )
                known = known and not (target.expands or target.pattern)
                known = known and not (moves and not path.startswith(("/", "~")))
                found.append(path)
            for script in _scripts(command):
                visit(script, depth + 1)

    for line in lines:
        visit(line, 0)
    return found, known
