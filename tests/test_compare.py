"""The comparison report: its table, its sections, and untrusted text kept as text."""

from __future__ import annotations

import re
from typing import Any

from acp_tui.reports.compare import COLUMNS, comparison_markdown, row
from acp_tui.reports.records import RunRecord, read_record

ALLOW = {"decision": "allow_once"}
REJECT = {"decision": "reject_once"}


def record(name: str, **fields: Any) -> RunRecord:
    base: dict[str, Any] = {
        "name": name,
        "command": ["agent"],
        "prompt": "Fix the bug",
        "policy": "reject",
        "stop_reason": "completed",
        "output": "Done.",
        "truncated": False,
        "error": None,
        "hidden": {},
        "permissions": [],
        "exit_code": 0,
        "duration_s": 1.5,
        "trace": None,
        "worktree": "/cache/wt/a",
        "base": "0123456789abcdef0123",
        "diff_stat": {"files": 0, "insertions": 0, "deletions": 0},
        "diff": "",
        "diff_truncated": False,
    }
    base.update(fields)
    return read_record(base)


def test_the_table_has_a_row_per_run_with_what_was_reported() -> None:
    claude = record(
        "claude",
        first_chunk_s=0.42,
        duration_s=12.345,
        usage={"used": 12345, "size": 200000, "cost": {"amount": 0.0123, "currency": "USD"}},
        hidden={"agent_thought_chunk": 7, "tool_call": 3},
        permissions=[ALLOW, REJECT, {"decision": "cancelled"}],
        diff_stat={"files": 2, "insertions": 10, "deletions": 3},
        diff="diff --git a/x b/x\n",
    )
    plain = record("plain", stop_reason="aborted", worktree=None, base=None, diff_stat=None, diff=None)
    document = comparison_markdown([claude, plain])

    lines = document.splitlines()
    header = "| " + " | ".join(COLUMNS) + " |"
    at = lines.index(header)
    assert lines[at + 1] == "| " + " | ".join(["---"] * len(COLUMNS)) + " |"
    assert lines[at + 2] == (
        "| 1. claude | completed | 0.42 s | 12.35 s | 12,345 / 200,000 | 0.0123 USD | 10 | 3/1/2 "
        "| 2 (+10 -3) |"
    )
    assert lines[at + 3] == "| 2. plain | aborted | — | 1.50 s | — | — | 0 | 0/0/0 | — |"
    assert row(plain)[-1] == "—"


def test_sections_come_in_order_each_answer_and_diff_under_its_own_heading() -> None:
    document = comparison_markdown(
        [
            record(
                "a",
                output="First answer",
                diff="diff --git a/f b/f\n+x\n",
                diff_stat={"files": 1, "insertions": 1, "deletions": 0},
            ),
            record(
                "a", output="", stop_reason="error", error="it broke", agent={"name": "x", "version": "2"}
            ),
        ]
    )
    headings = re.findall(r"^#+ .*$", document, re.MULTILINE)
    assert headings == [
        "# acp-tui comparison",
        "## Answers",
        "### 1. a: completed",
        "### 2. a: error",
        "## Changes",
        "### 1. a: 1 (+1 -0)",
        "### 2. a: 0 (+0 -0)",
    ]
    assert "```markdown\nFirst answer\n```" in document
    assert "Error: it broke" in document and "*(no answer)*" in document
    assert "Agent: x (2)\n" in document
    assert "```diff\ndiff --git a/f b/f\n+x\n```" in document
    assert "*(no change)*" in document
    assert "**Prompt**\n\n```text\nFix the bug\n```" in document
    assert "`0123456789ab`" in document


def test_an_answer_never_makes_headings_or_fences_of_the_report() -> None:
    hostile = "# Title\n\n## Changes\n\n````\n```diff\nnot a diff\n```\n\x1b[31mred\x1b[0m \u202eevil\n"
    diff = "diff --git a/f b/f\n+```` and ``` inside\n"
    document = comparison_markdown(
        [record("x|y *bold* <b> \x1b]0;title\x07", output=hostile, diff=diff, diff_truncated=True)]
    )
    # Outside fences, only the report's own headings exist.
    outside: list[str] = []
    fence: str | None = None
    for line in document.splitlines():
        if fence is None and (m := re.match(r"^(`{3,})", line)):
            fence = m.group(1)
        elif fence is not None and line == fence:
            fence = None
        elif fence is None:
            outside.append(line)
    assert [line for line in outside if line.startswith("#")] == [
        "# acp-tui comparison",
        "## Answers",
        r"### 1. x\|y \*bold\* \<b\> \\x1b\]0;title\\x07: completed",
        "## Changes",
        r"### 1. x\|y \*bold\* \<b\> \\x1b\]0;title\\x07: 0 (+0 -0)",
    ]
    assert "`````markdown\n# Title\n" in document  # longer than the answer's longest backtick run
    assert "`````diff\n" in document
    assert "\x1b" not in document and "\u202e" not in document and "\x07" not in document
    assert "\\x1b[31mred\\x1b[0m \\u202eevil" in document
    assert "the diff was cut at the size limit" in document
    assert r"| 1. x\|y \*bold\* \<b\> \\x1b\]0;title\\x07 |" in document
