"""One finished run as a record: the schema of `acp-tui run --format json` and of the app's export.

Keys of a record, in order: `name`, `command` ([command, *args]), `prompt`, `policy` (the policy in
force), `stop_reason` (completed | max-tokens | refusal | aborted | error), `output` (the whole answer),
`truncated`, `error` (one line, or null), `hidden` (update kind -> count), `permissions` (each:
`title`, `kind`, `options` [`option_id`, `name`, `kind`], `decision`, `option_id`, `rule`, `at`),
`exit_code` (the child's, negative for a signal, or null), `duration_s`, `trace` (the JSONL trace
file, or null), `agent` (the child's `agentInfo`: `name`, `title`, `version`, or null), `options`
(every config option of the session after ours were set: id -> current value id), `usage` (the last
`usage_update`: `used`, `size`, `cost` {`amount`, `currency`} or null; or null), `auth_methods`
(each: `id`, `name`, `description`, and `type` / `vars` / `args` when given), `ended_by` (how the
agent's processes ended: `exit`, `sigterm`, `sigkill`, or null when none was started), `cwd` (the
agent's working directory: path rules of `acp-tui policy check` are taken from it), `sandbox`
(`workspace` when bubblewrap confined the agent, else `none`), `network_refused` (the connections
its sandbox refused, to hosts its `sandbox_network` list does not name: each `host`, `port`, `at`),
`worktree`, `base`, `diff_stat`, `diff`, `diff_truncated` (its git worktree and change, or nulls),
`skipped` (the files over the preset's `max_file_bytes`, not recorded), `diff_masked` (the preset's
secrets were masked in `diff`, which then no longer applies as it is), `first_chunk_s` (seconds from
the spawn to the first answer chunk, or null), `session_id` (the agent's session, which a follow-up
continues; null when none was opened), `continuation` (how the agent said its sessions are reached
again: `resume`, `load`, or null), `turn` (1 for a first prompt, 2 for its follow-up, ...) and
`warm` (true when the run took a spare, a child started ahead of it).

The app's export (ctrl+s) holds every attempt of the session, each record followed by `round` and
`attempt` (numbers from 1; `r` adds an attempt to the same round)."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from acp_tui.core.masking import SecretMask
from acp_tui.core.model import (
    AgentInfo,
    Cost,
    NetworkRefusal,
    PermissionOptionInfo,
    PermissionRecord,
    SubagentResult,
    SubagentStopReason,
    Usage,
)
from acp_tui.core.text import json_safe
from acp_tui.settings.schema import AgentPreset, Settings

RECORD_KEYS = (
    "name",
    "command",
    "prompt",
    "policy",
    "stop_reason",
    "output",
    "truncated",
    "error",
    "hidden",
    "permissions",
    "exit_code",
    "duration_s",
    "trace",
    "agent",
    "options",
    "usage",
    "auth_methods",
    "ended_by",
    "cwd",
    "sandbox",
    "network_refused",
    "worktree",
    "base",
    "diff_stat",
    "diff",
    "diff_truncated",
    "skipped",
    "diff_masked",
    "first_chunk_s",
    "session_id",
    "continuation",
    "turn",
    "warm",
)


# A record's isolation keys when the run had no worktree (see `isolation.Worktree.fields`).
NOT_ISOLATED: dict[str, Any] = {
    "worktree": None,
    "base": None,
    "diff_stat": None,
    "diff": None,
    "diff_truncated": False,
    "skipped": [],
    "diff_masked": False,
}


def run_record(
    preset: AgentPreset,
    result: SubagentResult,
    *,
    prompt: str,
    policy: str | None = None,
    trace: str | None = None,
    cwd: str | None = None,
    isolation: Mapping[str, Any] | None = None,
    first_chunk_s: float | None = None,
    turn: int = 1,
    warm: bool = False,
) -> dict[str, Any]:
    """The record of one run. `policy` is the one in force when it differs from the preset's;
    `isolation`, its worktree's keys (`Worktree.fields()`) when it had one."""
    return {
        "name": preset.name,
        "command": preset.argv,
        "prompt": prompt,
        "policy": policy or preset.policy,
        "stop_reason": result.stop_reason.value,
        "output": result.output,
        "truncated": result.truncated,
        "error": result.error,
        "hidden": dict(result.hidden),
        "permissions": [record.to_json() for record in result.permissions],
        "exit_code": result.exit_code,
        "duration_s": round(result.duration_s, 3),
        "trace": trace,
        "agent": result.agent.to_json() if result.agent else None,
        "options": dict(result.options),
        "usage": result.usage.to_json() if result.usage else None,
        "auth_methods": [method.to_json() for method in result.auth_methods],
        "ended_by": result.ended_by,
        "cwd": cwd,
        "sandbox": preset.sandbox,
        "network_refused": [refusal.to_json() for refusal in result.network_refused],
        **isolation_keys(isolation, preset.secrets()),
        "first_chunk_s": round(first_chunk_s, 3) if first_chunk_s is not None else None,
        "session_id": result.session_id,
        "continuation": result.continuation,
        "turn": turn,
        "warm": warm,
    }


