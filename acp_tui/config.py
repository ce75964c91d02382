"""Agent presets from TOML, validated at the edge so the app never starts half-configured.

Where presets come from: `--config PATH`, else `agents.toml` in the user config dir, else the bundled
demo set; `--agent` specs add to (or select from) them. Every problem is a `ConfigError` whose message
is one line naming the file (or option), the agent or policy, and the field.

This module runs before any child is spawned, on every start: stdlib and the core only, and
`tomllib` / `platformdirs` imported only when a file is read or looked for.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .subagents.acp.permissions import (
    TOOL_KINDS,
    AskHandler,
    AskPolicy,
    PermissionPolicy,
    Rule,
    RulePolicy,
)

if TYPE_CHECKING:
    # The backend itself loads when a run is configured, not when presets are read: the app's
    # first frame and `run`'s first spawn come sooner.
    from .subagents.acp.provider import AcpProviderConfig

APP_NAME = "acp-tui"
CONFIG_FILE_NAME = "agents.toml"
BUILTIN_POLICIES = ("reject", "allow", "ask")
ACTIONS = ("allow", "reject")
DEFAULT_PROMPT = "Explain what an ACP subagent is, in a few paragraphs."
DEFAULT_HANDSHAKE_TIMEOUT = 60.0

_TOP_KEYS = ("prompt", "agent", "policy")
_AGENT_KEYS = ("name", "command", "args", "cwd", "env", "policy", "handshake_timeout", "isolation")
ISOLATIONS = ("none", "worktree")
_POLICY_KEYS = ("default", "rule")
_RULE_KEYS = ("name", "kind", "title", "action")


class ConfigError(ValueError):
    """A bad preset file or option, said in one line."""


@dataclass(frozen=True)
class AgentPreset:
    """One agent the user can run: how to start it and which permission policy answers it."""

    name: str
    command: str
    args: tuple[str, ...] = ()
    cwd: str | None = None
    env: dict[str, str] = field(default_factory=dict, hash=False)  # explicit credentials
    policy: str = "reject"  # reject | allow | ask | a named policy of the settings
    handshake_timeout: float = DEFAULT_HANDSHAKE_TIMEOUT
    isolation: str = "none"  # "worktree": each run in its own git worktree (see `isolation.py`)
    # The demo's scratch dir is made when a run is configured, never merely by loading settings.
    create_cwd: bool = field(default=False, compare=False, repr=False)

    @property
    def argv(self) -> list[str]:
        return [self.command, *self.args]

    def provider_config(
        self, *, policy: PermissionPolicy | str | None = None, trace_dir: str | None = None
    ) -> AcpProviderConfig:
        """The core's config for this preset. A named policy must come resolved (see `Settings`)."""
        chosen = self.policy if policy is None else policy
        if isinstance(chosen, str) and chosen not in ("reject", "allow"):
            raise ConfigError(
                f'agent "{self.name}": policy "{chosen}" needs Settings.provider_config to resolve it'
            )
        if self.create_cwd and self.cwd:
            # Should this fail, the run says "working directory not found", naming it.
            with contextlib.suppress(OSError):
                Path(self.cwd).mkdir(parents=True, exist_ok=True)
        from .subagents.acp.provider import AcpProviderConfig

        return AcpProviderConfig(
            command=self.command,
            args=self.args,
            env=dict(self.env),
            cwd=self.cwd,
            permission_policy=chosen,
            handshake_timeout=self.handshake_timeout,
            name=self.name,
            trace_dir=trace_dir,
        )


@dataclass(frozen=True)
class Settings:
    """Everything the app and `run` need to know before spawning anything."""

    presets: tuple[AgentPreset, ...]
    policies: dict[str, RulePolicy] = field(default_factory=dict, hash=False)
    prompt: str = DEFAULT_PROMPT
    source: Path | None = None  # the file the presets came from; None for the demo set
    selected: tuple[str, ...] = ()  # the presets `--agent` named, in order; empty: all of them

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(preset.name for preset in self.presets)

    @property
    def policy_names(self) -> tuple[str, ...]:
        """Every policy a preset may use: the built-in ones, then the named ones of the file."""
        return (*BUILTIN_POLICIES, *self.policies)

    def preset(self, name: str) -> AgentPreset:
        for preset in self.presets:
            if preset.name == name:
                return preset
        raise KeyError(name)

    def selected_presets(self) -> tuple[AgentPreset, ...]:
        if not self.selected:
            return self.presets
        return tuple(self.preset(name) for name in self.selected)

    def resolve_policy(
        self, name: str, *, ask_handler: AskHandler | None = None, agent: str | None = None
    ) -> str | PermissionPolicy:
        """A policy name as the core takes it: `reject`/`allow` as is, the others as objects."""
        where = f'agent "{agent}": ' if agent else ""
        if name in ("reject", "allow"):
            return name
        if name == "ask":
            if ask_handler is None:
                raise ConfigError(f'{where}policy "ask" needs someone to ask: it works in the app only')
            return AskPolicy(ask_handler)
        if name in self.policies:
            return self.policies[name]
        raise ConfigError(f'{where}unknown policy "{name}" (expected {_one_of(self.policy_names)})')

    def provider_config(
        self,
        preset: AgentPreset,
        *,
        policy_override: str | None = None,
        ask_handler: AskHandler | None = None,
        trace_dir: str | None = None,
    ) -> AcpProviderConfig:
        policy = self.resolve_policy(
            policy_override or preset.policy, ask_handler=ask_handler, agent=preset.name
        )
        return preset.provider_config(policy=policy, trace_dir=trace_dir)


