"""Presets that come from no file: the bundled demo set, `--agent` specs, `--option` specs.

None of this loads pydantic (nor `tomllib`): `acp-tui` with the demo agents, or with `--agent`
specs alone, starts without it.
"""

from __future__ import annotations

import shlex
import sys
from collections.abc import Mapping, Sequence
from dataclasses import replace

from acp_tui.settings import paths
from acp_tui.settings.schema import AgentPreset, ConfigError, Settings


def demo_presets() -> tuple[AgentPreset, ...]:
    """The bundled keyless demo: three personas side by side, one of them slow enough to cancel."""

    def persona(name: str) -> tuple[str, ...]:
        return ("-m", "acp_tui.demo.agent", "--persona", name)

    # The demo keeps its sessions in our cache (follow-ups resume them): confined, it may write there.
    sessions = (str(paths.cache_dir() / "demo-sessions"),)
    return (
        AgentPreset("scribe", sys.executable, persona("essay"), sandbox_writable=sessions, create_cwd=True),
        AgentPreset(
            "pong",
            sys.executable,
            persona("pong"),
            cwd=str(paths.demo_scratch_dir()),
            policy="allow",
            sandbox_writable=sessions,
            create_cwd=True,
        ),
        AgentPreset("tortoise", sys.executable, persona("slow"), sandbox_writable=sessions, create_cwd=True),
    )


def parse_agent_spec(spec: str) -> AgentPreset | str:
    """`NAME=COMMAND ARGS` is a new preset (policy reject); a bare `NAME` selects an existing one."""
    if "=" not in spec:
        name = spec.strip()
        if not name:
            raise ConfigError("--agent: empty; expected NAME or NAME=COMMAND ARGS")
        return name
    name, _, command_line = spec.partition("=")
    name = name.strip()
    if not name or any(c.isspace() for c in name):
        raise ConfigError(
            f'--agent "{spec}": expected NAME=COMMAND ARGS (a name, then "=", then the command)'
        )
    try:
        argv = shlex.split(command_line)
    except ValueError as exc:
        raise ConfigError(f'--agent "{spec}": cannot split the command: {exc}') from None
    if not argv:
        raise ConfigError(f'--agent "{spec}": the command is empty')
    return AgentPreset(name=name, command=argv[0], args=tuple(argv[1:]))


def parse_option_specs(specs: Sequence[str]) -> dict[str, str]:
    """`--option ID=VALUE`, repeatable: config option id -> value id (the last one given wins)."""
    options: dict[str, str] = {}
    for spec in specs:
        option_id, sep, value = spec.partition("=")
        option_id, value = option_id.strip(), value.strip()
        if not sep or not option_id or not value or any(c.isspace() for c in option_id):
            raise ConfigError(f'--option "{spec}": expected ID=VALUE (e.g. mode=ask)')
        options[option_id] = value
    return options


def with_options(preset: AgentPreset, options: Mapping[str, str]) -> AgentPreset:
    """The preset with `options` set on top of its own."""
    if not options:
        return preset
    return replace(preset, options={**preset.options, **options})


def with_agent_specs(settings: Settings, specs: Sequence[str]) -> Settings:
    """Add the `NAME=COMMAND` presets of `specs` and remember which presets they named."""
    if not specs:
        return settings
    presets = list(settings.presets)
    selected: list[str] = []
    for spec in specs:
        item = parse_agent_spec(spec)
        if isinstance(item, str):
            if not any(p.name == item for p in presets):
                known = ", ".join(p.name for p in presets)
                if settings.source is None:  # a preset of a file that was not read
                    known += "; no config file was found, give one with --config FILE"
                raise ConfigError(
                    f'--agent "{item}": unknown agent (known: {known}; to add one: NAME=COMMAND ARGS)'
                )
            name = item
        else:
            if any(p.name == item.name for p in presets):
                raise ConfigError(f'--agent "{spec}": an agent named "{item.name}" already exists')
            presets.append(item)
            name = item.name
        if name in selected:
            raise ConfigError(f'--agent "{name}": given twice')
        selected.append(name)
    return replace(settings, presets=tuple(presets), selected=tuple(selected))
