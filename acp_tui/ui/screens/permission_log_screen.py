"""A run's permission log: what was asked, the options offered, what was chosen, by which rule."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import DataTable, Label

from ...subagents import PermissionRecord


class PermissionLogScreen(ModalScreen[None]):
    CSS_PATH = "permission_log_screen.tcss"
    BINDINGS = [Binding("escape,q,l", "dismiss", "Close")]

    def __init__(self, agent: str, records: list[PermissionRecord]) -> None:
        super().__init__()
        self.agent = agent
        self.records = records

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Label(f"[b]{self.agent}[/]: {len(self.records)} permission request(s)")
            table: DataTable[str] = DataTable(zebra_stripes=True, cursor_type="row")
            table.add_columns("at", "request", "kind", "options offered", "decision", "rule")
            for record in self.records:
                offered = ", ".join(f"{o.name} ({o.kind})" for o in record.options) or "none"
                table.add_row(
                    f"{record.at:.2f} s",
                    record.title,
                    record.kind or "-",
                    offered,
                    record.decision + (f" [{record.option_id}]" if record.option_id else ""),
                    record.rule,
                )
            yield table
            yield Label("escape: close", classes="hint")

    async def action_dismiss(self, result: None = None) -> None:
        self.dismiss(result)