# Where settings come from ------------------------------------------------------------------------


def user_config_file() -> Path:
    import platformdirs

    return platformdirs.user_config_path(APP_NAME, appauthor=False) / CONFIG_FILE_NAME


def demo_scratch_dir() -> Path:
    """Where the demo's `pong` may write its proof.txt: never the user's current directory."""
    import platformdirs

    return platformdirs.user_cache_path(APP_NAME, appauthor=False) / "pong"


def demo_presets() -> tuple[AgentPreset, ...]:
    """The bundled keyless demo: three personas side by side, one of them slow enough to cancel."""

    def persona(name: str) -> tuple[str, ...]:
        return ("-m", "acp_tui.demo.agent", "--persona", name)

    return (
        AgentPreset("scribe", sys.executable, persona("essay")),
        AgentPreset(
            "pong",
            sys.executable,
            persona("pong"),
            cwd=str(demo_scratch_dir()),
            policy="allow",
            create_cwd=True,
        ),
        AgentPreset("tortoise", sys.executable, persona("slow")),
    )


def load_settings(path: Path | str | None = None, agents: Sequence[str] = ()) -> Settings:
    """The presets of `path` (else the user config file, else the demo set), plus `agents` specs."""
    if path is not None:
        settings = load_file(Path(os.path.expanduser(path)), label=str(path))
    else:
        user_file = user_config_file()
        settings = load_file(user_file) if user_file.exists() else Settings(presets=demo_presets())
    return with_agent_specs(settings, agents)


def load_file(path: Path, *, label: str | None = None) -> Settings:
    label = label or str(path)
    import tomllib

    try:
        with open(path, "rb") as f:
            data = tomllib.load(f)
    except FileNotFoundError:
        raise ConfigError(f"{label}: no such file") from None
    except IsADirectoryError:
        raise ConfigError(f"{label}: is a directory, not a file") from None
    except OSError as exc:
        raise ConfigError(f"{label}: cannot read it: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{label}: not UTF-8 text") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{label}: invalid TOML: {exc}") from None
    return parse_settings(data, label=label, source=path)


def parse_settings(data: Mapping[str, Any], *, label: str, source: Path | None = None) -> Settings:
    """Validate a parsed TOML document. A relative `cwd` is taken from the directory of `source`."""
    base_dir = source.parent if source is not None else None
    _check_keys(data, _TOP_KEYS, f"{label}: ")
    prompt = data.get("prompt", DEFAULT_PROMPT)
    if not isinstance(prompt, str) or not prompt.strip():
        raise ConfigError(f'{label}: "prompt" must be a non-empty string')

    raw_policies = data.get("policy", {})
    if not isinstance(raw_policies, dict):
        raise ConfigError(f'{label}: "policy" must be a table of named policies ([policy.NAME])')
    policies = {name: _parse_policy(name, raw, label) for name, raw in raw_policies.items()}

    raw_agents = data.get("agent", [])
    if not isinstance(raw_agents, list) or not all(isinstance(a, dict) for a in raw_agents):
        raise ConfigError(f'{label}: "agent" must be an array of tables ([[agent]])')
    if not raw_agents:
        raise ConfigError(f"{label}: no agents: add at least one [[agent]] table")
    presets: list[AgentPreset] = []
    for number, raw in enumerate(raw_agents, start=1):
        preset = _parse_agent(number, raw, label, base_dir)
        if any(p.name == preset.name for p in presets):
            raise ConfigError(f'{label}: agent "{preset.name}": duplicate name')
        known = (*BUILTIN_POLICIES, *policies)
        if preset.policy not in known:
            expected = _one_of(known)
            raise ConfigError(
                f'{label}: agent "{preset.name}": unknown policy "{preset.policy}" (expected {expected})'
            )
        presets.append(preset)
    return Settings(presets=tuple(presets), policies=policies, prompt=prompt, source=source)


