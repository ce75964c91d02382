"""The comparison report: one prompt, several runs, what each said and changed, as Markdown.

`acp-tui run --format markdown` prints it, and the app's export writes it beside the JSON lines. The
input is the runs' records (`acp_tui.reports.records.RunRecord`). Layout: a table with one
row per run, then every answer under its own numbered heading, then every diff in a `diff` block.

Everything from an agent or a config is untrusted: control characters are made visible
(`untrusted.visible`), names in headings and cells are escaped so they stay text, and answers and
diffs sit in fences longer than any run of backticks inside them, so an answer's own headings or
fences can never become the report's.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from acp_tui.core.text import one_line, visible

if TYPE_CHECKING:
    from acp_tui.reports.records import RunRecord, UsageSeen

COLUMNS = (
    "Agent",
    "Stop reason",
    "First chunk",
    "Total",
    "Tokens",
    "Cost",
    "Hidden updates",
    "Permissions asked/allowed/denied",
    "Files changed",
)
NONE = "—"
NAME_LIMIT = 60
# What could start emphasis, code, a link, HTML, a table cell or a heading inside a line of ours.
_MARKDOWN_PUNCTUATION = re.compile(r"([\\`*_\[\]<>#|~])")
_BACKTICKS = re.compile(r"`+")


# The table's cells, as plain text (the app's compare view shows the same) --------------------------


def row(record: RunRecord) -> tuple[str, ...]:
    """One run's cells, in `COLUMNS` order, untrusted text made visible."""
    return (
        one_line(record.name, NAME_LIMIT),
        record.stop_reason.value,
        _seconds(record.first_chunk_s),
        _seconds(record.duration_s),
        tokens(record.usage),
        cost(record.usage),
        str(sum(record.hidden.values())),
        "{}/{}/{}".format(*permission_counts(record)),
        files_changed(record),
    )


def permission_counts(record: RunRecord) -> tuple[int, int, int]:
    """(asked, allowed, denied): denied is every request not allowed (rejected or cancelled)."""
    decisions = [p.decision for p in record.permissions]
    allowed = sum(decision.startswith("allow") for decision in decisions)
    return len(decisions), allowed, len(decisions) - allowed


def tokens(usage: UsageSeen | None) -> str:
    if usage is None:
        return NONE
    return f"{usage.used:,} / {usage.size:,}" if usage.size else f"{usage.used:,}"


def cost(usage: UsageSeen | None) -> str:
    if usage is None or usage.cost is None:
        return NONE
    return f"{usage.cost.amount:.4f} {one_line(usage.cost.currency, 8)}".rstrip()


def files_changed(record: RunRecord) -> str:
    stat = record.diff_stat
    if stat is None:
        return NONE
    return f"{stat.files} (+{stat.insertions} -{stat.deletions})"


def _seconds(value: float | None) -> str:
    return f"{value:.2f} s" if value is not None else NONE


# The document ---------------------------------------------------------------------------------------


def comparison_markdown(records: Iterable[RunRecord], *, title: str = "acp-tui comparison") -> str:
    """The whole report for `records` (one prompt's runs, in the order given)."""
    runs = list(records)
    parts = [f"# {inline(title)}\n"]
    prompts = list(dict.fromkeys(r.prompt for r in runs))
    if len(prompts) == 1:
        parts.append("**Prompt**\n\n" + fenced(prompts[0], "text"))
    bases = sorted({r.base for r in runs if r.base})
    if bases:
        parts.append(
            "Each run worked in its own git worktree at "
            + ", ".join(f"`{inline(base[:12])}`" for base in bases)
            + "; uncommitted changes of the checkout were not carried.\n"
        )
    parts.append(table(runs))
    parts.append("## Answers\n")
    for number, record in enumerate(runs, 1):
        parts.append(_answer_section(number, record))
    parts.append("## Changes\n")
    for number, record in enumerate(runs, 1):
        parts.append(_change_section(number, record))
    return "\n".join(parts)


def table(records: Sequence[RunRecord]) -> str:
    lines = [_table_line(COLUMNS), _table_line(["---"] * len(COLUMNS))]
    for number, record in enumerate(records, 1):
        cells = row(record)
        lines.append(_table_line([f"{number}. {_escape(cells[0])}", *(_escape(c) for c in cells[1:])]))
    return "\n".join(lines) + "\n"


def _table_line(cells: Sequence[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def heading(number: int, record: RunRecord) -> str:
    """A run's heading text: numbered, so two runs of one agent never share a heading."""
    return f"{number}. {inline(record.name, NAME_LIMIT)}"


def _answer_section(number: int, record: RunRecord) -> str:
    lines = [f"### {heading(number, record)}: {inline(record.stop_reason.value)}\n"]
    info = record.agent
    if info is not None and info.name:  # what the agent said it is, at `initialize`
        said = " ".join(value for value in (info.title, info.version) if value)
        lines.append(f"Agent: {inline(info.name)}" + (f" ({inline(said)})" if said else "") + "\n")
    if record.error:
        lines.append(f"Error: {inline(record.error)}\n")
    answer = record.output
    lines.append(fenced(answer, "markdown") if answer else "*(no answer)*\n")
    if record.truncated:
        lines.append("*(the answer was cut at the size limit)*\n")
    return "\n".join(lines)


def _change_section(number: int, record: RunRecord) -> str:
    summary = f": {files_changed(record)}" if record.diff_stat is not None else ""
    lines = [f"### {heading(number, record)}{summary}\n"]
    diff = record.diff
    if not record.base:
        lines.append("*(not isolated: no worktree, no recorded change)*\n")
    elif diff is None:
        lines.append("*(the change could not be recorded)*\n")
    elif not diff:
        lines.append("*(no change)*\n")
    else:
        lines.append(fenced(diff, "diff"))
        if record.diff_truncated:
            lines.append("*(the diff was cut at the size limit: it cannot be applied as it is)*\n")
    return "\n".join(lines)


def fenced(text: str, info: str = "") -> str:
    """`text` (made visible) in a backtick fence longer than any backtick run inside it."""
    body = visible(text)
    longest = max((len(run) for run in _BACKTICKS.findall(body)), default=0)
    fence = "`" * max(3, longest + 1)
    if not body.endswith("\n"):
        body += "\n"
    return f"{fence}{info}\n{body}{fence}\n"


def inline(text: str, limit: int | None = None) -> str:
    """Untrusted text for a heading or a paragraph: one line, visible, Markdown punctuation escaped."""
    return _escape(one_line(text, limit))


def _escape(text: str) -> str:
    return _MARKDOWN_PUNCTUATION.sub(r"\\\1", text)
