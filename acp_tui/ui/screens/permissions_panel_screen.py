"""Every permission request of the session, across runs, and what another policy would decide.

One row per request: agent, round/attempt, the decision, the rule, how long it waited, the policy in
force, tool kind and title, the options offered (decision, rule and wait are never cut: the title
and the options give way). The highlighted request is written out whole below the table. Pick a
policy there: it says what that policy would decide (the policy lab's dry run, `acp-tui policy
check`, on one request). Everything shown came from agents: cells are `Text`, never markup, on one
line.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import DataTable, Label, Select

from acp_tui.core.model import PermissionRecord
from acp_tui.core.text import one_line
from acp_tui.lab.check import Decision, ask_of, decide
from acp_tui.policy.ask import PermissionPolicy
from acp_tui.ui import text
from acp_tui.ui.screens._dialog import DialogScreen
from acp_tui.ui.summary import decided_by, offered_summary
from acp_tui.ui.widgets.fitted_table import FittedTable

COLUMNS = ("agent", "round", "decision", "rule", "waited", "policy", "kind", "request", "options")


@dataclass(frozen=True)
class PanelRow:
    """One request as the panel shows it (the app builds these from its panes)."""

    agent: str
    round: str  # e.g. "2/1": round 2, attempt 1
    policy: str
    record: PermissionRecord
    cwd: str | None = None  # the run's cwd: path rules are taken from it
    waited_s: float | None = None  # from the request to its answer, when known


class PermissionsPanelScreen(DialogScreen[None]):
    DEFAULT_CSS = """
    PermissionsPanelScreen {
        & > #dialog { width: 95%; max-width: 200; }
        & DataTable { height: auto; max-height: 20; margin: 1 0 0 0; }
        & #detail { margin: 1 0; }
        & Select { width: 60; }
        & #verdict { margin: 1 0; text-style: bold; }
    }
    """
    BINDINGS = [Binding("escape,q", "close", "Close")]

    def __init__(self, rows: Sequence[PanelRow], policies: Mapping[str, PermissionPolicy]) -> None:
        super().__init__()
        self.rows = list(rows)
        self.policies = dict(policies)

    def compose_dialog(self) -> ComposeResult:
        yield Label(f"{len(self.rows)} permission request(s) this session", id="title")
        table = FittedTable(COLUMNS, flexible=("request", "options"), id="requests")
        table.show(
            [
                [
                    text.rich_text(cell)
                    for cell in (
                        row.agent,
                        row.round,
                        row.record.decision,
                        decided_by(row.record),
                        f"{row.waited_s:.2f} s" if row.waited_s is not None else "-",
                        row.policy,
                        row.record.kind or "-",
                        row.record.title,
                        offered_summary(row.record),
                    )
                ]
                for row in self.rows
            ]
        )
        yield table
        yield Label("", id="detail")
        options = [(Text(one_line(name)), name) for name in self.policies]
        yield Select(options, prompt="What would policy … decide?", id="policy")
        yield Label("", id="verdict")
        yield Label("up/down: a request; pick a policy to see its decision; escape: close", classes="hint")

    @on(DataTable.RowHighlighted)
    @on(Select.Changed)
    async def show_verdict(self) -> None:
        await self.refresh_verdict()

    async def refresh_verdict(self) -> None:
        verdict = self.query_one("#verdict", Label)
        name = self.query_one("#policy", Select).value
        table = self.query_one("#requests", DataTable)
        row = self.rows[min(max(table.cursor_row, 0), len(self.rows) - 1)] if self.rows else None
        self.query_one("#detail", Label).update(text.line(request_line(row)) if row else "")
        if row is None or not isinstance(name, str) or name not in self.policies:
            verdict.update("")
            return
        now = await decide(self.policies[name], ask_of(row.record, row.cwd))
        verdict.update(Text(verdict_line(name, row.record, now)))


def request_line(row: PanelRow) -> str:
    """The highlighted request, whole: what a narrow table had to cut."""
    record = row.record
    waited = f", waited {row.waited_s:.2f} s" if row.waited_s is not None else ""
    return (
        f"{row.agent} {row.round}: {record.decision} by {decided_by(record)}{waited} · "
        f"{record.kind or 'no kind'}: {record.title} · offered {offered_summary(record)}"
    )


def verdict_line(policy: str, record: PermissionRecord, now: Decision) -> str:
    was = record.decision
    change = f"changed from {was}" if now.decision != was else f"same as recorded ({was})"
    rule = f" by {one_line(now.rule)}" if now.rule else ""
    return f"{one_line(policy)} would decide {now.decision}{rule}: {change}"
