"""Policies by name: the built-in ones, and those a config file names (`[policy.NAME]`), resolved in
one place for the runs, `acp-tui policy check` and the app's panels."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

from acp_tui.policy.ask import AskHandler, PermissionPolicy
from acp_tui.policy.rules import AllowOncePolicy, AskPolicy, FixedPolicy, RulePolicy

ASK = "ask"

# The built-in policies, and what each does in words (the agents screen shows them).
BUILTIN: dict[str, str] = {
    "reject": "never approves: the first reject option, else cancelled",
    "allow": "approves: the first allow option",
    # Never through an `allow_always` option: what it approves is approved once.
    "allow-once": "approves through allow_once options only (never allow_always), else rejects",
    ASK: "you choose, each time (a to answer)",
}

# The built-in policies that decide by themselves (`ask` needs a person): the core takes them by name.
FIXED_POLICIES: dict[str, PermissionPolicy] = {
    "reject": FixedPolicy("reject"),
    "allow": FixedPolicy("allow"),
    "allow-once": AllowOncePolicy(),
}


class UnknownPolicy(ValueError):
    """No policy of that name; `known` are the names there are."""

    def __init__(self, name: str, known: tuple[str, ...]) -> None:
        super().__init__(f'unknown policy "{name}" (expected one of: {", ".join(known)})')
        self.name = name
        self.known = known


class NoOneToAsk(ValueError):
    """`ask` where no person can answer (headless)."""

    def __init__(self) -> None:
        super().__init__(f'policy "{ASK}" needs someone to ask')


def policy_names(configured: Mapping[str, RulePolicy]) -> tuple[str, ...]:
    """Every policy a preset may use: the built-in ones, then the configured ones."""
    return (*BUILTIN, *configured)


def resolve(
    name: str, configured: Mapping[str, RulePolicy] | None = None, *, ask_handler: AskHandler | None = None
) -> PermissionPolicy:
    """The policy of that name. `ask` and the `ask` rules of a configured policy reach a person
    through `ask_handler` (headless, where there is none, such a rule's policy default decides)."""
    configured = configured or {}
    if name in FIXED_POLICIES:
        return FIXED_POLICIES[name]
    if name == ASK:
        if ask_handler is None:
            raise NoOneToAsk
        return AskPolicy(ask_handler)
    if name in configured:
        return dataclasses.replace(configured[name], ask_handler=ask_handler)
    raise UnknownPolicy(name, policy_names(configured))
