"""A run's permission log: what was decided and by which rule first, then what was asked and offered."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import DataTable, Static

from acp_tui.core.model import PermissionRecord
from acp_tui.ui import text
from acp_tui.ui.screens._dialog import DialogScreen


def at_text(seconds: float) -> str:
    return f"{seconds:.2f} s"


class PermissionLogScreen(DialogScreen[None]):
    DEFAULT_CSS = """
    PermissionLogScreen {
        & > #dialog { width: 95%; max-width: 160; }
        & DataTable { height: auto; max-height: 30; margin: 1 0 0 0; }
    }
    """
    BINDINGS = [Binding("escape,q,l", "close", "Close")]

    def __init__(self, agent: str, records: list[PermissionRecord]) -> None:
        super().__init__()
        self.agent = agent
        self.records = records

    def compose_dialog(self) -> ComposeResult:
        count = len(self.records)
        yield Static(text.markup("[b]$agent[/b]: $n permission request(s)", agent=self.agent, n=str(count)))
        if not self.records:
            yield Static("No permission request yet: this agent has asked for nothing.", classes="hint")
            return
        table: DataTable[object] = DataTable(zebra_stripes=True, cursor_type="row")
        table.add_columns("decision", "rule", "request", "at", "kind", "options offered")
        for record in self.records:
            offered = ", ".join(f"{o.name} ({o.kind})" for o in record.options) or "none"
            decision = record.decision + (f" ({record.option_id})" if record.option_id else "")
            table.add_row(
                text.rich_text(decision, "bold"),
                text.rich_text(record.rule),
                text.rich_text(record.title),
                at_text(record.at),
                text.rich_text(record.kind or "-"),
                text.rich_text(offered),
            )
        yield table
