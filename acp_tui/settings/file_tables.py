"""The settings file's own tables: its top level, a named policy, a policy's rule.

Declared as the presets are (`settings.schema`), and validated by pydantic against these
declarations; only a file read needs them (`settings.load`), so the demo set and the app's first
frame never declare them. pydantic reads the annotations in this module's namespace: the names
they use are imported here, not only for type checkers.
"""

# ruff: noqa: RUF009  (`says` is `dataclasses.field` with the words of the field's error)

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, Literal

from acp_tui.settings.schema import (
    DEFAULT_PROMPT,
    SECONDS,
    Count,
    Globs,
    Name,
    NonBlank,
    Notify,
    OneOrMany,
    Seconds,
    Switch,
    says,
)


@dataclass(frozen=True)
class RuleTable:
    """A `[[policy.NAME.rule]]`: every criterion given must match; `action` decides."""

    __pydantic_config__ = {"extra": "forbid"}

    action: Literal["allow", "reject", "ask"] = says(
        'must be "allow", "reject" or "ask"', required='"action" is required (allow, reject or ask)'
    )
    name: Name | None = says("must be a non-empty string", default=None)
    kind: Annotated[tuple[str, ...], OneOrMany()] = says("must be a list of tool kinds", default=())
    title: NonBlank | None = says("must be a non-empty glob pattern", default=None)
    command: Globs = says("must be a glob or a list of globs", default=())
    path: Globs = says("must be a glob or a list of globs", default=())
    option: Annotated[tuple[str, ...], OneOrMany()] = says(
        "must be an option kind or a list of them", default=()
    )


@dataclass(frozen=True)
class PolicyTable:
    """A `[policy.NAME]`: ordered rules, and what decides when none matches."""

    __pydantic_config__ = {"extra": "forbid"}

    default: Literal["allow", "reject"] = says('must be "allow" or "reject"', default="reject")
    order: Literal["first-match", "deny-first"] = says(
        'must be "first-match" or "deny-first"', default="first-match"
    )
    rule: tuple[dict[str, Any], ...] = says("must be an array of tables ([[policy.{name}.rule]])", default=())


@dataclass(frozen=True)
class SettingsFile:
    """The top level of the file."""

    __pydantic_config__ = {"extra": "forbid"}

    prompt: NonBlank = says("must be a non-empty string", default=DEFAULT_PROMPT)
    agent: tuple[dict[str, Any], ...] = says("must be an array of tables ([[agent]])", default=())
    policy: dict[str, Any] = says("must be a table of named policies ([policy.NAME])", default_factory=dict)
    notify: Notify | None = says('must be "off", "bell" or "all"', default=None)
    bell: Switch = says("must be true or false", default=True)  # the older switch: false is notify = "off"
    toasts: Switch = says("must be true or false", default=True)  # pop a note when a run errors or needs you
    export_dir: NonBlank | None = says("must be a non-empty path", default=None)  # the app's ctrl+s
    warm: Switch = says("must be true or false", default=True)  # spares for the next runs (the app)
    warm_idle: Seconds = says(SECONDS, default=600.0)  # a spare not taken for this long is disposed
    keep_sessions: Count = says("must be a positive whole number", default=50)  # saved sessions kept
