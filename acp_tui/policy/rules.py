"""Permission policies: `reject` and `allow` (the RFC's), `allow-once` (never `allow_always`), the policy
lab's ordered rules, and `ask` (a person decides).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal, TypeAlias

from acp_tui.policy.ask import Action, AskHandler, PermissionAsk, PermissionChoice, choose
from acp_tui.policy.globs import paths_match, touched_paths, wildcard
from acp_tui.policy.shell import any_candidates, command_lines, read_line

# What a rule may say: `ask` hands the request to a person (headless: the policy's default).
RuleAction: TypeAlias = Literal["allow", "reject", "ask"]


# `first-match`: rules in file order, the first that matches decides. `deny-first`: every reject
# rule is tried before any other (Claude Code's order).
RuleOrder: TypeAlias = Literal["first-match", "deny-first"]


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
    rule that has `commands` (or `paths`). The files a command line redirects to are touched paths:
    an allow rule with `commands` and no `paths` never approves a redirection to a file, and one
    with `paths` but no `commands` is not approved by them alone (the call must name a path too).
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
        if self.title is not None and not wildcard(self.title.lower()).match(ask.title.lower()):
            return False
        if self.offered and not any(option.kind in self.offered for option in ask.options):
            return False
        every = self.action == "allow"
        lines = command_lines(ask.raw_input)
        if self.commands and not commands_match(self.commands, lines, every=every, writes=bool(self.paths)):
            return False
        if not self.paths:
            return True
        touched = touched_paths(ask)
        if every and not (touched.known and (touched.named or self.commands)):
            return False
        return paths_match(self.paths, touched.named + touched.redirected, ask.cwd, every=every)


def commands_match(globs: Sequence[str], lines: Sequence[str], *, every: bool, writes: bool = False) -> bool:
    """`every`: each simple command of each line matches a glob, no line is opaque, and (unless
    `writes`: the rule's paths judge them) no command redirects to a file. Otherwise: any line, or
    anything in it a command could hide behind (see `any_candidates`); a line nested too deep to
    read matches."""
    if not lines:
        return False
    matchers = [wildcard(glob) for glob in globs]

    def hit(text: str) -> bool:
        return any(matcher.match(text) for matcher in matchers)

    def hit_from_a_word(text: str) -> bool:
        # `* GLOB` on ` TEXT`: GLOB matches the words of TEXT from one of them on.
        return any(wildcard(f"* {glob}").match(f" {text}") for glob in globs)

    if every:
        for line in lines:
            reading = read_line(line)
            if reading.opaque or not reading.commands:
                return False
            for command in reading.commands:
                if not hit(command.text):
                    return False
                if not writes and any(redirect.writes_file() for redirect in command.redirects):
                    return False
        return True
    for line in lines:
        candidates = any_candidates(line)
        if candidates.unreadable or any(map(hit, candidates.texts)):
            return True
        if any(map(hit_from_a_word, candidates.tails)):
            return True
    return False


def opacity(lines: Sequence[str]) -> str | None:
    """Why what one of the lines runs (or a script it hands a shell) cannot be read off its text."""
    for line in lines:
        candidates = any_candidates(line)
        if candidates.unreadable:
            return "too deep or too long to read"
        if candidates.opaque:
            return candidates.opaque
    return None


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
                # The person sees which rule asked them.
                asked = await self.ask_handler(dataclasses.replace(ask, rule=rule.name))
                return PermissionChoice(asked, rule=f"{rule.name} (asked)")
            default = self.default_for(ask)
            return PermissionChoice(
                choose(ask.options, default), rule=f"{rule.name} (ask: {default})", ask=True
            )
        default = self.default_for(ask)
        named = "default" if default == self.default else "default (opaque: reject)"
        return PermissionChoice(choose(ask.options, default), rule=named)

    def default_for(self, ask: PermissionAsk) -> Action:
        """The default, but never `allow` for a command line that cannot be read off its text: what
        runs there is out of every rule's sight (a reject rule's included)."""
        if self.default == "allow" and opacity(command_lines(ask.raw_input)):
            return "reject"
        return self.default


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