def _parse_agent(number: int, raw: Mapping[str, Any], label: str, base_dir: Path | None) -> AgentPreset:
    name = raw.get("name")
    if not isinstance(name, str) or not name.strip():
        where = f"{label}: agent #{number}: "
        raise ConfigError(
            f'{where}"name" is required' if name is None else f'{where}"name" must be a non-empty string'
        )
    name = name.strip()
    where = f'{label}: agent "{name}": '
    _check_keys(raw, _AGENT_KEYS, where)

    command = raw.get("command")
    if command is None:
        raise ConfigError(f'{where}"command" is required')
    if not isinstance(command, str) or not command.strip():
        raise ConfigError(f'{where}"command" must be a non-empty string')

    args = raw.get("args", [])
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        raise ConfigError(f'{where}"args" must be a list of strings')

    cwd = raw.get("cwd")
    if cwd is not None:
        if not isinstance(cwd, str) or not cwd.strip():
            raise ConfigError(f'{where}"cwd" must be a non-empty string')
        expanded = Path(os.path.expanduser(cwd))
        if not expanded.is_absolute() and base_dir is not None:
            expanded = base_dir / expanded
        cwd = str(expanded)

    env = raw.get("env", {})
    if not isinstance(env, dict):
        raise ConfigError(f'{where}"env" must be a table of strings')
    for key, value in env.items():
        if not isinstance(value, str):
            raise ConfigError(f'{where}"env.{key}" must be a string')

    policy = raw.get("policy", "reject")
    if not isinstance(policy, str):
        raise ConfigError(f'{where}"policy" must be a string')

    timeout = raw.get("handshake_timeout", DEFAULT_HANDSHAKE_TIMEOUT)
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or not timeout > 0:
        raise ConfigError(f'{where}"handshake_timeout" must be a positive number of seconds')

    isolation = raw.get("isolation", "none")
    if isolation not in ISOLATIONS:
        raise ConfigError(f'{where}"isolation" must be one of {_one_of(ISOLATIONS)}')

    return AgentPreset(
        name=name,
        command=command.strip(),
        args=tuple(args),
        cwd=cwd,
        env=dict(env),
        policy=policy,
        handshake_timeout=float(timeout),
        isolation=isolation,
    )


def _parse_policy(name: str, raw: Any, label: str) -> RulePolicy:
    where = f'{label}: policy "{name}": '
    if name in BUILTIN_POLICIES:
        raise ConfigError(f"{where}the name is reserved ({', '.join(BUILTIN_POLICIES)} are built in)")
    if not isinstance(raw, dict):
        raise ConfigError(f"{where}must be a table ([policy.{name}])")
    _check_keys(raw, _POLICY_KEYS, where)
    default = raw.get("default", "reject")
    if default not in ACTIONS:
        raise ConfigError(f'{where}"default" must be "allow" or "reject"')
    raw_rules = raw.get("rule", [])
    if not isinstance(raw_rules, list) or not all(isinstance(r, dict) for r in raw_rules):
        raise ConfigError(f'{where}"rule" must be an array of tables ([[policy.{name}.rule]])')
    rules = tuple(_parse_rule(number, r, where) for number, r in enumerate(raw_rules, start=1))
    return RulePolicy(name=name, rules=rules, default=default)


def _parse_rule(number: int, raw: Mapping[str, Any], policy_where: str) -> Rule:
    rule_name = raw.get("name")
    if rule_name is not None and (not isinstance(rule_name, str) or not rule_name.strip()):
        raise ConfigError(f'{policy_where}rule {number}: "name" must be a non-empty string')
    where = f'{policy_where}rule "{rule_name}": ' if rule_name else f"{policy_where}rule {number}: "
    _check_keys(raw, _RULE_KEYS, where)

    kinds = raw.get("kind", [])
    if isinstance(kinds, str):
        kinds = [kinds]
    if not isinstance(kinds, list) or not all(isinstance(k, str) for k in kinds):
        raise ConfigError(f'{where}"kind" must be a list of tool kinds')
    for kind in kinds:
        if kind not in TOOL_KINDS:
            raise ConfigError(f'{where}unknown kind "{kind}" (expected {_one_of(TOOL_KINDS)})')

    title = raw.get("title")
    if title is not None and (not isinstance(title, str) or not title):
        raise ConfigError(f'{where}"title" must be a non-empty glob pattern')

    action = raw.get("action")
    if action is None:
        raise ConfigError(f'{where}"action" is required (allow or reject)')
    if action not in ACTIONS:
        raise ConfigError(f'{where}"action" must be "allow" or "reject"')

    return Rule(
        name=rule_name.strip() if rule_name else f"rule {number}",
        action=action,
        kinds=tuple(kinds),
        title=title,
    )


def _check_keys(raw: Mapping[str, Any], allowed: Sequence[str], where: str) -> None:
    for key in raw:
        if key not in allowed:
            import difflib

            close = difflib.get_close_matches(key, allowed, n=1)
            hint = f' (did you mean "{close[0]}"?)' if close else f" (expected {_one_of(allowed)})"
            raise ConfigError(f'{where}unknown key "{key}"{hint}')


def _one_of(names: Sequence[str]) -> str:
    return ", ".join(names[:-1]) + f" or {names[-1]}" if len(names) > 1 else "".join(names)


# Agents from the command line ----------------------------------------------------------------------


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
    return Settings(
        presets=tuple(presets),
        policies=settings.policies,
        prompt=settings.prompt,
        source=settings.source,
        selected=tuple(selected),
    )
