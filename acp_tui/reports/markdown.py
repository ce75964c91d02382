"""Several records as one Markdown document (the app's export for people)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import TYPE_CHECKING

from acp_tui.core.text import one_line
from acp_tui.reports.text import permission_line, session_facts

if TYPE_CHECKING:
    from acp_tui.reports.records import RunRecord


def markdown(records: Iterable[RunRecord], *, title: str = "acp-tui runs") -> str:
    """Several records as one Markdown document (the app's export for people).

    Our headings never collide with an answer's: the prompt and the answer are fenced (a fence
    longer than any in them), so whatever headings an answer has stay inside its block, as written;
    names and other one-line fields are kept on one line.
    """
    parts = [f"# {title}\n"]
    for record in records:
        where = f" (round {record.round}, attempt {record.attempt or 1})" if record.round else ""
        parts.append(f"## {one_line(record.name)}{where}: {record.stop_reason.value}\n")
        facts = [
            f"- command: `{one_line(shell_join(record.command))}`",
            f"- policy: {one_line(record.policy)}",
            f"- duration: {record.duration_s:.2f} s; exit code: {record.exit_code}",
        ]
        if record.error:
            facts.append(f"- error: {one_line(record.error)}")
        if record.hidden:
            counts = ", ".join(f"{kind} {count}" for kind, count in sorted(record.hidden.items()))
            facts.append(f"- hidden updates: {one_line(counts)}")
        if record.trace:
            facts.append(f"- trace: `{one_line(record.trace)}`")
        facts.extend(f"- {fact}" for fact in session_facts(record))
        if record.permissions:
            facts.append("- permissions:")
            facts.extend(f"  - {one_line(permission_line(p))}" for p in record.permissions)
        parts.append("\n".join(facts) + "\n")
        parts.append("### Prompt\n\n" + _fenced(record.prompt) + "\n")
        answer = _fenced(record.output) if record.output else "*(no answer)*"
        if record.truncated:
            answer += "\n\n*(the answer was cut at the size limit)*"
        parts.append("### Answer\n\n" + answer + "\n")
    return "\n".join(parts)


def _fenced(text: str) -> str:
    """`text` in a fenced block no line of it can close: its headings stay its own."""
    longest = max((len(run) for run in re.findall(r"~+", text)), default=0)
    fence = "~" * max(4, longest + 1)
    return f"{fence}markdown\n{text.rstrip(chr(10))}\n{fence}"


def shell_join(argv: Iterable[str]) -> str:
    import shlex

    return shlex.join(argv)
