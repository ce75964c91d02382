"""Every key of the app, in one table: the bindings, the help screen, the palette and the intro are
made from it, so that none can say what another does not.

`where` says who owns a key: `app` (anywhere), `grid` (the main screen: rounds and panes), `pane`
(the focused pane), `boxes` (the prompt bar's `send to:` boxes), `prompt` (the text box, which
handles them itself: listed for the help only). A key that is not `priority` acts only where the
focused widget does not take it: in the prompt, letters type and the text box's editing keys
(ctrl+k among them) are its own; no key of ours is a text box's.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Literal, NamedTuple, TypeAlias

from textual.binding import Binding, BindingType

Where: TypeAlias = Literal["prompt", "boxes", "pane", "grid", "app"]
SECTIONS: dict[Where, str] = {
    "prompt": "In the prompt",
    "boxes": "On the send-to boxes",
    "grid": "On the panes",
    "pane": "On the focused pane",
    "app": "Anywhere",
}


class Key(NamedTuple):  # a row of the table; a frozen dataclass took ~1 ms more to declare (first frame)
    keys: str  # Textual's key names, comma-separated (the first is the one shown by default)
    action: str  # the owner's action, as bound (`toggle_box('sandbox')`); "" for the prompt's own keys
    help: str  # what it does, for the help screen and the palette
    where: Where
    label: str = ""  # how the help screen writes the key, when not as `keys`
    footer: str | None = None  # its name in the footer; None: not shown there
    priority: bool = False  # it acts whatever has the focus (the text box included)
    command: str | None = None  # its name in the command palette; None: not a palette command
    intro: str = ""  # what the first screen says of it (only keys that act from the prompt)

    @property
    def shown(self) -> str:
        return self.label or self.keys.replace(",", " / ")

    @property
    def acts_in_prompt(self) -> bool:
        """It does what it says while the focus is in the prompt (the focus of the first screen)."""
        return self.where == "prompt" or self.priority


KEYS: tuple[Key, ...] = (
    # The prompt's own keys (the text box handles them).
    Key("enter", "", "send the prompt to the checked agents: a new round, focus goes to its first pane",
        "prompt", intro="sends to the checked agents (the focus goes to their panes)"),
    Key("ctrl+j,shift+enter", "", "a new line in the prompt (a pasted text is kept whole)", "prompt",
        label="ctrl+j, shift+enter", intro="a new line"),
    Key("up,down", "", "at the first / last line: the prompts sent before", "prompt", label="up / down"),
    Key("ctrl+a,ctrl+e,ctrl+k,ctrl+u,ctrl+w,home,end", "", "the text box's editing keys: ctrl+a or home to "
        "the line start, ctrl+e or end to its end, ctrl+k deletes to the end, ctrl+u to the start, ctrl+w "
        "the word before", "prompt", label="ctrl+a/e/k/u/w"),
    Key("slash", "", "at the start of the prompt: the slash commands the checked agents offer (each with its "
        "description and agents); up / down pick one, tab or enter completes it, escape hides them", "prompt",
        label="/"),
    Key("tab", "", "to the send-to boxes (then to the panes); shift+tab back", "prompt",
        intro="the send-to boxes (space checks one, * all)"),
    Key("escape", "focus_panes", "leave the prompt for the panes", "grid", footer=None),
    # The send-to boxes (space checks or unchecks the focused one: the box's own key).
    Key("space", "", "check or uncheck the focused agent", "boxes"),
    Key("asterisk", "check_all", "check every agent, or uncheck them all when all are checked", "boxes",
        label="*", footer="All / none"),
    # The panes.
    Key("slash,i", "focus_prompt", "back to the prompt, its cursor at the end (a zoom ends)", "grid",
        label="/ or i", command="Prompt"),
    Key("tab,shift+tab", "", "next / previous pane, in reading order (also ctrl+right / ctrl+left)", "grid",
        label="tab / shift+tab"),
    Key("tab,ctrl+right", "screen.next_pane", "", "pane"),
    Key("shift+tab,ctrl+left", "screen.previous_pane", "", "pane"),
    Key("1", "", "the Nth pane of the newest round", "grid", label="1 … 9"),
    *(Key(str(n), f"focus_nth({n})", "", "grid") for n in range(1, 10)),
    # While zoomed, the footer says how back, first (the first binding of a key that applies is shown).
    Key("z", "screen.unzoom", "", "pane", footer="Unzoom"),
    Key("escape", "screen.unzoom", "", "pane"),
    Key("c", "cancel", "cancel the focused run", "pane", footer="Cancel"),
    Key("r", "rerun", "re-run: a new attempt beside this one, with the agent's policy and options of now",
        "pane", footer="Re-run"),
    Key("L", "login", "after an authentication failure: run the agent's terminal login, then run again",
        "pane", footer="Log in"),
    Key("f", "follow_up", "follow up: the prompt goes to this agent alone, in the same session (a fresh "
        "process continues it; escape in the prompt leaves follow-up mode)", "pane", footer="Follow up"),
    Key("x", "close", "close the pane (the run stays in the board and the export)", "pane"),
    Key("X", "close_finished", "close every finished pane (their runs stay in the board and the export)",
        "grid", command="Close finished panes"),
    Key("o", "activity", "the run's activity: every tool call (kind, title, status, paths, time), "
        "thoughts and plans counted", "pane", footer="Activity"),
    Key("z", "zoom", "zoom the focused pane to the whole screen, and back (escape too; the zoom follows "
        "tab and the digits, the prompt ends it)", "grid", command="Zoom"),
    Key("y", "copy", "copy the focused answer to the clipboard", "pane"),
    Key("e", "toggle_stderr", "show or hide the run's stderr", "pane"),
    Key("l", "permissions", "the run's permission log: decision, rule, request, options", "pane"),
    Key("t", "trace", "the run's protocol trace (when tracing was on as it started)", "pane"),
    Key("v", "compare", "compare the pane's round: table, answers side by side, the chosen run's diff "
        "(a applies it)", "grid", command="Compare round"),
    Key("A", "apply_diff", "apply the run's diff to the main checkout (git apply --3way), after a confirm",
        "grid", command="Apply diff"),
    Key("k", "keep_worktree", "keep the run's worktree after the pane closes and after quit (again: not "
        "kept)", "pane"),
    Key("up,down,pageup,pagedown,home,end", "", "scroll the answer; home to its start, end follows it again",
        "pane", label="up down pgup pgdn"),
    # The answer scrolls from the pane's focus: the view itself takes none, so tab walks panes.
    *(Key(key, f"scroll_answer('{where}')", "", "pane") for key, where in (
        ("up", "up"), ("down", "down"), ("pageup", "page_up"), ("pagedown", "page_down"), ("home", "home"),
        ("end", "end"),
    )),
    # Anywhere.
    Key("a", "answer_permission", "answer the oldest permission request (the ask policy) or agent's question "
        "waiting for you", "app", footer="Answer", command="Answer a request or question"),
    Key("b", "board", "the board: every run of the session, sortable, filterable; enter jumps to it", "grid",
        footer="Board", command="Board"),
    # Not ctrl+k, the text boxes' delete-to-the-end: one Enter too many made it cancel every run.
    Key("C", "cancel_all", "cancel every live run, after a confirm whose focus is on no (y cancels them)",
        "app", footer="Stop all", command="Cancel all"),
    Key("f2", "agents", "the agents: policy (its rules), sandbox, mode, model for the next runs; p probes, "
        "s lists the sessions the agent keeps (enter continues one)",
        "app", priority=True, command="Agents", intro="the agents (policy, sandbox, mode, model)"),
    Key("ctrl+g", "toggle_box('worktree')", "worktree on / off: each run of the next rounds in its own git "
        "worktree of HEAD", "grid", priority=True, command="Worktrees"),
    Key("ctrl+b", "toggle_box('sandbox')", "sandbox on / off: every agent of the next rounds confined by "
        "bubblewrap", "grid", priority=True, command="Sandbox"),
    Key("ctrl+r", "reload_config", "reload the config file (a bad one changes nothing)", "app", priority=True,
        command="Reload config"),
    Key("P", "permissions_panel", "the permissions panel: every request, what another policy would decide",
        "grid", command="Permissions of the session"),
    Key("ctrl+t", "toggle_tracing", "protocol traces on / off for the next runs", "app", priority=True,
        command="Tracing"),
    Key("ctrl+s", "export", "export the session: Markdown and JSON lines, every attempt", "app",
        priority=True, command="Export"),
    Key("ctrl+p", "", "the command palette: every command of the app", "app"),  # Textual's own
    Key("f1", "help", "this help, from anywhere", "app", footer="Help", priority=True, command="Help",
        intro="every key"),
    Key("question_mark", "help", "this help too, where the focus is not in the prompt", "app", label="?"),
    Key("ctrl+c", "request_quit", "quit: every live run is disposed first (with runs live or a request "
        "waiting, it asks once: y quits; a second ctrl+c quits at once)", "app", footer="Quit",
        priority=True, intro="quits (every agent stopped first)"),
    Key("ctrl+q", "request_quit", "", "app", priority=True),
)  # fmt: skip


def bindings(where: Where) -> list[BindingType]:
    """The bindings of the owner `where` (the prompt's keys are its text box's own)."""
    return [
        Binding(
            key.keys, key.action, key.footer or key.help, show=key.footer is not None, priority=key.priority
        )
        for key in KEYS
        if key.where == where and key.action
    ]


def help_sections() -> Iterator[tuple[str, list[tuple[str, str]]]]:
    """(section, [(key, what it does)]) for the help screen, in the table's order."""
    for where, title in SECTIONS.items():
        yield title, [(key.shown, key.help) for key in KEYS if key.where == where and key.help]


def commands() -> list[Key]:
    """The palette's commands: the keys that name one."""
    return [key for key in KEYS if key.command is not None]


def intro() -> list[tuple[str, str]]:
    """(key, what it does) for the first screen, whose focus is in the prompt."""
    return [(key.keys.split(",")[0], key.intro) for key in KEYS if key.intro and key.acts_in_prompt]