def isolation_keys(fields: Mapping[str, Any] | None, secrets: list[str]) -> dict[str, Any]:
    """A worktree's keys as a record holds them: the one place its diff is masked. A secret the
    agent wrote into a file shows as `***` (an unmasked diff exists only in the live worktree)."""
    keys = {**NOT_ISOLATED, **(fields or {})}
    mask = SecretMask(secrets)
    if not mask:
        return keys
    if isinstance(keys["diff"], str):
        masked = mask(keys["diff"])
        keys["diff"], keys["diff_masked"] = masked, masked != keys["diff"]
    keys["skipped"] = [mask(name) for name in keys["skipped"]]
    return keys


def json_line(record: Mapping[str, Any]) -> str:
    """One record as one line of JSON (no newline at the end): the exact text, escaped by JSON, and
    encodable whatever it holds (a lone surrogate is spelled as its JSON escape)."""
    return json_safe(json.dumps(record, ensure_ascii=False))


def result_from(record: Mapping[str, Any]) -> SubagentResult:
    """The result a record describes, read back (a saved session, `acp-tui run --continue`): the one
    check of a record's shape. Every key read back is checked, the run's around its result too
    (`_check_run`): anything no record of ours holds is a ValueError naming the key."""
    if not isinstance(record, Mapping):
        raise ValueError("not a JSON object")
    _check_run(record)
    stop_reason = _field(record, "stop_reason", str)
    if stop_reason not in {reason.value for reason in SubagentStopReason}:
        raise ValueError('"stop_reason" is not a stop reason')
    return SubagentResult(
        stop_reason=SubagentStopReason(stop_reason),
        output=_field(record, "output", str) or "",
        error=_field(record, "error", str),
        exit_code=_field(record, "exit_code", int),
        hidden=_table(record, "hidden", int),
        permissions=[_permission_from(item) for item in _field(record, "permissions", list) or ()],
        duration_s=_seconds(record, "duration_s"),
        truncated=_field(record, "truncated", bool) is True,
        ended_by=_field(record, "ended_by", str, among=("exit", "sigterm", "sigkill")),
        agent=_agent_from(_field(record, "agent", dict)),
        options=_table(record, "options", str),
        usage=_usage_from(_field(record, "usage", dict)),
        session_id=_field(record, "session_id", str),
        continuation=_field(record, "continuation", str, among=("resume", "load")),
        network_refused=tuple(_refusal_from(item) for item in _field(record, "network_refused", list) or ()),
    )


def _check_run(record: Mapping[str, Any]) -> None:
    """The keys of the run around its result that are read back: `name` and `command` (a command
    line), `prompt`, `policy`, `cwd`, `trace`, `worktree` with its `base`, `sandbox`, `turn`,
    `warm`, and an export's `round` and `attempt` (numbers from 1)."""
    if not _field(record, "name", str, required=True).strip():
        raise ValueError('"name" is empty')
    command = _strings(record, "command")
    if not command or not command[0].strip():
        raise ValueError('"command" is not a command line (a non-empty list of strings)')
    for key in ("prompt", "policy", "cwd", "trace", "base"):
        _field(record, key, str)
    if _field(record, "worktree", str) is not None and record.get("base") is None:
        raise ValueError('"worktree" has no "base"')
    _field(record, "sandbox", str, among=("none", "workspace"))
    for key in ("turn", "round", "attempt"):
        if _field(record, key, int) is not None and record[key] < 1:
            raise ValueError(f'"{key}" is not a number from 1')
    _field(record, "warm", bool)


def _agent_from(agent: Mapping[str, Any] | None) -> AgentInfo | None:
    if not agent:
        return None
    name = _field(agent, "name", str, within="agent", required=True)
    return AgentInfo(
        name, _field(agent, "title", str, within="agent"), _field(agent, "version", str, within="agent")
    )


