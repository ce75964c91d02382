"""Where a round starts: the prompt (several lines if need be), and which agent presets receive it.

Enter sends; `ctrl+j` (or shift+enter, where the terminal tells it apart) starts a new line; a
paste is kept whole, however many lines it has. Up at the first line and down at the last walk the
prompts sent in this session. `escape` leaves the prompt for the panes (the app's binding). The
`worktree` box (the app's `ctrl+g`) runs the next rounds each in its own git worktree; the
`sandbox` box (`ctrl+b`) confines every agent of the next rounds with bubblewrap.

Tab goes from the prompt to the boxes: the `send to:` boxes wrap onto as many lines as they need,
so that no agent a round goes to is out of sight; space checks one, `*` all (or none).

In follow-up mode (`f` on a pane whose run ended) the prompt goes to that pane's agent alone, as the
next turn of its conversation; the bar says so, and escape leaves the mode.

A `/` at the start of the prompt shows the slash commands the agents it goes to offer (`ui.slash`),
above it: up and down pick one, tab or Enter completes it, escape hides them; the prompt is sent as
the text typed (`/name args`), as ACP has it.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.widgets import Button, Label

from acp_tui import compat
from acp_tui.session.attempts import Attempt
from acp_tui.ui import keys, text
from acp_tui.ui.widgets.flow import Flow
from acp_tui.ui.widgets.prompt_stand_in import PromptStandIn
from acp_tui.ui.widgets.toggle import Toggle

if TYPE_CHECKING:
    from textual.widgets import TextArea

    from acp_tui.core.model import CommandInfo
    from acp_tui.ui.widgets.prompt_area import PromptArea


class SendTo(Flow):
    """The boxes: worktree, sandbox, then one per agent; `*` checks every agent, or none."""

    BINDINGS = keys.bindings("boxes")

    def agents(self) -> list[Toggle]:
        return [box for box in self.query(Toggle) if box.name]

    def action_check_all(self) -> None:
        boxes = self.agents()
        check = not all(box.value for box in boxes)
        for box in boxes:
            box.value = check


class RunButton(Button, inherit_css=False):
    """The mouse's Enter: a compact primary button that never takes the focus. Its style is the
    part of Button's that applies to it: Button's own CSS covers every variant and style (7 KB,
    ~8 ms to parse before the first frame)."""

    DEFAULT_CSS = """
    RunButton {
        width: auto;
        min-width: 16;
        height: auto;
        line-pad: 1;
        text-align: center;
        content-align: center middle;
        pointer: pointer;
        text-style: bold;
        color: $button-color-foreground;
        background: $primary;
        &:hover { background: $primary-darken-2; }
        &.-active { background: $primary; tint: $background 30%; }
        &:ansi {
            color: $primary;
            background: ansi_default;
            &:hover { background: $ansi-background; }
            &.-active { background: $ansi-background; tint: transparent; }
        }
    }
    """

    def __init__(self, label: str, *, id: str) -> None:
        super().__init__(label, id=id, variant="primary", compact=True)
        self.can_focus = False  # by mouse: tab walks the panes only


@dataclass
class Submission:
    """What Enter sends: the prompt, and to whom."""

    prompt: str
    agents: list[str]
    worktree: bool = False  # each run in its own git worktree
    sandbox: bool = False  # every agent confined (sandbox = "workspace")
    follow_up: Attempt | None = None  # the turn this prompt follows up on (its agent alone)


class PromptBar(Vertical):
    DEFAULT_CSS = """
    PromptBar {
        height: auto;
        padding: 0 1;
        margin: 0 1;
        border: round $primary;
        border-title-color: $text-primary;
        &.-follow-up { border-title-color: $text-warning; }
        #prompt-row { height: auto; }
        #prompt, PromptStandIn { width: 1fr; height: auto; max-height: 6; min-height: 1; }
        #run { margin-left: 1; }
        #targets Toggle { padding: 0 1 0 0; background: transparent; }
        #targets Label { padding: 0 1 0 0; color: $text-muted; }
    }
    """

    def __init__(
        self,
        policies: Mapping[str, str],
        prompt: str = "",
        checked: Collection[str] | None = None,
        *,
        stand_in: bool = False,
    ) -> None:
        """`checked`: the agents checked at first (None: every one). `stand_in`: the first frame's
        bar, whose text box comes after that frame (`make_prompt`)."""
        super().__init__()
        self.policies = dict(policies)  # agent -> policy, in display order
        self.suggested = prompt
        self.checked = set(self.policies if checked is None else checked)
        self.follow_up: Attempt | None = None
        # The slash commands each agent offers (the app's, as its runs and probes learn them).
        self.commands: Mapping[str, Sequence[CommandInfo]] = {}
        # The first frame's prompt, until its text box is there (`make_prompt`).
        self.stand_in = PromptStandIn(prompt) if stand_in and PromptStandIn.can_draw(prompt) else None

    def on_mount(self) -> None:
        self.show_hints()
        self.show_border()
        self.app.theme_changed_signal.subscribe(self, lambda _theme: self.show_border())

    def show_border(self) -> None:
        """Its colour, set inline: a `:focus-within` rule (or a class) would restyle every widget of
        the bar at each focus change, the first frame's among them."""
        colour = "warning" if self.follow_up is not None else "accent" if self.has_focus_within else "primary"
        self.styles.border = ("round", self.app.theme_variables[colour])

    def on_descendant_focus(self) -> None:
        self.show_border()

    def on_descendant_blur(self) -> None:
        self.show_border()

    async def make_prompt(self) -> None:
        """The text box in the place of the first frame's stand-in, with its text, and the focus if
        the stand-in had it."""
        stand_in = self.stand_in
        if stand_in is None:
            return
        from acp_tui.ui.widgets.prompt_area import PromptArea

        area = PromptArea(stand_in.text, id="prompt")
        with self.app.batch_update():  # no frame shows both, nor neither
            await self.query_one("#prompt-row").mount(area, before=stand_in)
            self.stand_in = None
            if stand_in.has_focus:
                self.focus_prompt()
            else:  # the app blurred: its focus comes back to the text box
                compat.hand_on_focus_kept_over_blur(self.app, stand_in, area)
                area.move_cursor(area.document.end)
            await stand_in.remove()

    async def on_text_area_changed(self, event: TextArea.Changed) -> None:
        """The slash commands that complete what is typed, for the agents it goes to. The menu is
        made at the first `/` typed (the first frame has none), before the next key is routed."""
        from acp_tui.ui.slash import matching, typed_name  # the first edit's, not the first frame's

        area = self.area
        if area.menu is None:
            if typed_name(self.value) is None:
                return
            from acp_tui.ui.widgets.command_menu import CommandMenu

            area.menu = CommandMenu(id="commands")
            await self.mount(area.menu, before=0)
        agents = [self.follow_up.agent] if self.follow_up is not None else self.selected()
        offered = {agent: self.commands.get(agent, ()) for agent in agents}
        area.menu.show(matching(self.value, offered))

    def show_hints(self) -> None:
        self.border_title = "prompt"
        self.border_subtitle = "enter: send · ctrl+j: new line · tab: the agents · f1: every key"

    def compose(self) -> ComposeResult:
        with Horizontal(id="prompt-row"):
            if self.stand_in is not None:
                yield self.stand_in
            else:
                from acp_tui.ui.widgets.prompt_area import PromptArea

                yield PromptArea(self.suggested, id="prompt")
            yield RunButton("Run", id="run")
        with SendTo(id="targets"):
            yield Toggle("worktree (ctrl+g)", value=False, id="worktree")
            yield Toggle("sandbox (ctrl+b)", value=False, id="sandbox")
            yield Label("· send to:")
            for agent, policy in self.policies.items():
                yield Toggle(self._label(agent, policy), value=agent in self.checked, name=agent)

    @staticmethod
    def _label(agent: str, policy: str) -> Content:
        return text.markup("$agent · $policy", agent=agent, policy=policy)

    @property
    def area(self) -> PromptArea:
        """The text box (there from right after the first frame: `make_prompt`)."""
        from acp_tui.ui.widgets.prompt_area import PromptArea

        return self.query_one("#prompt", PromptArea)

    @property
    def value(self) -> str:
        return self.stand_in.text if self.stand_in is not None else self.area.text

    def selected(self) -> list[str]:
        return [box.name for box in self.query_one(SendTo).agents() if box.value and box.name]

    @property
    def worktree(self) -> bool:
        """The next rounds run each in its own git worktree."""
        return self.query_one("#worktree", Toggle).value

    @property
    def sandbox(self) -> bool:
        """Every agent of the next rounds confined by bubblewrap, whatever its preset says."""
        return self.query_one("#sandbox", Toggle).value

    def toggle(self, name: Literal["worktree", "sandbox"]) -> bool:
        """The box `name` turned on or off; whether it is on now."""
        box = self.query_one(f"#{name}", Toggle)
        box.value = not box.value
        return box.value

    def enter_follow_up(self, attempt: Attempt) -> None:
        """The next prompt follows up on `attempt` (its agent alone): the box empties and takes
        the focus."""
        self.follow_up = attempt
        self.area.follow_up_mode = True
        self.border_title = text.markup("follow up: $agent $label", agent=attempt.agent, label=attempt.label)
        self.border_subtitle = "enter: send to this agent · escape: leave follow-up mode"
        self.add_class("-follow-up")
        self.show_border()
        self.area.text = ""
        self.focus_prompt()

    def leave_follow_up(self) -> None:
        self.follow_up = None
        self.area.follow_up_mode = False
        self.remove_class("-follow-up")
        self.show_border()
        self.show_hints()

    async def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "run":  # the mouse's Enter
            event.stop()
            await self.app.run_action("screen.send_prompt")

    def submission(self) -> Submission | None:
        """The prompt as typed, to the agents it goes to; None (and why, in a toast) when there is
        nothing to send."""
        prompt = self.value.strip()
        if not prompt:
            self.notify("Type a prompt first.", severity="warning")
            return None
        if self.follow_up is not None:
            self._remember(prompt)
            submission = Submission(prompt, [self.follow_up.agent], follow_up=self.follow_up)
            self.leave_follow_up()
            return submission
        agents = self.selected()
        if not agents:
            self.notify("Select at least one agent.", severity="warning")
            return None
        self._remember(prompt)
        return Submission(prompt, agents, self.worktree, self.sandbox)

    def show_policies(self, policies: Mapping[str, str]) -> None:
        for box in self.query_one(SendTo).agents():
            if box.name is not None and box.name in policies:
                box.label = self._label(box.name, policies[box.name])

    def _remember(self, prompt: str) -> None:
        if self.stand_in is None:  # (the Run button clicked before the text box was there)
            self.area.remember(prompt)

    def focus_prompt(self) -> None:
        """The prompt has the focus, its cursor at the end of the text (nothing selected: a key would
        replace it): typing goes on from there, ctrl+u clears it."""
        if self.stand_in is not None:  # its cursor is at the end
            self.screen.set_focus(self.stand_in)
            return
        area = self.area
        self.screen.set_focus(area)  # now: the key typed next goes to it
        area.move_cursor(area.document.end)
