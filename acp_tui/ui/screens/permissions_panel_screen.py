"""Every permission request of the session, across runs, and what another policy would decide.

One row per request: agent, round/attempt, the policy in force, tool kind and title, the options
offered, the decision, the rule, how long it waited. Pick a policy below the table: the highlighted
row says what that policy would decide (the policy lab's dry run, `acp-tui policy check`, on one
request). Everything shown came from agents: cells are `Text`, never markup, on one line.
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
from acp_tui.ui.screens._dialog import DialogScreen


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
        & DataTable { height: auto; max-height: 20; margin: 1 0; }
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
        table: DataTable[Text] = DataTable(zebra_stripes=True, cursor_type="row", id="requests")
        table.add_columns(
            "agent", "round", "policy", "kind", "request", "options", "decision", "rule", "waited"
        )
        for row in self.rows:
            record = row.record
            offered = ", ".join(f"{o.name} ({o.kind})" for o in record.options) or "none"
            waited = f"{row.waited_s:.2f} s" if row.waited_s is not None else "-"
            cells = (row.agent, row.round, row.policy, record.kind or "-", record.title, offered)
            table.add_row(
                *(Text(one_line(cell, 60)) for cell in cells),
                Text(one_line(record.decision, 30)),
                Text(one_line(record.rule, 40)),
                Text(waited),
            )
        yield table
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
        if not isinstance(name, str) or name not in self.policies or not self.rows:
            verdict.update("")
            return
        row = self.rows[min(table.cursor_row, len(self.rows) - 1)]
        now = await decide(self.policies[name], ask_of(row.record, row.cwd))
        verdict.update(Text(verdict_line(name, row.record, now)))


def verdict_line(policy: str, record: PermissionRecord, now: Decision) -> str:
    was = record.decision
    change = f"changed from {was}" if now.decision != was else f"same as recorded ({was})"
    rule = f" by {one_line(now.rule, 40)}" if now.rule else ""
    return f"{one_line(policy)} would decide {now.decision}{rule}: {change}"
