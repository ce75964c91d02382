"""Permission policies: who answers `session/request_permission`, and how.

`reject` and `allow` are the RFC's; `allow-once` never picks `allow_always`. `RulePolicy` is the policy
lab's: ordered rules on the tool call's kind, title, command line, paths and the options offered.
`AskPolicy` hands the question to a human (the TUI's modal). Everything here is pure (no I/O): the
same code decides live and in `acp-tui policy check`.
"""

from __future__ import annotations

import fnmatch
import functools
import os
import re
import shlex
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, TypeAlias, TypeGuard

from ..model import PermissionOptionInfo

ALLOW_KINDS = ("allow_once", "allow_always")
TOOL_KINDS = ("read", "edit", "delete", "move", "search", "execute", "think", "fetch", "other")
Action: TypeAlias = Literal["allow", "reject"]
# What a rule may say: `ask` hands the request to a person (headless: the policy's default).
RuleAction: TypeAlias = Literal["allow", "reject", "ask"]
# `first-match`: rules in file order, the first that matches decides. `deny-first`: every reject
# rule is tried before any other (Claude Code's order).
RuleOrder: TypeAlias = Literal["first-match", "deny-first"]


@dataclass(frozen=True)
class PermissionAsk:
    """What the agent asked, flattened for policies and people."""

    title: str
    kind: str | None
    options: tuple[PermissionOptionInfo, ...]
    content: str = ""
    raw_input: Any = None  # the tool call's raw input, as the agent sent it (JSON-shaped)
    locations: tuple[str, ...] = ()  # the paths of the tool call's `locations`
    cwd: str | None = None  # the run's working directory: relative path globs are taken from it


@dataclass(frozen=True)
class PermissionChoice:
    option_id: str | None  # None answers `cancelled`
    rule: str
    # A rule said a person must decide and there was none to ask: `option_id` is the policy's
    # default, for whoever cannot ask (headless runs, `policy check`).
    ask: bool = False


AskHandler: TypeAlias = Callable[[PermissionAsk], Awaitable[str | None]]


class PermissionPolicy(Protocol):
    @property
    def name(self) -> str: ...

    async def decide(self, ask: PermissionAsk) -> PermissionChoice: ...


def choose(options: Sequence[PermissionOptionInfo], action: Action) -> str | None:
    """The option an action picks, in the order offered.

    `reject` takes the first reject-kind option (none: cancelled) and so never approves anything;
    `allow` takes the first allow-shaped option and, when there is none, behaves as `reject`.
    """
    if action == "allow":
        for option in options:
            if option.kind in ALLOW_KINDS:
                return option.option_id
    # An id that an allow option also carries could approve: a reject never picks it.
    approving = {option.option_id for option in options if option.kind in ALLOW_KINDS}
    for option in options:
        if option.kind.startswith("reject") and option.option_id not in approving:
            return option.option_id
    return None


@dataclass(frozen=True)
class FixedPolicy:
    """The RFC's two policies: every request gets the same action."""

    name: Action

    async def decide(self, ask: PermissionAsk) -> PermissionChoice:
        return PermissionChoice(choose(ask.options, self.name), rule=self.name)


@dataclass(frozen=True)
class Rule:
    """Matches when every given criterion matches; a criterion left empty matches anything.

    `commands` and `paths` read what the tool call will really do (see `command_lines` and
    `touched_paths`). Their quantifier follows the action, so that a rule errs on the side of asking
    less: an `allow` rule needs *every* command of the line and *every* path touched to match one of
    its globs, a `reject` or `ask` rule needs *one*. A call with no command (or no path) matches no
    rule that has `commands` (or `paths`).
    """

    name: str
    action: RuleAction
    kinds: tuple[str, ...] = ()
    title: str | None = None  # a glob, case-insensitive
    commands: tuple[str, ...] = ()  # globs on an `execute` call's command line (any may match)
    paths: tuple[str, ...] = ()  # globs on the paths the call touches, relative to the run's cwd
    offered: tuple[str, ...] = ()  # option kinds, one of which the agent must have offered

    def describe(self) -> str:
        """The rule in one line, for people (the policies screen): `NAME: ACTION when ...`."""
        criteria = []
        for label, values in (
            ("kind", self.kinds),
            ("title", (self.title,) if self.title is not None else ()),
            ("command", self.commands),
            ("path", self.paths),
            ("offered", self.offered),
        ):
            if values:
                criteria.append(f"{label} {' or '.join(values)}")
        return f"{self.name}: {self.action} " + (" and ".join(criteria) if criteria else "always")

    def matches(self, ask: PermissionAsk) -> bool:
        if self.kinds and (ask.kind or "other") not in self.kinds:
            return False
        if self.title is not None and not fnmatch.fnmatch(ask.title.lower(), self.title.lower()):
            return False
        if self.offered and not any(option.kind in self.offered for option in ask.options):
            return False
        every = self.action == "allow"
        if self.commands and not commands_match(self.commands, command_lines(ask.raw_input), every=every):
            return False
        return not self.paths or paths_match(self.paths, touched_paths(ask), ask.cwd, every=every)


