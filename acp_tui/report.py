"""One finished run as a record: the schema of `acp-tui run --format json` and of the app's export.

Keys of a record, in order: `name`, `command` ([command, *args]), `prompt`, `policy` (the policy in
force), `stop_reason` (completed | max-tokens | refusal | aborted | error), `output` (the whole answer),
`truncated`, `error` (one line, or null), `hidden` (update kind -> count), `permissions` (each:
`title`, `kind`, `options` [`option_id`, `name`, `kind`], `decision`, `option_id`, `rule`, `at`),
`exit_code` (the child's, negative for a signal, or null), `duration_s`, `trace` (the JSONL trace
file, or null).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

from .config import AgentPreset
from .subagents.model import SubagentResult

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
)


def run_record(
    preset: AgentPreset,
    result: SubagentResult,
    *,
    prompt: str,
    policy: str | None = None,
    trace: str | None = None,
) -> dict[str, Any]:
    """The record of one run. `policy` is the one in force when it differs from the preset's."""
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
    }


def json_line(record: Mapping[str, Any]) -> str:
    """One record as one line of JSON (no newline at the end)."""
    return json.dumps(record, ensure_ascii=False)


def text_block(record: Mapping[str, Any]) -> str:
    """One record for people reading a terminal: the answer under its name, then how it ended."""
    name = record["name"]
    lines = [f"=== {name} ==="]
    output = record["output"]
    if output:
        lines.append(output.rstrip("\n"))
    ending = f"--- {name}: {record['stop_reason']}"
    if record.get("error"):
        ending += f": {record['error']}"
    lines.append(f"{ending} ({record['duration_s']:.2f} s)")
    lines.extend(f"    permission: {_permission_line(p)}" for p in record.get("permissions", ()))
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


def _one_line(text: str) -> str:
    from .untrusted import one_line

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


def _shell_join(argv: Iterable[str]) -> str:
    import shlex

    return shlex.join(argv)
