"""F2, the agents: each preset's permission policy, sandbox and session options (mode, model, ...)
for the next runs, and the rules of the policy picked: the policy lab's switchboard.

The values of an agent's options come from its last session in the app or from a probe (`p`, or
the row's Probe button: `acp-tui probe` in a worker); a boolean option is a switch beside the
selects. Everything shown that came from an agent or
the config file is literal text on one line.

By keyboard: tab walks the choices (the focused one and its agent's row are highlighted), space or
up/down opens a choice, Enter applies them all (on a button, it presses that button), escape leaves
without applying. `s` lists the sessions the focused row's agent keeps (`session/list`): the one
chosen is continued (the choices applied, the prompt bar in follow-up mode on it). With many agents,
the rows below the first screenful are made as tab or the scroll comes near them.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Grid, Horizontal, Vertical
from textual.content import Content
from textual.widget import Widget
from textual.widgets import Button, Static

from acp_tui.core.model import AgentSessionInfo, ConfigOptionInfo
from acp_tui.policy.names import BUILTIN
from acp_tui.settings.provider_config import SandboxMode
from acp_tui.ui import text
from acp_tui.ui.screens._dialog import DialogScreen
from acp_tui.ui.screens.agent_sessions_screen import AgentSessionsScreen, Listed
from acp_tui.ui.widgets.choice import Choice
from acp_tui.ui.widgets.toggle import Toggle

# What the screen asks the app for: the options an agent offers, or the one-line error.
Prober = Callable[[str], Awaitable[tuple[tuple[ConfigOptionInfo, ...], str | None]]]
Lister = Callable[[str], Awaitable[Listed]]  # an agent's own sessions (`acp.agent_sessions`)

# Sixty-four agents are over six hundred widgets, all laid out at each opening: the
# screen has the rows that fit in it, and makes more as the focus or the scroll comes near its last.
# Until then the rows not made are a blank of their height: the dialog scrolls as if they were there.
FIRST_ROWS = 12
ROWS_AHEAD = 8
ROW_LINES = 3  # a row without options: its margin, its line, the line of its options' hint


@dataclass(frozen=True)
class AgentRow:
    """One preset as the screen shows it."""

    name: str
    policy: str
    options: dict[str, str] = field(default_factory=dict)  # chosen for the next runs
    offered: tuple[ConfigOptionInfo, ...] = ()  # from the last session or a probe
    sandbox: SandboxMode = "none"


@dataclass(frozen=True)
class AgentsChoice:
    policies: dict[str, str]  # preset -> policy
    options: dict[str, dict[str, str]]  # preset -> option id -> value id, for the next runs
    sandboxes: dict[str, SandboxMode] = field(default_factory=dict)  # preset -> its sandbox
    session: tuple[str, AgentSessionInfo] | None = None  # an agent's own session to continue


@dataclass(frozen=True)
class _RowControls:
    """A row's widgets, kept: found again without a query of the screen's hundreds of widgets."""

    policy: Choice
    sandbox: Toggle
    probe: Button
    options: Grid


def offered_of(record: Mapping[str, Any]) -> tuple[ConfigOptionInfo, ...]:
    """A probe's record (`acp-tui probe --format json`) as the options a chooser offers: its config
    options, else its modes as one option `mode`."""
    options = tuple(
        ConfigOptionInfo(
            o["id"], o["name"], o.get("category"), o["current"], tuple(o["values"]), o.get("type", "select")
        )
        for o in record.get("config_options") or ()
    )
    modes = record.get("modes") or {}
    if not options and modes.get("available"):
        current = modes.get("current") or modes["available"][0]
        return (ConfigOptionInfo("mode", "Mode", "mode", current, tuple(modes["available"])),)
    return options


class PolicyScreen(DialogScreen[AgentsChoice | None]):
    """Dismisses with the policies and options chosen, or None when nothing changes."""

    DEFAULT_CSS = """
    PolicyScreen {
        & > #dialog { width: 96%; max-width: 140; }
        & .agent { height: auto; margin-top: 1; border-left: blank; }
        /* Where the keys are: the row's edge, and the choice itself in the cursor's colours. */
        & .agent:focus-within { border-left: thick $accent; background: $boost; }
        & Choice:focus {
            background: $block-cursor-background; color: $block-cursor-foreground; text-style: bold;
        }
        & .agent-line { height: 1; }
        & #rest { color: $text-muted; padding-left: 18; }
        & .agent-name { width: 18; text-style: bold; }
        & .policy { width: 24; }
        & .probe { margin-left: 2; min-width: 7; }
        & Toggle.sandbox { margin-left: 2; background: transparent; }
        /* The options below, two a line: an agent may offer more than fit beside its policy. */
        & .options {
            layout: grid; grid-size: 2; grid-columns: 1fr; grid-rows: 1; grid-gutter: 0 1;
            height: auto; padding-left: 18;
        }
        & .options Static { column-span: 2; color: $text-muted; }
        & .options Choice { max-width: 44; }
        & #rules { height: auto; margin: 1 0; border-top: dashed $panel-lighten-2; }
        & #status { height: auto; color: $text-warning; }
        & #buttons { height: auto; margin: 1 0; }
        & #buttons Button { margin-right: 2; }
    }
    """
    BINDINGS = [
        Binding("escape", "close", "Close"),
        Binding("enter", "apply", "Apply", priority=True),  # unless a menu is open, or on a button
        Binding("p", "probe", "Probe agent"),
        Binding("s", "sessions", "Its sessions"),
    ]

    def __init__(
        self,
        rows: Sequence[AgentRow],
        policies: Sequence[str],
        rules: Mapping[str, Sequence[str]],
        prober: Prober | None = None,
        lister: Lister | None = None,
    ) -> None:
        super().__init__()
        self.rows = list(rows)
        self.policies = list(policies)
        self.rules = dict(rules)
        self.prober = prober
        self.lister = lister
        self._shown_policy = self.rows[0].policy if self.rows else ""
        self._opened = False
        self._controls: list[_RowControls] = []  # the rows made so far, in order
        self._making = False  # more rows are being mounted
        self._rest: Static | None = None  # where the rows not made yet will be

    def shows_the_same(self, other: PolicyScreen) -> bool:
        """Whether `other` would show what this one shows (then this one is opened again)."""
        return (self.rows, self.policies, self.rules) == (other.rows, other.policies, other.rules)

    def on_screen_resume(self) -> None:
        """Opened again (the app keeps the screen while what it shows is unchanged): every choice
        back to what the next runs get, as a new screen shows it, the focus on the first row."""
        if not self._opened:
            self._opened = True
            self.watch(self.query_one("#dialog"), "scroll_y", self._scrolled, init=False)
            return
        for i, (row, controls) in enumerate(zip(self.rows, self._controls, strict=False)):
            controls.policy.value = row.policy if row.policy in self.policies else None
            controls.sandbox.value = row.sandbox == "workspace"
            for j, option in enumerate(row.offered):
                widget = self._option_widget(i, j)
                value = row.options.get(option.id, option.current)
                if isinstance(widget, Toggle):
                    widget.value = value == "true"
                elif isinstance(widget, Choice):
                    widget.value = value
        self.query_one("#status", Static).update("")
        if self._controls:
            self._controls[0].policy.focus()

    def compose_dialog(self) -> ComposeResult:
        yield Static(
            text.markup("[b]Agents[/b]: policy, sandbox and options used by the next runs of each agent"),
            id="title",
        )
        for i, row in enumerate(self.rows[:FIRST_ROWS]):
            yield self._row(i, row)
        if len(self.rows) > FIRST_ROWS:
            self._rest = Static(id="rest")
            self._show_rest(self._rest)
            yield self._rest
        yield Static("", id="status")
        yield Static(self._rules_text(), id="rules")
        with Horizontal(id="buttons"):
            yield Button("Apply", variant="primary", id="apply", compact=True)
            yield Button("Cancel", id="cancel", compact=True)
        yield Static(
            "values: the agent's last session, or p (probe) · s: the sessions it keeps"
            " · ctrl+r reloads the config",
            classes="hint",
        )

    def _row(self, i: int, row: AgentRow) -> Vertical:
        """Row `i`'s widgets, its controls kept (`_controls[i]`)."""
        policy = Choice(
            [(text.line(name), name) for name in self.policies],
            row.policy if row.policy in self.policies else None,
            name=f"policy-{i}",
            classes="policy",
        )
        sandbox = Toggle("sandbox", value=row.sandbox == "workspace", id=f"sandbox-{i}", classes="sandbox")
        probe = Button("Probe", id=f"probe-{i}", classes="probe", compact=True)
        probe.can_focus = False  # `p` probes the focused row
        options = Grid(*self._option_widgets(i, row), classes="options", id=f"options-{i}")
        self._controls.append(_RowControls(policy, sandbox, probe, options))
        name = Static(text.line(row.name, 17), classes="agent-name")
        line = Horizontal(name, policy, sandbox, probe, classes="agent-line")
        return Vertical(line, options, classes="agent", id=f"agent-{i}")

    def _show_rest(self, rest: Static) -> None:
        left = len(self.rows) - len(self._controls)
        rest.update(Content(f"\n{left} more agent{'s' if left != 1 else ''}: tab or scroll to them"))
        rest.styles.height = left * ROW_LINES

    def _scrolled(self, y: float) -> None:
        dialog = self.query_one("#dialog")
        if self._rest is not None and self._rest.virtual_region.y <= y + dialog.size.height:
            self.call_later(self._mount_more_rows)  # the rows not made yet come into sight

    async def _mount_more_rows(self) -> None:
        """The next ROWS_AHEAD rows, under the last made; more while the blank is still in sight."""
        rest = self._rest  # None once every row is made
        if rest is None or self._making or not isinstance(rest.parent, Widget):
            return
        self._making = True
        try:
            start = len(self._controls)
            end = min(start + ROWS_AHEAD, len(self.rows))
            await rest.parent.mount_all([self._row(i, self.rows[i]) for i in range(start, end)], before=rest)
        finally:
            self._making = False
        if len(self._controls) < len(self.rows):
            self._show_rest(rest)
            dialog = self.query_one("#dialog")
            self.call_after_refresh(lambda: self._scrolled(dialog.scroll_y))
        else:
            self._rest = None
            await rest.remove()

    def _option_widgets(self, i: int, row: AgentRow) -> list[Widget]:
        if not row.offered:
            chosen = " · ".join(f"{key} {value}" for key, value in row.options.items())
            return [Static(text.line(chosen or "options: run it once, or p to probe"))]
        widgets: list[Widget] = []
        for j, option in enumerate(row.offered):
            value = row.options.get(option.id, option.current)
            if option.type == "boolean":  # a switch beside the selects: on or off
                label = text.line(option.category or option.name or option.id, 30)
                widgets.append(Toggle(label, value=value == "true", name=f"option-{i}-{j}"))
                continue
            values = list(option.values) if value in option.values else [value, *option.values]
            choice = Choice(
                [(text.line(f"{option.category or option.id}: {v}", 30), v) for v in values],
                value,
                name=f"option-{i}-{j}",
            )
            choice.tooltip = text.line(option.name)
            widgets.append(choice)
        return widgets

    def _rules_text(self) -> Content:
        name = self._shown_policy
        if name in self.rules:
            title, lines = "[b]Rules of $name[/b] (tried in this order):", list(self.rules[name])
        else:
            title, lines = "[b]Policy $name[/b] (built in):", [BUILTIN.get(name, "(unknown policy)")]
        return Content("\n").join(
            [text.markup(title, name=name)] + [text.line(f"  {line}") for line in lines]
        )

    def _row_of(self, widget: Widget | None) -> int | None:
        while widget is not None:
            if widget.id and widget.id.startswith("agent-"):
                return int(widget.id.removeprefix("agent-"))
            parent = widget.parent
            widget = parent if isinstance(parent, Widget) else None
        return None

    def _show_rules_of_row(self, i: int | None) -> None:
        if i is None:
            return
        policy = self._controls[i].policy.value
        if isinstance(policy, str) and policy != self._shown_policy:
            self._shown_policy = policy
            self.query_one("#rules", Static).update(self._rules_text())

    async def on_descendant_focus(self, event: object) -> None:
        i = self._row_of(self.focused)
        self._show_rules_of_row(i)
        if i is not None and i >= len(self._controls) - ROWS_AHEAD // 2:
            # Made before the next key is routed (the keys wait for this screen to handle the
            # focus), so tab held down goes on into them, not past them to the buttons.
            await self._mount_more_rows()

    @on(Choice.Changed, ".policy")
    def policy_changed(self, event: Choice.Changed) -> None:
        self._show_rules_of_row(self._row_of(event.choice))

    # Probing --------------------------------------------------------------------------------------

    def action_probe(self) -> None:
        i = self._row_of(self.focused)
        self.probe(0 if i is None else i)

    @on(Button.Pressed, ".probe")
    def probe_pressed(self, event: Button.Pressed) -> None:
        assert event.button.id is not None
        self.probe(int(event.button.id.removeprefix("probe-")))

    @work(group="probe", exit_on_error=False)
    async def probe(self, i: int) -> None:
        if self.prober is None or not 0 <= i < len(self._controls):
            return
        row = self.rows[i]
        status = self.query_one("#status", Static)
        button = self._controls[i].probe
        button.disabled = True
        status.update(text.line(f"probing {row.name}…"))
        try:
            offered, error = await self.prober(row.name)
        except Exception as exc:  # said on its line, not lost in the worker
            offered, error = (), f"{type(exc).__name__}: {exc}"
        finally:
            button.disabled = False
        if error:
            status.update(text.line(f"probe of {row.name}: {error}"))
        else:
            status.update("")
        if offered:
            row = replace(row, options=self._chosen_options(i), offered=offered)
            options = self._controls[i].options
            await options.remove_children()
            await options.mount_all(self._option_widgets(i, row))
            self.rows[i] = row  # once its selects are there: Apply reads them by this row

    # The agent's own sessions --------------------------------------------------------------------

    def action_sessions(self) -> None:
        i = self._row_of(self.focused)
        lister = self.lister
        if lister is None or not self.rows:
            return
        agent = self.rows[0 if i is None else i].name

        def chosen(session: AgentSessionInfo | None) -> None:
            if session is not None:
                self._apply((agent, session))

        self.app.push_screen(AgentSessionsScreen(agent, lambda: lister(agent)), chosen)

    # The answer ---------------------------------------------------------------------------------

    def _chosen_options(self, i: int) -> dict[str, str]:
        """The options of row `i` to set on the next runs: those chosen before, and any value the
        user picked other than the agent's current one."""
        row = self.rows[i]
        chosen = dict(row.options)
        for j, option in enumerate(row.offered):
            widget = self._option_widget(i, j)
            value = widget.value if isinstance(widget, Choice) else None
            if isinstance(widget, Toggle):
                value = "true" if widget.value else "false"
            if not isinstance(value, str):
                continue
            if value != option.current or option.id in chosen:
                chosen[option.id] = value
        return chosen

    def _option_widget(self, i: int, j: int) -> Widget | None:
        """The select (or, for a boolean option, the switch) of row `i`'s option `j` (None for a row
        not made yet: its values are the row's)."""
        name = f"option-{i}-{j}"
        options = self._controls[i].options.children if i < len(self._controls) else ()
        return next((w for w in options if w.name == name), None)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "apply":  # Enter picks in an open menu, and presses a focused button
            return not isinstance(self.focused, Button) and not any(
                choice.expanded for choice in self._choices()
            )
        return True

    def _choices(self) -> list[Choice]:
        return [
            choice
            for controls in self._controls
            for choice in (controls.policy, *controls.options.children)
            if isinstance(choice, Choice)
        ]

    @on(Button.Pressed, "#apply")
    def action_apply(self) -> None:
        self._apply()

    def _apply(self, session: tuple[str, AgentSessionInfo] | None = None) -> None:
        policies: dict[str, str] = {}
        sandboxes: dict[str, SandboxMode] = {}
        for i, row in enumerate(self.rows):
            if i >= len(self._controls):  # a row not made yet: as it came
                policies[row.name], sandboxes[row.name] = row.policy, row.sandbox
                continue
            value = self._controls[i].policy.value
            policies[row.name] = value if isinstance(value, str) else row.policy
            sandboxes[row.name] = "workspace" if self._controls[i].sandbox.value else "none"
        options = {row.name: self._chosen_options(i) for i, row in enumerate(self.rows)}
        self.dismiss(AgentsChoice(policies, options, sandboxes, session))

    @on(Button.Pressed, "#cancel")
    def cancel(self) -> None:
        self.dismiss(None)


AgentsScreen = PolicyScreen  # F2's name since it also sets each agent's options
