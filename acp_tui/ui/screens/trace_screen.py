"""A run's protocol trace: every JSON-RPC frame in and out, as the file on disk has it."""

from __future__ import annotations

import json

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Label, Log


def frame_line(entry: dict[str, object]) -> str:
    arrow = "→" if entry.get("dir") == "out" else "←"
    frame = entry.get("frame")
    what = ""
    if isinstance(frame, dict):
        what = str(frame.get("method") or f"response {frame.get('id')}")
    return f"{float(entry.get('t', 0.0)):9.3f} {arrow} {what:<26} {json.dumps(frame)[:400]}"  # type: ignore[arg-type]


class TraceScreen(ModalScreen[None]):
    CSS_PATH = "trace_screen.tcss"
    BINDINGS = [Binding("escape,q,t", "dismiss", "Close")]

    def __init__(self, agent: str, path: str) -> None:
        super().__init__()
        self.agent = agent
        self.path = path

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Label(f"[b]{self.agent}[/] protocol trace: {self.path}", markup=True)
            yield Log(id="frames", highlight=False)
            yield Label("→ to the agent · ← from the agent · escape: close", classes="hint")

    def on_mount(self) -> None:
        log = self.query_one(Log)
        try:
            with open(self.path, encoding="utf-8") as f:
                log.write_lines(frame_line(json.loads(line)) for line in f if line.strip())
        except (OSError, ValueError) as exc:
            log.write_line(f"could not read the trace: {exc}")

    async def action_dismiss(self, result: None = None) -> None:
        self.dismiss(result)
