"""A run's activity (`o` on its pane): what the agent did besides answering. Every tool call with its
kind, title, status, paths and duration (failed ones first to the eye: in the error colour), then
the highlighted call's content (an error message, a diff), the thoughts, plans and other updates
counted, and the connections its sandbox refused (hosts its `sandbox_network` list does not name).
The answer stream stays clean: this is where its cards went.

It follows a live run (the pane tells it when a tool call changes or a connection is refused).
Everything here came from the agent: literal text, one line per cell.
"""

from __future__ import annotations

from collections.abc import Sequence

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.widgets import DataTable, Static

from acp_tui.core.model import NetworkRefusal, ToolCallInfo
from acp_tui.session.attempts import Attempt
from acp_tui.ui import text
from acp_tui.ui.screens._dialog import DialogScreen
from acp_tui.ui.summary import format_seconds, hidden_label, usage_summary
from acp_tui.ui.widgets.fitted_table import FittedTable
from acp_tui.ui.widgets.status_badge import STATE_COLOURS

COLUMNS = ("status", "time", "kind", "title", "paths")
REFUSALS_SHOWN = 20  # hosts and ports listed; more are counted
# Counted otherwise: the tool calls are the table's rows, the usage is said in words.
NOT_COUNTED = ("tool_call", "tool_call_update", "usage_update")


def activity_counts(attempt: Attempt) -> str:
    """`4 tool calls (1 failed) · thoughts 12 · plans 2 · 1.2k/200k tok 0.0004 USD`: the hidden
    updates, counted, and the usage last reported."""
    calls = attempt.tool_calls
    failed = sum(call.failed for call in calls)
    hidden = attempt.result.hidden if attempt.result is not None else attempt.hidden
    parts = [
        f"{len(calls)} tool call{'' if len(calls) == 1 else 's'}" + (f" ({failed} failed)" if failed else "")
    ]
    parts += [f"{hidden_label(kind)} {n}" for kind, n in sorted(hidden.items()) if kind not in NOT_COUNTED]
    if refused := len(attempt.network_refused):
        parts.append(f"{refused} connection{'' if refused == 1 else 's'} refused")
    usage = usage_summary(attempt.usage)
    return " · ".join([*parts, usage] if usage else parts)


def refusals_text(refusals: Sequence[NetworkRefusal]) -> str:
    """What the agent tried that its sandbox refused, a line per host and port in the order first
    tried: `refused: evil.example:443 (3 times, first at 1.2 s)`."""
    seen: dict[tuple[str, int], list[float]] = {}
    for refusal in refusals:
        seen.setdefault((refusal.host, refusal.port), []).append(refusal.at)
    lines = [
        f"refused: {host}:{port} ("
        + (f"{len(times)} times, first " if len(times) > 1 else "")
        + f"at {format_seconds(times[0])})"
        for (host, port), times in list(seen.items())[:REFUSALS_SHOWN]
    ]
    if len(seen) > REFUSALS_SHOWN:
        lines.append(f"… and {len(seen) - REFUSALS_SHOWN} more hosts and ports")
    return "\n".join(lines)


def call_row(call: ToolCallInfo) -> tuple[str, ...]:
    duration = call.duration_s
    return (
        call.status,
        format_seconds(duration) if duration is not None else "…",
        call.kind or "-",
        call.label,
        ", ".join(call.paths) or "-",
    )


class ActivityScreen(DialogScreen[None]):
    DEFAULT_CSS = f"""
    ActivityScreen {{
        & > #dialog {{ width: 95%; max-width: 180; }}
        & #counts {{ margin: 1 0 0 0; }}
        & DataTable {{ height: auto; max-height: 16; margin: 1 0 0 0; }}
        & #call {{ height: auto; max-height: 12; margin: 1 0 0 0; border: round $panel-lighten-2; }}
        & .failed {{ color: {STATE_COLOURS["error"]}; text-style: bold; }}
        & #refused {{ height: auto; max-height: 8; margin: 1 0 0 0; color: {STATE_COLOURS["error"]}; }}
    }}
    """
    BINDINGS = [Binding("escape,q,o", "close", "Close")]

    def __init__(self, attempt: Attempt) -> None:
        super().__init__()
        self.attempt = attempt
        self._shown: tuple[ToolCallInfo, ...] | None = None

    def compose_dialog(self) -> ComposeResult:
        attempt = self.attempt
        yield Static(
            text.markup("[b]$agent[/b] $label: activity", agent=attempt.agent, label=attempt.label),
            id="title",
        )
        yield Static("", id="counts")
        yield Static("", id="refused")
        yield FittedTable(COLUMNS, flexible=("title", "paths"), id="calls")
        with VerticalScroll(id="call"):
            yield Static("", id="call-content")
        yield Static("up/down: a tool call, its content below · escape: close", classes="hint")

    def on_mount(self) -> None:
        self.follow()
        self.query_one(DataTable).focus()

    def follow(self) -> None:
        """What the run did so far (called again by its pane when a tool call changes)."""
        calls = self.attempt.tool_calls
        self.query_one("#counts", Static).update(text.line(activity_counts(self.attempt)))
        refused = self.query_one("#refused", Static)
        refused.update(text.literal(refusals_text(self.attempt.network_refused)))
        refused.display = bool(self.attempt.network_refused)
        if calls == self._shown:
            return
        self._shown = calls
        table = self.query_one(FittedTable)
        table.show(
            [
                tuple(
                    text.rich_text(cell, "bold " + STATE_COLOURS["error"] if call.failed else "")
                    for cell in call_row(call)
                )
                for call in calls
            ]
        )
        self._show_call(table.cursor_row)

    @on(DataTable.RowHighlighted)
    def _highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._show_call(event.cursor_row)

    def _show_call(self, index: int) -> None:
        calls = self._shown or ()
        content = self.query_one("#call-content", Static)
        if not calls:
            content.update("No tool call: the agent only answered.")
            return
        call = calls[min(max(index, 0), len(calls) - 1)]
        content.update(text.literal(call.content or f"({call.label}: no content)"))
        content.set_class(call.failed, "failed")
