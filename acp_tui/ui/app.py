"""The supervisor: a prompt bar, and one pane per run, side by side.

The app registers one core provider per agent preset, turns a submitted prompt into panes (a round),
and disposes every live run before it exits, however it is asked to exit.
"""

from __future__ import annotations

import asyncio
import gc
import math
import shlex
import signal
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, cast

from rich.markup import escape
from textual import on
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.widgets import Footer, Header, Static

from ..subagents.model import SubagentRequest, SubagentRun
from ..subagents.registry import Subagents
from .widgets.prompt_bar import PromptBar

if TYPE_CHECKING:
    from ..config import Settings
    from ..subagents.acp.permissions import PermissionAsk
    from .widgets.run_pane import RunPane, RunStarter

# What only the first round needs (panes, Markdown, the provider) is imported then, not before the
# first frame: a newcomer's first look should come as fast as Textual allows.

MIN_PANE_WIDTH = 40
MIN_PANE_HEIGHT = 12
MAX_COLUMNS = 3
TERMINATING_SIGNALS = (signal.SIGTERM, signal.SIGHUP)  # kill, or the terminal went away


class SupervisorApp(App[None]):
    CSS_PATH = "app.tcss"
    TITLE = "acp-tui"
    BINDINGS = [
        Binding("ctrl+c", "quit", "Quit", priority=True),
        Binding("ctrl+q", "quit", "Quit", show=False, priority=True),
        Binding("ctrl+k", "cancel_all", "Cancel all", priority=True),
        Binding("f2", "policies", "Policies", priority=True),
        Binding("ctrl+t", "toggle_tracing", "Tracing", priority=True),
        Binding("ctrl+s", "export", "Export", priority=True),
        Binding("slash", "focus_prompt", "Prompt"),
        Binding("escape", "focus_runs", "Panes", show=False),
    ]

    def __init__(self, settings: Settings) -> None:
        super().__init__()
        self.settings = settings
        self.subagents = Subagents()
        self.rounds = 0
        self.policies = {preset.name: preset.policy for preset in settings.presets}
        self.trace_dir: str | None = None  # set: runs started from now on write protocol traces
        self.export_dir = Path.cwd()
        self._quitting = False

    def compose(self) -> ComposeResult:
        yield Header()
        yield PromptBar(self.policies, self.settings.prompt)
        with VerticalScroll(id="runs"):
            yield Static(self._welcome(), id="welcome")
        yield Footer(compact=True)

    def _welcome(self) -> str:
        """What a newcomer sees first: who will answer, how, and the keys that matter."""
        presets = self.settings.presets
        commands = [display_command(p.argv) for p in presets]
        name_width = max((len(p.name) for p in presets), default=0)
        command_width = max((len(c) for c in commands), default=0)
        rows = [
            f"  [b]{escape(p.name.ljust(name_width))}[/]   {escape(command.ljust(command_width))}"
            f"   [dim]policy {escape(p.policy)}[/]"
            for p, command in zip(presets, commands, strict=True)
        ]
        source = f" from {self.settings.source}" if self.settings.source else ""
        return "\n".join(
            [
                "[b]acp-tui[/] runs ACP agents side by side and shows each one's final answer.",
                f"[dim]Agents{escape(source)}:[/]",
                "",
                *rows,
                "",
                "[b]Enter[/] sends the prompt to the checked agents.  "
                "[b]c[/] cancels the focused run, [b]ctrl+k[/] all of them.",
                "[b]f2[/] picks permission policies, [b]ctrl+t[/] records protocol traces, "
                "[b]ctrl+s[/] exports the session, [b]ctrl+c[/] quits and stops every agent.",
            ]
        )

    async def on_mount(self) -> None:
        loop = asyncio.get_running_loop()
        for sig in TERMINATING_SIGNALS:
            loop.add_signal_handler(sig, self._on_terminate_signal)
        self.query_one(PromptBar).focus_prompt()
        self.run_worker(_preload_protocol_sdk, thread=True, group="preload")

    def _on_terminate_signal(self) -> None:
        self.run_worker(self.action_quit(), group="quit")

    # Rounds and panes ------------------------------------------------------------------------

    @on(PromptBar.Submitted)
    async def fan_out(self, event: PromptBar.Submitted) -> None:
        from .widgets.run_pane import RunPane

        self.rounds += 1
        runs = self.query_one("#runs", VerticalScroll)
        await runs.query("#welcome").remove()
        panes = [
            RunPane(
                agent,
                event.prompt,
                self._starter(agent, event.prompt),
                round_no=self.rounds,
                policy=self.policies[agent],
            )
            for agent in event.agents
        ]
        await runs.mount_all(panes)
        self._relayout()
        runs.scroll_to_widget(panes[0], animate=False)
        self._update_subtitle()

    def _starter(self, agent: str, prompt: str) -> RunStarter:
        async def start() -> SubagentRun:
            provider = await self._provider_for(agent)
            return await self.subagents.start(provider, SubagentRequest(prompt=prompt))

        return start

    async def _provider_for(self, agent: str) -> str:
        from ..subagents.acp.provider import AcpSubagentProvider

        """The seam's name for this preset as it is set now (policy, tracing).

        Settings that change get a provider of their own, so runs already going keep theirs.
        """
        policy = self.policies[agent]
        name = f"{agent} [{policy}{' traced' if self.trace_dir else ''}]"
        if name not in self.subagents:
            config = self.settings.provider_config(
                self.settings.preset(agent),
                policy_override=policy,
                ask_handler=lambda ask: self.ask_permission(agent, ask),
                trace_dir=self.trace_dir,
            )
            await self.subagents.register(name, AcpSubagentProvider(config))
        return name

    async def ask_permission(self, agent: str, ask: PermissionAsk) -> str | None:
        """The `ask` policy: a modal; if the run stops first, the modal goes away unanswered."""
        from .screens.permission_screen import PermissionScreen

        answer: asyncio.Future[str | None] = asyncio.get_running_loop().create_future()
        screen = PermissionScreen(agent, ask)

        def answered(option_id: str | None) -> None:
            if not answer.done():
                answer.set_result(option_id)

        await self.push_screen(screen, answered)
        try:
            return await answer
        finally:
            if screen.is_current:  # the run stopped while the question was open
                screen.dismiss(None)

    def on_run_pane_run_finished(self) -> None:
        self._update_subtitle()

    def on_resize(self) -> None:
        self._relayout()

    def _panes(self) -> list[RunPane]:
        # Only the grid's own children: a query of the whole DOM walks every answer's blocks.
        # None at all while the app shuts down: a run may still report its end then.
        runs = self.query("#runs")
        if not runs:
            return []
        return cast("list[RunPane]", list(runs.first().query_children(".run-pane")))

    def _relayout(self) -> None:
        """Two or three panes across as the width allows; rows fill the height, else scroll."""
        runs = self.query_one("#runs", VerticalScroll)
        count = len(self._panes())
        if not count:
            return
        width, height = runs.size
        columns = max(1, min(MAX_COLUMNS, count, (width or self.size.width) // MIN_PANE_WIDTH))
        rows = math.ceil(count / columns)
        runs.styles.grid_size_columns = columns
        runs.styles.grid_rows = str(max(MIN_PANE_HEIGHT, (height or self.size.height) // rows))

    def _update_subtitle(self) -> None:
        panes = self._panes()
        live = sum(pane.live for pane in panes)
        self.sub_title = f"{live} live · {len(panes) - live} finished"

    # Actions ---------------------------------------------------------------------------------

    async def action_cancel_all(self) -> None:
        await asyncio.gather(*(pane.action_cancel() for pane in self._panes()))

    def action_focus_prompt(self) -> None:
        self.query_one(PromptBar).focus_prompt()

    def action_focus_runs(self) -> None:
        panes = self._panes()
        if panes:
            panes[0].focus()

    def action_policies(self) -> None:
        from .screens.policy_screen import PolicyScreen

        def apply(chosen: dict[str, str] | None) -> None:
            if chosen:
                self.policies.update(chosen)
                self.query_one(PromptBar).show_policies(self.policies)

        self.push_screen(PolicyScreen(self.policies, self.settings.policy_names), apply)

    def action_toggle_tracing(self) -> None:
        if self.trace_dir:
            self.trace_dir = None
            self.notify("Protocol traces off for new runs.")
        else:
            self.trace_dir = str(trace_directory())
            self.notify(f"New runs write protocol traces to {self.trace_dir} (t on a pane shows it).")

    def action_export(self) -> None:
        """Every finished run of the session, as Markdown for people and JSON lines for programs."""
        from .. import report

        records = [
            report.run_record(
                self.settings.preset(pane.agent),
                pane.result,
                prompt=pane.prompt,
                policy=pane.policy,
                trace=getattr(pane.run, "trace_path", None),
            )
            for pane in self._panes()
            if pane.result is not None
        ]
        if not records:
            self.notify("Nothing to export yet: no run has finished.", severity="warning")
            return
        stem = self.export_dir / time.strftime("acp-tui-%Y%m%d-%H%M%S")
        try:
            stem.with_suffix(".md").write_text(report.markdown(records), encoding="utf-8")
            stem.with_suffix(".jsonl").write_text(
                "".join(report.json_line(record) + "\n" for record in records), encoding="utf-8"
            )
        except OSError as exc:
            self.notify(f"Export failed: {exc}", severity="error")
            return
        self.notify(f"Exported {len(records)} runs to {stem}.md and .jsonl")

    async def action_quit(self) -> None:
        """Every live run is disposed (its process group gone) before the app exits."""
        if self._quitting:
            return
        self._quitting = True
        live = sum(pane.live for pane in self._panes())
        if live:
            self.notify(f"Stopping {live} agent{'s' if live > 1 else ''}…", timeout=10)
        await self.subagents.aclose()
        self.exit()

    async def on_unmount(self) -> None:
        # Reached on any exit, including an error in the app: no child may outlive us.
        loop = asyncio.get_running_loop()
        for sig in TERMINATING_SIGNALS:
            loop.remove_signal_handler(sig)
        await self.subagents.aclose()


def display_command(argv: list[str]) -> str:
    """The command as a person would type it: our own interpreter's long path reads `python`."""
    return shlex.join(["python" if arg == sys.executable else arg for arg in argv])


def trace_directory() -> Path:
    import platformdirs

    return platformdirs.user_state_path("acp-tui", appauthor=False) / "traces"


def _preload_protocol_sdk() -> None:
    """Import what the first round needs off the UI thread, so that it does not freeze the screen;
    then set the start-up heap aside.

    The SDK's schema models and Textual's classes are most of the heap and live as long as the app:
    frozen, they are skipped by the garbage collector's full passes, which otherwise stalled the
    screen for up to 0.2 s while 16 panes streamed (0.06 s frozen).
    """
    from ..subagents.acp.sdk import import_acp

    import_acp()
    import acp_tui.subagents.acp.client
    import acp_tui.ui.widgets.run_pane  # noqa: F401

    gc.freeze()


def make_app(settings: Settings) -> SupervisorApp:
    return SupervisorApp(settings)
