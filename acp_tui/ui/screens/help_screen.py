"""Every key of the app, in one place (the README's table says the same)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Grid
from textual.widgets import Static

from acp_tui.ui.screens._dialog import DialogScreen

KEYS = (
    ("In the prompt", ""),
    ("enter", "send the prompt to the checked agents: a new round, focus goes to its first pane"),
    ("ctrl+j, shift+enter", "a new line in the prompt (a pasted text is kept whole)"),
    ("up / down", "at the first / last line: the prompts sent before"),
    ("escape", "leave the prompt for the panes"),
    ("On the panes", ""),
    ("/ or i", "back to the prompt"),
    ("tab / shift+tab", "next / previous pane, in reading order (also ctrl+right / ctrl+left)"),
    ("1 … 9", "the Nth pane of the newest round"),
    ("c", "cancel the focused run"),
    ("r", "re-run: a new attempt beside this one, with the agent's policy and options of now"),
    ("L", "after an authentication failure: run the agent's terminal login, then run again"),
    ("x", "close the pane (the run stays in the board and the export)"),
    ("z", "zoom the focused pane to the whole screen, and back"),
    ("y", "copy the focused answer to the clipboard"),
    ("e", "show or hide the run's stderr"),
    ("l", "the run's permission log: decision, rule, request, options"),
    ("t", "the run's protocol trace (when tracing was on as it started)"),
    ("v", "compare the pane's round: table, answers side by side, the chosen run's diff (a applies it)"),
    ("A", "apply the run's diff to the main checkout (git apply --3way), after a confirm"),
    ("k", "keep the run's worktree after the pane closes and after quit (again: not kept)"),
    ("up down pgup pgdn", "scroll the answer; home to its start, end follows it again"),
    ("Anywhere", ""),
    ("a", "answer the oldest permission request waiting for you (the ask policy)"),
    ("b", "the board: every run of the session, sortable, filterable; enter jumps to it"),
    ("ctrl+k", "cancel every live run"),
    ("f2", "the agents: policy (its rules), sandbox, mode, model for the next runs; p probes"),
    ("ctrl+g", "worktree on / off: each run of the next rounds in its own git worktree of HEAD"),
    ("ctrl+b", "sandbox on / off: every agent of the next rounds confined by bubblewrap"),
    ("ctrl+r", "reload the config file (a bad one changes nothing)"),
    ("P", "the permissions panel: every request, what another policy would decide"),
    ("ctrl+t", "protocol traces on / off for the next runs"),
    ("ctrl+s", "export the session: Markdown and JSON lines, every attempt"),
    ("ctrl+p", "the command palette: every command of the app"),
    ("?", "this help"),
    ("ctrl+c", "quit: every live run is disposed first"),
)


class HelpScreen(DialogScreen[None]):
    DEFAULT_CSS = """
    HelpScreen {
        & > #dialog { max-width: 100; }
        & #keys { grid-size: 2; grid-columns: 18 1fr; grid-gutter: 0 2; grid-rows: auto; height: auto; }
        & .key { color: $text-accent; }
        & .section { column-span: 2; text-style: bold; height: 2; content-align: left bottom; }
    }
    """
    BINDINGS = [Binding("escape,q,question_mark", "close", "Close")]
    DIALOG_FOCUSABLE = True  # nothing else to focus: the keys scroll it

    def compose_dialog(self) -> ComposeResult:
        with Grid(id="keys"):
            for key, what in KEYS:  # our own text only
                if what:
                    yield Static(key, classes="key", markup=False)
                    yield Static(what, markup=False)
                else:
                    yield Static(key, classes="section", markup=False)

    def on_mount(self) -> None:
        dialog = self.query_one("#dialog")
        dialog.border_title = "every key (escape: close)"
        dialog.focus()
