"""Pick each preset's permission policy before running: the policy lab's switchboard."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from textual import on
from textual.app import ComposeResult
from textual.containers import Grid, Horizontal
from textual.widgets import Button, Select, Static

from .. import text
from ._dialog import DialogScreen


class PolicyScreen(DialogScreen[dict[str, str] | None]):
    """Dismisses with {preset name: policy name}, or None when nothing changes."""

    DEFAULT_CSS = """
    PolicyScreen {
        & > #dialog { width: 72; }
        & #rows {
            grid-size: 2; grid-columns: 1fr 2fr; grid-rows: 1; grid-gutter: 1 2; height: auto; margin: 1 0;
        }
        & #buttons { height: auto; margin-bottom: 1; }
        & #buttons Button { margin-right: 2; }
    }
    """

    def __init__(self, current: Mapping[str, str], policies: Sequence[str]) -> None:
        super().__init__()
        self.current = dict(current)
        self.policies = list(policies)

    def compose_dialog(self) -> ComposeResult:
        yield Static(text.markup("[b]Permission policies[/b]: used by the next runs of each agent"))
        with Grid(id="rows"):
            for agent, policy in self.current.items():
                yield Static(text.line(agent))
                yield Select(
                    [(text.line(name), name) for name in self.policies],
                    value=policy,
                    allow_blank=False,
                    name=agent,
                    compact=True,
                )
        with Horizontal(id="buttons"):
            yield Button("Apply", variant="primary", id="apply", compact=True)
            yield Button("Cancel", id="cancel", compact=True)
        yield Static(
            "reject: never approve · allow: first allow option · ask: you choose · "
            "others: rules from the config file",
            classes="hint",
        )

    @on(Button.Pressed, "#apply")
    def apply(self) -> None:
        chosen = {select.name: str(select.value) for select in self.query(Select) if select.name}
        self.dismiss(chosen)

    @on(Button.Pressed, "#cancel")
    def cancel(self) -> None:
        self.dismiss(None)
