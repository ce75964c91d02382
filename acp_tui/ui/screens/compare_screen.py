"""A round's comparison: the report's table, the answers side by side, the focused run's diff.

It takes the runs' records (as `acp_tui.reports.compare` does), so it knows nothing of panes or
ACP; the main screen gives it the round's records again as more runs end (`follow`). Every cell is
untrusted text: shown as `Text` (never markup), control characters made visible; answers are drawn
as Markdown by the panes' own view (literal text: no markup, no control sequence). `a` dismisses
with the focused run's index when it has a diff to apply; the app applies it
(`isolation.apply_diff`) and says what happened. Escape closes with None.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import TYPE_CHECKING

from rich.syntax import Syntax
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widget import Widget
from textual.widgets import DataTable, Label, Static

from acp_tui.core.model import stop_word
from acp_tui.core.text import one_line, visible
from acp_tui.reports.compare import COLUMNS, NAME_LIMIT, row
from acp_tui.ui import text
from acp_tui.ui.screens._dialog import DimmedScreen
from acp_tui.ui.screens.confirm_screen import ConfirmScreen
from acp_tui.ui.widgets.answer_view import AnswerView
from acp_tui.ui.widgets.fitted_table import FittedTable
from acp_tui.ui.widgets.key_footer import KeyFooter

if TYPE_CHECKING:
    from acp_tui.reports.records import RunRecord

# A diff is drawn whole by Rich's Syntax; past this it is cut for the screen (the record keeps it).
SHOWN_DIFF_CHARS = 200_000
ANSWER_WIDTH = 30  # an answer box's least width: as many side by side as fit, the chosen one among them
# The report's table (`reports.compare.row`) as the screen labels it, in the order a narrow screen
# keeps its columns: the last two are left out where they do not fit.
TABLE = (
    ("run", "Agent"),
    ("stop", "Stop reason"),
    ("total", "Total"),
    ("cost", "Cost"),
    ("tokens", "Tokens"),
    ("a/✓/✗", "Permissions asked/allowed/denied"),
    ("files", "Files changed"),
    ("1st chunk", "First chunk"),
    ("hidden", "Hidden updates"),
)


def run_name(number: int, record: RunRecord) -> str:
    """`2. codex`, and its turn when it is a follow-up's (`4. scribe t2`): never two alike."""
    later = f" t{record.turn}" if record.turn > 1 else ""
    return f"{number}. {one_line(record.name, NAME_LIMIT)}{later}"


def table_row(number: int, record: RunRecord) -> tuple[Text, ...]:
    cells = dict(zip(COLUMNS, row(record), strict=True))
    cells["Agent"] = run_name(number, record)
    cells["Stop reason"] = stop_word(record.stop_reason)  # the screen's word
    return tuple(Text(cells[column], no_wrap=True, overflow="ellipsis") for _, column in TABLE)


def diff_renderable(record: RunRecord) -> Text | Syntax:
    """The run's diff, highlighted (Rich's `diff` lexer), or a line saying why there is none."""
    diff = record.diff
    if not record.base:
        return Text("not isolated: no worktree, no recorded change", style="dim")
    if diff is None:
        return Text("the change could not be recorded", style="dim")
    if not diff:
        return Text("no change", style="dim")
    shown = visible(diff[:SHOWN_DIFF_CHARS])
    if len(diff) > SHOWN_DIFF_CHARS or record.diff_truncated:
        shown += "\n… (cut here: the diff is longer)\n"
    return Syntax(shown, "diff", theme="ansi_dark", word_wrap=False, background_color="default")


def can_apply(record: RunRecord) -> bool:
    return bool(record.base and record.diff and not record.diff_truncated)