# What a rule reads of a tool call ---------------------------------------------------------------

# Raw-input fields holding the command line, as agents send them: Claude Code's Bash `command`
# (a string), Codex's exec approval `command` (an argv list, often ["bash", "-lc", SCRIPT]), `cmd`
# and `argv` elsewhere; `command` + `args` as in ACP's terminal/create.
COMMAND_FIELDS = ("command", "cmd", "argv")
# Raw-input fields holding a path: Claude Code (`file_path`, `notebook_path`, `path`), the ACP
# TypeScript example (`path`), others (`filePath`, `paths`, `abs_path`); Codex's patch approval
# `changes` (keys are paths) and its exec approval `parsed_cmd[].path`.
PATH_FIELDS = ("path", "paths", "file_path", "filePath", "notebook_path", "abs_path")
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
            if name == "command" and _strings(args) and args:
                lines.append(shlex.join([value, *args]))
            else:
                lines.append(value)
        elif _strings(value) and value:
            lines.append(_argv_line(value))
    return lines


def _strings(value: Any) -> TypeGuard[list[str]]:
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


def touched_paths(ask: PermissionAsk) -> list[str]:
    """The paths a tool call touches: its `locations`, then the path-like raw-input fields."""
    found = [path for path in ask.locations if path]
    raw = ask.raw_input
    if isinstance(raw, dict):
        for name in PATH_FIELDS:
            value = raw.get(name)
            if isinstance(value, str) and value:
                found.append(value)
            elif _strings(value):
                found.extend(item for item in value if item)
        changes = raw.get("changes")
        if isinstance(changes, dict):
            found.extend(key for key in changes if isinstance(key, str) and key)
        parsed = raw.get("parsed_cmd")
        if isinstance(parsed, list):
            found.extend(
                item["path"]
                for item in parsed
                if isinstance(item, dict) and isinstance(item.get("path"), str)
            )
    return list(dict.fromkeys(found))


def paths_match(globs: Sequence[str], paths: Sequence[str], cwd: str | None, *, every: bool) -> bool:
    """`every`: each path matches a glob; otherwise one does. A glob starting with `/` or `~` is
    absolute; any other is taken from `cwd`, and a path outside `cwd` never matches it."""
    if not paths:
        return False
    compiled = [(_is_absolute(glob), path_glob(glob)) for glob in globs]

    def hit(path: str) -> bool:
        absolute, relative = _placed(path, cwd)
        for is_absolute, pattern in compiled:
            target = absolute if is_absolute else relative
            if target is not None and pattern.match(target):
                return True
        return False

    return all(hit(p) for p in paths) if every else any(hit(p) for p in paths)


def _is_absolute(glob: str) -> bool:
    return glob.startswith(("/", "~"))


def _placed(path: str, cwd: str | None) -> tuple[str | None, str | None]:
    """A path as (absolute, relative to cwd): either is None when it cannot be said (no cwd, or
    the path is outside it)."""
    path = os.path.expanduser(path)
    base = os.path.normpath(cwd) if cwd and os.path.isabs(cwd) else None  # a relative cwd says nothing
    if os.path.isabs(path):
        absolute: str | None = os.path.normpath(path)
    elif base is not None:
        absolute = os.path.normpath(os.path.join(base, path))
    else:
        absolute = None
    if absolute is not None:
        if base is None or os.path.commonpath([base, absolute]) != base:
            return absolute, None
        return absolute, os.path.relpath(absolute, base)
    relative = os.path.normpath(path)
    return None, None if relative == ".." or relative.startswith("../") else relative


