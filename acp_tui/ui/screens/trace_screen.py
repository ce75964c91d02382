"""A run's protocol trace: every JSON-RPC frame in and out, as the file on disk has it."""

from __future__ import annotations

import json

from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import Log, Static

from acp_tui.core.text import one_line
from acp_tui.ui import text
from acp_tui.ui.screens._dialog import DialogScreen


def frame_line(entry: dict[str, object]) -> str:
    """One frame on one line; JSON's ASCII escapes keep every control character visible."""
    arrow = "→" if entry.get("dir") == "out" else "←"
    frame = entry.get("frame")
    what = ""
    if isinstance(frame, dict):
        what = one_line(str(frame.get("method") or f"response {frame.get('id')}"), 40)
    t = entry.get("t", 0.0)
    seconds = float(t) if isinstance(t, int | float) else 0.0
    return f"{seconds:9.3f} {arrow} {what:<26} {json.dumps(frame)[:400]}"


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

    def compose_dialog(self) -> ComposeResult:
        yield Static(text.markup("[b]$agent[/b] protocol trace: $path", agent=self.agent, path=self.path))
        yield Log(id="frames", highlight=False)
        yield Static("→ to the agent · ← from the agent", classes="hint")

    def on_mount(self) -> None:
        log = self.query_one(Log)
        try:
            with open(self.path, encoding="utf-8", errors="replace") as f:
                log.write_lines(frame_line(json.loads(line)) for line in f if line.strip())
        except (OSError, ValueError) as exc:
            log.write_line(one_line(f"could not read the trace: {exc}"))