class CompareScreen(DimmedScreen[int | None]):
    CSS_PATH = "compare_screen.tcss"
    BINDINGS = [
        Binding("escape,q,v", "close", "Close"),
        Binding("a", "apply", "Apply diff"),
        Binding("pageup", "scroll_answer('page_up')", "Answer up"),
        Binding("pagedown", "scroll_answer('page_down')", "Answer down"),
    ]

    def __init__(
        self,
        records: Sequence[RunRecord],
        *,
        focused: int = 0,
        title: str = "Compare",
        round_no: int | None = None,
    ) -> None:
        super().__init__()
        self.round_no = round_no  # the round it compares, for whoever follows it
        self._filling = asyncio.Lock()
        self.records = list(records)
        self.chosen = min(max(focused, 0), max(len(self.records) - 1, 0))
        self.title_text = title

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Label("", id="title")
            labels = [label for label, _ in TABLE]
            yield FittedTable(labels, ("run",), optional=("1st chunk", "hidden"), id="runs")
            yield Horizontal(id="answers")
            with VerticalScroll(id="diff"):
                yield Static(id="diff-view")
            yield Label("up / down: choose a run, its answer and its diff", classes="hint")
        yield KeyFooter()

    async def on_mount(self) -> None:
        await self._fill()
        self.query_one("#runs", FittedTable).focus()

    async def follow(self, records: Sequence[RunRecord], title: str, *, chosen: int = 0) -> None:
        """The round again, more of its runs ended; `chosen`: the run chosen, in `records`."""
        self.records = list(records)
        self.title_text = title
        self.chosen = chosen
        await self._fill()

    async def _fill(self) -> None:
        async with self._filling:  # one at a time: a run may end while the view is being made
            await self._fill_now()

    async def _fill_now(self) -> None:
        self.query_one("#title", Label).update(Text(one_line(self.title_text, 120), style="bold"))
        table = self.query_one("#runs", FittedTable)
        table.show([table_row(number, record) for number, record in enumerate(self.records, 1)])
        answers = self.query_one("#answers", Horizontal)
        await answers.remove_children()
        await answers.mount_all(
            Vertical(Label(Text(run_name(number, record), style="bold")), _answer(record), classes="answer")
            for number, record in enumerate(self.records, 1)
        )
        if self.records:
            self.chosen = min(self.chosen, len(self.records) - 1)
            table.move_cursor(row=self.chosen)
        self._show(self.chosen)

    @on(DataTable.RowHighlighted, "#runs")
    def _row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._show(event.cursor_row)

    def on_resize(self) -> None:
        self._show(self.chosen)

    def _show(self, index: int) -> None:
        """The chosen run's row, answer (with as many others beside it as fit) and diff."""
        if not self.records:
            self.query_one("#diff-view", Static).update(Text("no runs in this round", style="dim"))
            return
        self.chosen = index
        boxes = list(self.query(".answer"))
        fit = max(1, (self.size.width - 4) // ANSWER_WIDTH)  # the dialog's border and padding taken
        first = min(max(0, index - fit + 1), max(0, len(boxes) - fit))
        for i, answer in enumerate(boxes):
            answer.set_class(i == index, "focused")
            answer.display = first <= i < first + fit
        record = self.records[index]
        self.query_one("#diff", VerticalScroll).border_title = f"diff of {run_name(index + 1, record)}"
        self.query_one("#diff-view", Static).update(diff_renderable(record))

    def action_apply(self) -> None:
        if self.records and can_apply(self.records[self.chosen]):
            self.dismiss(self.chosen)
        else:
            self.notify("This run has no diff that can be applied.", severity="warning")

    def action_close(self) -> None:
        self.dismiss(None)

    def action_scroll_answer(self, where: str) -> None:
        views = self.query(".answer").results(Vertical)
        view = next((v for i, v in enumerate(views) if i == self.chosen), None)
        if view is not None and view.query(AnswerView):
            getattr(view.query_one(AnswerView), f"scroll_{where}")(animate=False)


def _answer(record: RunRecord) -> Widget:
    """The run's answer as its pane drew it; with none, why (its error), never a bare blank."""
    if record.output:
        return FinishedAnswer(record.output)
    error = record.error
    said = text.literal(f"(no answer) {error}" if error else "(no answer)")
    return Static(said, classes="no-answer -error" if error else "no-answer")


class FinishedAnswer(AnswerView):
    """A whole answer, drawn as the panes draw theirs (Markdown, literal text)."""

    def __init__(self, output: str) -> None:
        super().__init__()
        self.output = output

    def on_mount(self) -> None:
        self.append(self.output)
        self.finish()


class ApplyConfirmScreen(ConfirmScreen):
    """Applying a run's diff to the user's checkout: asked first, the focus on Cancel."""

    BINDINGS = [Binding("escape,n", "answer('no')", "Cancel"), Binding("y", "answer('yes')", "Apply")]
