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
agent's working directory: path rules of `acp-tui policy check` are taken from it), `worktree`,
`base`, `diff_stat`, `diff`, `diff_truncated` (its git worktree and change, or nulls), and
`first_chunk_s` (seconds from the spawn to the first answer chunk, or null).

The app's export (ctrl+s) holds every attempt of the session, each record followed by `round` and
`attempt` (numbers from 1; `r` adds an attempt to the same round).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

from .config import AgentPreset
from .subagents.model import SubagentResult
from .untrusted import json_safe, one_line, visible

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
    "worktree",
    "base",
    "diff_stat",
    "diff",
    "diff_truncated",
    "first_chunk_s",
)
# A record's isolation keys when the run had no worktree (see `isolation.Worktree.fields`).
NOT_ISOLATED: dict[str, Any] = {
    "worktree": None,
    "base": None,
    "diff_stat": None,
    "diff": None,
    "diff_truncated": False,
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
        **(isolation or NOT_ISOLATED),
        "first_chunk_s": round(first_chunk_s, 3) if first_chunk_s is not None else None,
    }


def json_line(record: Mapping[str, Any]) -> str:
    """One record as one line of JSON (no newline at the end): the exact text, escaped by JSON, and
    encodable whatever it holds (a lone surrogate is spelled as its JSON escape)."""
    return json_safe(json.dumps(record, ensure_ascii=False))


def text_block(record: Mapping[str, Any]) -> str:
    """One record for people reading a terminal: the answer under its name, then how it ended.
    What the agent wrote is shown with its control characters made visible: it is printed to a
    terminal, and must not drive it."""
    name = one_line(record["name"])
    lines = [f"=== {name} ==="]
    output = record["output"]
    if output:
        lines.append(visible(output.rstrip("\n")))
    ending = f"--- {name}: {record['stop_reason']}"
    if record.get("error"):
        ending += f": {one_line(record['error'])}"
    lines.append(f"{ending} ({record['duration_s']:.2f} s)")
    lines.extend(f"    permission: {one_line(_permission_line(p))}" for p in record.get("permissions", ()))
    lines.extend(f"    {one_line(fact)}" for fact in _session_facts(record))
    return "\n".join(lines) + "\n"


def markdown(records: Iterable[Mapping[str, Any]], *, title: str = "acp-tui runs") -> str:
    """Several records as one Markdown document (the app's export for people).

    Our headings never collide with an answer's: the prompt and the answer are fenced (a fence
    longer than any in them), so whatever headings an answer has stay inside its block, as written;
    names and other one-line fields are kept on one line.
    """
    parts = [f"# {title}\n"]
    for record in records:
        where = ""
        if "round" in record:
            where = f" (round {record['round']}, attempt {record.get('attempt', 1)})"
        parts.append(f"## {_one_line(record['name'])}{where}: {record['stop_reason']}\n")
        facts = [
            f"- command: `{_one_line(_shell_join(record['command']))}`",
            f"- policy: {_one_line(record['policy'])}",
            f"- duration: {record['duration_s']:.2f} s; exit code: {record['exit_code']}",
        ]
        if record.get("error"):
            facts.append(f"- error: {_one_line(record['error'])}")
        if record.get("hidden"):
            counts = ", ".join(f"{kind} {count}" for kind, count in sorted(record["hidden"].items()))
            facts.append(f"- hidden updates: {_one_line(counts)}")
        if record.get("trace"):
            facts.append(f"- trace: `{_one_line(record['trace'])}`")
        facts.extend(f"- {fact}" for fact in _session_facts(record))
        if record.get("permissions"):
            facts.append("- permissions:")
            facts.extend(f"  - {_one_line(_permission_line(p))}" for p in record["permissions"])
        parts.append("\n".join(facts) + "\n")
        parts.append("### Prompt\n\n" + _fenced(record["prompt"]) + "\n")
        answer = _fenced(record["output"]) if record["output"] else "*(no answer)*"
        if record.get("truncated"):
            answer += "\n\n*(the answer was cut at the size limit)*"
        parts.append("### Answer\n\n" + answer + "\n")
    return "\n".join(parts)


def _one_line(text: object) -> str:
    return one_line(str(text))


def _fenced(text: str) -> str:
    """`text` in a fenced block no line of it can close: its headings stay its own."""
    longest = max((len(run) for run in re.findall(r"~+", text)), default=0)
    fence = "~" * max(4, longest + 1)
    return f"{fence}markdown\n{text.rstrip(chr(10))}\n{fence}"


def _permission_line(permission: Mapping[str, Any]) -> str:
    offered = ", ".join(f"{o['name']} ({o['kind']})" for o in permission.get("options", ()))
    kind = f" [{permission['kind']}]" if permission.get("kind") else ""
    return (
        f'at {permission["at"]:.2f} s "{permission["title"]}"{kind}: {permission["decision"]}'
        f" by {permission['rule']}" + (f"; offered: {offered}" if offered else "")
    )


def _session_facts(record: Mapping[str, Any]) -> list[str]:
    """What the session was (agent, options) and cost (usage), as the agent said: one line each."""
    from .untrusted import one_line

    facts = []
    agent = record.get("agent")
    if agent:
        version = f" {one_line(str(agent['version']))}" if agent.get("version") else ""
        facts.append(f"agent: {one_line(str(agent.get('title') or agent['name']))}{version}")
    if record.get("options"):
        facts.append(
            "options: " + ", ".join(f"{one_line(k)}={one_line(v)}" for k, v in record["options"].items())
        )
    usage = record.get("usage")
    if usage:
        cost = usage.get("cost")
        spent = f", cost {cost['amount']:g} {one_line(cost['currency'])}" if cost else ""
        facts.append(f"usage: {usage['used']} of {usage['size']} tokens{spent}")
    return facts


def _shell_join(argv: Iterable[str]) -> str:
    import shlex

    return shlex.join(argv)