def _usage_from(usage: Mapping[str, Any] | None) -> Usage | None:
    if not usage:
        return None
    cost = _field(usage, "cost", dict, within="usage")
    return Usage(
        _field(usage, "used", int, within="usage", required=True),
        _field(usage, "size", int, within="usage", required=True),
        Cost(
            _seconds(cost, "amount", within="usage.cost", required=True),
            _field(cost, "currency", str, within="usage.cost", required=True),
        )
        if cost is not None
        else None,
    )


def preset_for(record: Mapping[str, Any], settings: Settings) -> AgentPreset:
    """The preset that follows up a record's run (a record `result_from` checked): the settings'
    preset of its name (its env, options and policy of now), else one made of the record's own
    command. A run that was confined stays confined: a follow-up never lifts a sandbox."""
    name, command = record["name"], record["command"]
    preset = (
        settings.preset(name) if name in settings.names else AgentPreset(name, command[0], tuple(command[1:]))
    )
    return replace(preset, sandbox="workspace") if record.get("sandbox") == "workspace" else preset


def _field(
    record: Mapping[str, Any],
    key: str,
    kind: Any,
    *,
    among: tuple[str, ...] | None = None,
    within: str = "",
    required: bool = False,
) -> Any:
    """`record[key]` when it is a `kind` (one of `among`, if given); None when absent or null (unless
    `required`); a ValueError naming the key (in `within`, for a key of a nested object) when not."""
    value = record.get(key)
    if value is None:
        if required:
            raise ValueError(f"{_named(key, within)} is missing")
        return None
    if (
        not isinstance(value, kind)
        or (isinstance(value, bool) and kind is not bool)
        or (among is not None and value not in among)
    ):
        raise ValueError(f"{_named(key, within)} is not what a record holds")
    return value


def _named(key: str, within: str) -> str:
    return f'"{within}.{key}"' if within else f'"{key}"'


def _seconds(record: Mapping[str, Any], key: str, *, within: str = "", required: bool = False) -> float:
    """A number of seconds (or an amount): finite, 0.0 when absent."""
    value = _field(record, key, int | float, within=within, required=required) or 0
    try:
        seconds = float(value)
    except OverflowError:  # an integer too large for a float
        seconds = math.inf
    if not math.isfinite(seconds):
        raise ValueError(f"{_named(key, within)} is out of range")
    return seconds


def _strings(record: Mapping[str, Any], key: str, *, within: str = "") -> list[str]:
    """A list of strings ([] when absent)."""
    items = _field(record, key, list, within=within) or []
    if not all(isinstance(item, str) for item in items):
        raise ValueError(f"{_named(key, within)} holds something that is not a string")
    return items


def _table(record: Mapping[str, Any], key: str, kind: type) -> dict[str, Any]:
    """An object whose every value is a `kind` ({} when absent)."""
    table = _field(record, key, dict) or {}
    if not all(isinstance(value, kind) and not isinstance(value, bool) for value in table.values()):
        raise ValueError(f'"{key}" holds a value that is not what a record holds')
    return dict(table)


def _refusal_from(item: Any) -> NetworkRefusal:
    if not isinstance(item, Mapping):
        raise ValueError('"network_refused" holds something that is not a refused connection')
    where = "network_refused"
    return NetworkRefusal(
        _field(item, "host", str, within=where, required=True),
        _field(item, "port", int, within=where, required=True),
        _seconds(item, "at", within=where),
    )


def _permission_from(item: Any) -> PermissionRecord:
    if not isinstance(item, Mapping):
        raise ValueError('"permissions" holds something that is not a permission')
    where = "permissions"
    options = []
    for option in _field(item, "options", list, within=where) or ():
        if not isinstance(option, Mapping):
            raise ValueError('"permissions.options" holds something that is not an option')
        option_id, name, kind = (
            _field(option, key, str, within=f"{where}.options") or "" for key in ("option_id", "name", "kind")
        )
        options.append(PermissionOptionInfo(option_id, name, kind))
    return PermissionRecord(
        title=_field(item, "title", str, within=where) or "",
        kind=_field(item, "kind", str, within=where),
        options=tuple(options),
        decision=_field(item, "decision", str, within=where) or "cancelled",
        option_id=_field(item, "option_id", str, within=where),
        rule=_field(item, "rule", str, within=where) or "",
        at=_seconds(item, "at", within=where),
        raw_input=item.get("raw_input"),
        locations=tuple(_strings(item, "locations", within=where)),
        waited_s=_seconds(item, "waited_s", within=where),
    )