@functools.lru_cache(maxsize=512)
def path_glob(glob: str) -> re.Pattern[str]:
    """A path glob as a regex: `**` spans directories (`a/**` is everything under a), `*` and `?`
    stay within one, `[...]` is a class; a trailing `/` means everything under it."""
    glob = os.path.expanduser(glob)
    if glob.endswith("/"):
        glob += "**"
    out, i, n = [], 0, len(glob)
    while i < n:
        if glob.startswith("**", i):
            if glob.startswith("**/", i):
                out.append("(?:.*/)?")
                i += 3
            else:
                out.append(".*")
                i += 2
            continue
        char = glob[i]
        i += 1
        if char == "*":
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        elif char == "[" and (end := glob.find("]", i + 1)) != -1:
            body = glob[i:end]
            negate = body.startswith(("!", "^"))
            body = re.escape(body[1:] if negate else body).replace("\\-", "-")
            out.append(f"[{'^/' if negate else ''}{body}]")
            i = end + 1
        else:
            out.append(re.escape(char))
    try:
        return re.compile("".join(out) + r"\Z")
    except re.error:  # a class such as `[b-a]`: the glob is taken literally
        return re.compile(re.escape(glob) + r"\Z")


# Policies ---------------------------------------------------------------------------------------

RULE_ORDER_RANK = {"reject": 0, "ask": 1, "allow": 2}  # deny-first: Claude Code's deny, ask, allow


@dataclass(frozen=True)
class RulePolicy:
    """Ordered rules; the first that matches decides, else `default`.

    `order = "deny-first"` tries every reject rule first, then the ask rules, then the allow rules
    (each group in file order). An `ask` rule hands the request to `ask_handler` (a person, in the
    app); without one (headless, `policy check`) the policy's default decides, and the rule says so.
    """

    name: str
    rules: tuple[Rule, ...]
    default: Action = "reject"
    order: RuleOrder = "first-match"
    ask_handler: AskHandler | None = field(default=None, compare=False, repr=False)

    def describe(self) -> list[str]:
        """The policy for people: its rules in the order they are tried, then the default."""
        order = " (deny-first: reject rules, then ask, then allow)" if self.order == "deny-first" else ""
        lines = [f"{i}. {rule.describe()}" for i, rule in enumerate(self.ordered_rules(), start=1)]
        return [*lines, f"otherwise: {self.default}{order}"]

    def ordered_rules(self) -> tuple[Rule, ...]:
        if self.order == "deny-first":
            return tuple(sorted(self.rules, key=lambda rule: RULE_ORDER_RANK[rule.action]))
        return self.rules

    async def decide(self, ask: PermissionAsk) -> PermissionChoice:
        for rule in self.ordered_rules():
            if not rule.matches(ask):
                continue
            if rule.action != "ask":
                return PermissionChoice(choose(ask.options, rule.action), rule=rule.name)
            if self.ask_handler is not None:
                return PermissionChoice(await self.ask_handler(ask), rule=f"{rule.name} (asked)")
            return PermissionChoice(
                choose(ask.options, self.default), rule=f"{rule.name} (ask: {self.default})", ask=True
            )
        return PermissionChoice(choose(ask.options, self.default), rule="default")


@dataclass(frozen=True)
class AllowOncePolicy:
    """Allows only through `allow_once` (never `allow_always`, which some agents turn into a lasting
    rule or a mode switch); otherwise it is `reject`."""

    name: str = "allow-once"

    async def decide(self, ask: PermissionAsk) -> PermissionChoice:
        lasting = {option.option_id for option in ask.options if option.kind == "allow_always"}
        for option in ask.options:
            if option.kind == "allow_once" and option.option_id not in lasting:
                return PermissionChoice(option.option_id, rule=self.name)
        return PermissionChoice(choose(ask.options, "reject"), rule=self.name)


@dataclass(frozen=True)
class AskPolicy:
    """A human picks: `handler` shows the ask and returns the chosen option id (None: cancelled)."""

    handler: AskHandler
    name: str = "ask"

    async def decide(self, ask: PermissionAsk) -> PermissionChoice:
        return PermissionChoice(await self.handler(ask), rule="ask")


BUILTIN_POLICIES: dict[str, PermissionPolicy] = {
    "reject": FixedPolicy("reject"),
    "allow": FixedPolicy("allow"),
    "allow-once": AllowOncePolicy(),
}


def resolve_policy(policy: str | PermissionPolicy) -> PermissionPolicy:
    if not isinstance(policy, str):
        return policy
    try:
        return BUILTIN_POLICIES[policy]
    except KeyError:
        raise ValueError(
            f"unknown permission policy {policy!r} (expected one of: {', '.join(BUILTIN_POLICIES)})"
        ) from None
