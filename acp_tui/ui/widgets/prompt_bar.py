"""Where a round starts: the prompt, and which agent presets receive it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, HorizontalScroll, Vertical
from textual.message import Message
from textual.widgets import Button, Checkbox, Input, Label


class PromptBar(Vertical):
    DEFAULT_CSS = """
    PromptBar {
        height: auto;
        padding: 0 1;
        margin: 0 1;
        border: round $primary;
        border-title-color: $text-primary;
        &:focus-within { border: round $accent; }
        #prompt-row { height: 1; }
        #prompt { width: 1fr; }
        #run { margin-left: 1; }
        #targets { height: auto; scrollbar-size-horizontal: 0; }
        #targets Checkbox { width: auto; border: none; padding: 0 1 0 0; background: transparent; }
        #targets Label { padding: 0 1 0 0; color: $text-muted; }
    }
    """

    @dataclass
    class Submitted(Message):
        prompt: str
        agents: list[str]

    def __init__(self, policies: Mapping[str, str], prompt: str = "") -> None:
        super().__init__()
        self.policies = dict(policies)  # agent -> policy, in display order
        self.suggested = prompt

    def on_mount(self) -> None:
        self.border_title = "prompt"
        self.border_subtitle = "enter: send to the selected agents"

    def compose(self) -> ComposeResult:
        with Horizontal(id="prompt-row"):
            yield Input(self.suggested, placeholder="Ask every selected agent…", id="prompt", compact=True)
            yield Button("Run", id="run", variant="primary", compact=True)
        with HorizontalScroll(id="targets"):
            yield Label("send to:")
            for agent, policy in self.policies.items():
                yield Checkbox(f"{agent} · {policy}", value=True, name=agent, compact=True)

    def selected(self) -> list[str]:
        return [box.name for box in self.query(Checkbox) if box.value and box.name]

    @on(Input.Submitted, "#prompt")
    @on(Button.Pressed, "#run")
    def submit(self) -> None:
        prompt = self.query_one("#prompt", Input).value.strip()
        if not prompt:
            self.notify("Type a prompt first.", severity="warning")
            return
        agents = self.selected()
        if not agents:
            self.notify("Select at least one agent.", severity="warning")
            return
        self.post_message(self.Submitted(prompt, agents))

    def show_policies(self, policies: Mapping[str, str]) -> None:
        for box in self.query(Checkbox):
            if box.name is not None and box.name in policies:
                box.label = f"{box.name} · {policies[box.name]}"

    def focus_prompt(self) -> None:
        self.query_one("#prompt", Input).focus()
