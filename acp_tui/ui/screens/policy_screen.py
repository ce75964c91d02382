"""Pick each preset's permission policy before running: the policy lab's switchboard."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Grid, Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Label, Select


class PolicyScreen(ModalScreen[dict[str, str] | None]):
    """Dismisses with {preset name: policy name}, or None when nothing changes."""

    CSS_PATH = "policy_screen.tcss"
    BINDINGS = [Binding("escape", "dismiss_unchanged", "Close")]

    def __init__(self, current: Mapping[str, str], policies: Sequence[str]) -> None:
        super().__init__()
        self.current = dict(current)
        self.policies = list(policies)

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Label("[b]Permission policies[/]: used by the next runs of each agent")
            with Grid(id="rows"):
                for agent, policy in self.current.items():
                    yield Label(agent)
                    yield Select(
                        [(name, name) for name in self.policies],
                        value=policy,
                        allow_blank=False,
                        name=agent,
                        compact=True,
                    )
            with Horizontal(id="buttons"):
                yield Button("Apply", variant="primary", id="apply", compact=True)
                yield Button("Cancel", id="cancel", compact=True)
            yield Label(
                "reject: never approve · allow: first allow option · ask: you choose · "
                "others: rules from the config file",
                classes="hint",
            )

    @on(Button.Pressed, "#apply")
    def apply(self) -> None:
        chosen = {select.name: str(select.value) for select in self.query(Select) if select.name}
        self.dismiss(chosen)

    @on(Button.Pressed, "#cancel")
    def action_dismiss_unchanged(self) -> None:
        self.dismiss(None)
