"""A run's permission log: what was decided, by which rule and after how long first (never cut), then
what was asked and offered (cut to the width left)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import Static

from acp_tui.core.model import PermissionRecord
from acp_tui.ui import text
from acp_tui.ui.screens._dialog import DialogScreen
from acp_tui.ui.summary import decided_by, offered_summary
from acp_tui.ui.widgets.fitted_table import FittedTable

COLUMNS = ("decision", "rule", "waited", "at", "kind", "request", "options offered")


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
        table = FittedTable(COLUMNS, flexible=("request", "options offered"))
        table.show(
            [
                (
                    text.rich_text(
                        record.decision + (f" ({record.option_id})" if record.option_id else ""), "bold"
                    ),
                    text.rich_text(decided_by(record)),
                    text.rich_text(at_text(record.waited_s)),
                    text.rich_text(at_text(record.at)),
                    text.rich_text(record.kind or "-"),
                    text.rich_text(record.title),
                    text.rich_text(offered_summary(record)),
                )
                for record in self.records
            ]
        )
        yield table
