"""The choices for the next runs: F2's policy, options and sandbox per preset, tracing; and what each
preset offers (its options, its slash commands), from its last session or a probe. A run takes them
as it starts: choosing changes no run already going."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from acp_tui.core.model import AgentSessionInfo, CommandInfo, ConfigOptionInfo
    from acp_tui.session.asks import AskQueue
    from acp_tui.session.attempts import Attempt
    from acp_tui.settings.provider_config import AcpProviderConfig, SandboxMode
    from acp_tui.settings.reload import Choices
    from acp_tui.settings.schema import AgentPreset, Settings
    from acp_tui.ui.screens.policy_screen import AgentsChoice, AgentsScreen


class NextRuns:
    """`settings`: the app's, as they are now (a reload changes them); `asks`: the queue where `ask`
    and the agents' questions wait for a person."""

    def __init__(self, settings: Callable[[], Settings], asks: AskQueue) -> None:
        self.settings = settings
        self.asks = asks
        self.policies = {preset.name: preset.policy for preset in settings().presets}
        self.option_choices: dict[str, dict[str, str]] = {}
        self.sandboxes: dict[str, SandboxMode] = {}
        self.offered: dict[str, tuple[ConfigOptionInfo, ...]] = {}  # per preset: last session's or a probe's
        self.commands: dict[str, tuple[CommandInfo, ...]] = {}  # per preset: last session's or a probe's
        self.trace_dir: str | None = None  # set: runs started from now on write protocol traces
        # The last config made per agent and policy, with what it was made of: the same object is
        # handed again while none of that changed (the spares wanted find theirs at once).
        self._made: dict[tuple[str, str], tuple[Settings, AgentPreset, str | None, AcpProviderConfig]] = {}

    def preset(self, agent: str) -> AgentPreset:
        """The preset as its next run gets it: the config file's, with the options and the sandbox
        chosen in F2."""
        from acp_tui.settings.presets import with_options

        preset = with_options(self.settings().preset(agent), self.option_choices.get(agent, {}))
        sandbox = self.sandboxes.get(agent, preset.sandbox)
        return preset if sandbox == preset.sandbox else replace(preset, sandbox=sandbox)

    def config_for(self, preset: AgentPreset, policy: str) -> AcpProviderConfig:
        """The core's config for a run of `preset` with `policy`: `ask` and the agent's questions
        answered by a person, the tracing of now."""
        settings, made = self.settings(), self._made.get((preset.name, policy))
        if made is not None and made[0] is settings and made[2] == self.trace_dir and made[1] == preset:
            return made[3]
        config = settings.provider_config(
            preset, policy_override=policy, ask_handler=self.asks.ask, trace_dir=self.trace_dir
        )
        config = replace(config, question_handler=self.asks.question)
        self._made[preset.name, policy] = (settings, preset, self.trace_dir, config)
        return config

    def seen(self, attempt: Attempt) -> None:
        """What an attempt's session offered, kept for F2 and the prompt's `/`."""
        if attempt.offered:
            self.offered[attempt.agent] = attempt.offered
        if attempt.commands:
            self.commands[attempt.agent] = attempt.commands

    def choose(self, chosen: AgentsChoice) -> None:
        """What F2 applied."""
        self.policies.update(chosen.policies)
        self.option_choices.update(chosen.options)
        self.sandboxes.update(chosen.sandboxes)

    def choices(self) -> Choices:
        """The choices as a reload weighs them against the file."""
        from acp_tui.settings.reload import Choices

        return Choices(self.policies, self.option_choices, self.sandboxes, self.offered)

    def reloaded(self, kept: Choices) -> None:
        """The choices that still hold with the file read again."""
        self.policies.clear()  # the prompt bar shows this very dict
        self.policies.update(kept.policies)
        self.option_choices, self.sandboxes, self.offered = kept.options, kept.sandboxes, kept.offered

    def agents_screen(self) -> AgentsScreen:
        """F2's screen as the choices are now."""
        from acp_tui.ui.screens.policy_screen import AgentRow, AgentsScreen

        settings = self.settings()
        rows = [
            AgentRow(
                name,
                self.policies.get(name, settings.preset(name).policy),
                dict(self.preset(name).options),
                self.offered.get(name, ()),
                self.preset(name).sandbox,
            )
            for name in settings.names
        ]
        rules = {name: policy.describe() for name, policy in settings.policies.items()}
        return AgentsScreen(rows, settings.policy_names, rules, self.probe, self.agent_sessions)

    async def probe(self, agent: str) -> tuple[tuple[ConfigOptionInfo, ...], str | None]:
        """`acp-tui probe` on a preset: the options it offers (kept for F2), or the error."""
        from acp_tui.core.model import CommandInfo
        from acp_tui.session.providers import describer_for
        from acp_tui.ui.screens.policy_screen import offered_of

        if agent not in self.settings().names:
            return (), "no longer in the config"
        preset = self.preset(agent)
        config = self.settings().provider_config(preset, policy_override="reject")
        record, _created = await describer_for(preset.provider)(config, lambda _: None)
        offered = offered_of(record)
        if offered:
            self.offered[agent] = offered
        if record["commands"]:
            self.commands[agent] = tuple(CommandInfo(**command) for command in record["commands"])
        error = record.get("error")
        return offered, error if isinstance(error, str) else None

    async def agent_sessions(self, agent: str) -> tuple[tuple[AgentSessionInfo, ...], str | None]:
        """The sessions a preset's agent keeps (`session/list`), or why none could be listed."""
        from acp_tui.acp.agent_sessions import agent_sessions

        if agent not in self.settings().names:
            return (), "no longer in the config"
        preset = self.preset(agent)
        config = self.settings().provider_config(preset, policy_override="reject")
        return await agent_sessions(config, provider=preset.provider)
