"""Permission policies: who answers `session/request_permission`, and how.

`reject` and `allow` are the RFC's. `RulePolicy` is the policy lab's: ordered rules on the tool call's
kind and title, first match wins. `AskPolicy` hands the question to a human (the TUI's modal).
"""

from __future__ import annotations

import fnmatch
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol, TypeAlias

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
    """Matches when every given criterion matches; `kinds` empty and `title` None match anything."""

    name: str
    action: RuleAction
    kinds: tuple[str, ...] = ()
    title: str | None = None  # a glob, case-insensitive
    commands: tuple[str, ...] = ()  # globs on an `execute` call's command line (any may match)
    paths: tuple[str, ...] = ()  # globs on the paths the call touches, relative to the run's cwd
    offered: tuple[str, ...] = ()  # option kinds, one of which the agent must have offered

    def matches(self, ask: PermissionAsk) -> bool:
        if self.kinds and (ask.kind or "other") not in self.kinds:
            return False
        return self.title is None or fnmatch.fnmatch(ask.title.lower(), self.title.lower())


@dataclass(frozen=True)
class RulePolicy:
    name: str
    rules: tuple[Rule, ...]
    default: Action = "reject"
    order: RuleOrder = "first-match"

    async def decide(self, ask: PermissionAsk) -> PermissionChoice:
        for rule in self.rules:
            if rule.matches(ask):  # TODO(policy lab): `ask` rules, `order`, the new matchers
                action = self.default if rule.action == "ask" else rule.action
                return PermissionChoice(choose(ask.options, action), rule=rule.name)
        return PermissionChoice(choose(ask.options, self.default), rule="default")


AskHandler: TypeAlias = Callable[[PermissionAsk], Awaitable[str | None]]


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
