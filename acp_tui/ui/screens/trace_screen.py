"""A run's protocol trace: every JSON-RPC frame in and out, as the file on disk has it.

The file is read in a thread (a trace can be large, and the screen must not freeze the app), line by
line as `acp-tui replay` reads it: a line that is no trace line is shown as what is wrong with it,
between the frames, never as an error of the screen.
"""

from __future__ import annotations

import json

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import Log, Static

from acp_tui.core.text import one_line
from acp_tui.lab.trace_file import Entry, TraceError, trace_entries
from acp_tui.ui import text
from acp_tui.ui.screens._dialog import DialogScreen


def frame_line(entry: Entry) -> str:
    """One frame on one line; JSON's ASCII escapes keep every control character visible."""
    arrow = "→" if entry.dir == "out" else "←"
    what = one_line(str(entry.frame.get("method") or f"response {entry.frame.get('id')}"), 40)
    return f"{entry.t:9.3f} {arrow} {what:<26} {json.dumps(entry.frame)[:400]}"


def trace_lines(path: str) -> list[str]:
    """The trace as shown: a line per frame, or per line that is none (saying why). Never raises."""
    try:
        entries = trace_entries(path, where="")
    except TraceError as exc:
        return [one_line(f"could not read the trace: {exc}")]
    return [frame_line(e) if isinstance(e, Entry) else one_line(f"✗ {e}") for e in entries]


class TraceScreen(DialogScreen[None]):
    DEFAULT_CSS = """
    TraceScreen {
        & > #dialog { width: 95%; max-width: 200; height: 90%; }
        & #frames { height: 1fr; min-height: 5; margin: 1 0 0 0; }
    }
    """
    BINDINGS = [Binding("escape,q,t", "close", "Close")]

    def __init__(self, agent: str, path: str) -> None:
        super().__init__()
        self.agent = agent
        self.path = path
        self.loaded = False  # the frames are shown

    def compose_dialog(self) -> ComposeResult:
        yield Static(text.markup("[b]$agent[/b] protocol trace: $path", agent=self.agent, path=self.path))
        yield Log(id="frames", highlight=False)
        yield Static("→ to the agent · ← from the agent", classes="hint")

    def on_mount(self) -> None:
        self._read()

    @work(thread=True, exit_on_error=False)
    def _read(self) -> None:
        lines = trace_lines(self.path)
        self.app.call_from_thread(self._show, lines)

    def _show(self, lines: list[str]) -> None:
        if self.is_attached:  # not closed while it was read
            self.query_one(Log).write_lines(lines)
            self.loaded = True
