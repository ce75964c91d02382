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
(`workspace` when bubblewrap confined the agent, else `none`), `worktree`,
`base`, `diff_stat`, `diff`, `diff_truncated` (its git worktree and change, or nulls), `skipped` (the
files over the preset's `max_file_bytes`, not recorded), `diff_masked` (the preset's secrets were
masked in `diff`, which then no longer applies as it is), `first_chunk_s` (seconds from the spawn
to the first answer chunk, or null), `session_id` (the agent's session, which a follow-up continues;
null when none was opened), `continuation` (how the agent said its sessions are reached again:
`resume`, `load`, or null), `turn` (1 for a first prompt, 2 for its follow-up, ...) and `warm` (true
when the run took a spare, a child started ahead of it).

The app's export (ctrl+s) holds every attempt of the session, each record followed by `round` and
`attempt` (numbers from 1; `r` adds an attempt to the same round)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from acp_tui.core.masking import SecretMask
from acp_tui.core.model import PermissionOptionInfo, PermissionRecord, SubagentResult
from acp_tui.core.text import json_safe
from acp_tui.settings.schema import AgentPreset

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
    """The result a record describes, read back (a saved session, `acp-tui run --continue`); a
    ValueError naming the key for what no record of ours holds."""
    from acp_tui.core.model import AgentInfo, Cost, SubagentStopReason, Usage

    stop_reason = _field(record, "stop_reason", str)
    if stop_reason not in {reason.value for reason in SubagentStopReason}:
        raise ValueError('"stop_reason" is not a stop reason')
    agent = _field(record, "agent", dict)
    usage = _field(record, "usage", dict)
    cost = usage.get("cost") if usage else None
    continuation = _field(record, "continuation", str)
    return SubagentResult(
        stop_reason=SubagentStopReason(stop_reason),
        output=_field(record, "output", str) or "",
        error=_field(record, "error", str),
        exit_code=_field(record, "exit_code", int),
        hidden={str(k): v for k, v in (_field(record, "hidden", dict) or {}).items() if type(v) is int},
        permissions=[_permission_from(item) for item in _field(record, "permissions", list) or ()],
        duration_s=float(_field(record, "duration_s", int | float) or 0.0),
        truncated=record.get("truncated") is True,
        ended_by=_field(record, "ended_by", str),
        agent=AgentInfo(str(agent.get("name", "")), agent.get("title"), agent.get("version"))
        if agent
        else None,
        options={str(k): str(v) for k, v in (_field(record, "options", dict) or {}).items()},
        usage=Usage(
            int(usage.get("used", 0)),
            int(usage.get("size", 0)),
            Cost(float(cost["amount"]), str(cost.get("currency", ""))) if isinstance(cost, dict) else None,
        )
        if usage
        else None,
        session_id=_field(record, "session_id", str),
        continuation=continuation if continuation in ("resume", "load") else None,
    )


def _field(record: Mapping[str, Any], key: str, kind: Any) -> Any:
    """`record[key]` when it is a `kind` (None when absent or null); a ValueError when it is not."""
    value = record.get(key)
    if value is None:
        return None
    if not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool):
        raise ValueError(f'"{key}" is not what a record holds')
    return value


def _permission_from(item: Any) -> PermissionRecord:
    if not isinstance(item, Mapping):
        raise ValueError('"permissions" holds something that is not a permission')
    options = tuple(
        PermissionOptionInfo(str(o.get("option_id")), str(o.get("name")), str(o.get("kind")))
        for o in item.get("options") or ()
        if isinstance(o, Mapping)
    )
    kind, option_id = _field(item, "kind", str), _field(item, "option_id", str)
    return PermissionRecord(
        title=str(item.get("title", "")),
        kind=kind,
        options=options,
        decision=str(item.get("decision", "cancelled")),
        option_id=option_id,
        rule=str(item.get("rule", "")),
        at=float(_field(item, "at", int | float) or 0.0),
        raw_input=item.get("raw_input"),
        locations=tuple(path for path in item.get("locations") or () if isinstance(path, str)),
        waited_s=float(_field(item, "waited_s", int | float) or 0.0),
    )
