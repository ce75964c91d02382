"""A permission request as a policy sees it, the answer it gives, and the option an action picks.

Everything under `policy/` is pure (no I/O but one: where a touched path's links lead, see
`globs._resolved`): the same code decides live and in `acp-tui policy check`.
"""

from __future__ import annotations

import contextvars
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol, TypeAlias

from acp_tui.core.model import PermissionOptionInfo

ALLOW_KINDS = ("allow_once", "allow_always")

# The run whose request a policy is deciding: set by the run around its policy's decision, so that a
# handler asking a person can tell whose request it is (a spare's run was started before anyone
# knew which attempt it would serve, so nothing inherited from its start can say).
asking_run: contextvars.ContextVar[object | None] = contextvars.ContextVar("acp_tui_asking_run", default=None)


TOOL_KINDS = ("read", "edit", "delete", "move", "search", "execute", "think", "fetch", "other")


Action: TypeAlias = Literal["allow", "reject"]


@dataclass(frozen=True)
class PermissionAsk:
    """What the agent asked, flattened for policies and people."""

    title: str
    kind: str | None
    options: tuple[PermissionOptionInfo, ...]
    content: str = ""
    raw_input: Any = None  # the tool call's raw input, as the agent sent it (JSON-shaped)
    locations: tuple[str, ...] = ()  # the paths of the tool call's `locations` and `diff` content
    cwd: str | None = None  # the run's working directory: relative path globs are taken from it
    rule: str | None = None  # the `ask` rule that handed it to a person (None: the `ask` policy did)


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
