"""Settings: agent presets, named policies and app switches from TOML, validated at the edge so the
app never starts half-configured.

Where presets come from: `--config PATH`, else `agents.toml` in the user config dir, else the bundled
demo set; `--agent` specs add to (or select from) them. Every problem is a `ConfigError` whose message
is one line naming the file (or option), the agent or policy, and the field.

The settings are declared once, as the dataclasses below: each field's type, constraint, default and
the words of its error live on that field. A file is validated against those declarations by pydantic
(`TypeAdapter` of the dataclass itself); defaults shared with the core come from its
`AcpProviderConfig`. This module runs before any child is spawned, on every start, so declaring
costs nothing: pydantic, `tomllib` and `platformdirs` load only when a file is read or looked for,
and the demo set and `--agent` specs never pay for them.
"""

# ruff: noqa: RUF009  (`_says` is `dataclasses.field` with the words of the field's error)

from __future__ import annotations

import contextlib
import dataclasses
import os
import shlex
import sys
from collections.abc import Mapping, Sequence
from contextvars import ContextVar
from dataclasses import Field, dataclass, field, fields, replace
from functools import cache
from pathlib import Path
from typing import Annotated, Any, Literal

from acp_tui.acp.config import AcpProviderConfig
from acp_tui.policy.ask import TOOL_KINDS, AskHandler, PermissionPolicy
from acp_tui.policy.names import BUILTIN_POLICIES as CORE_BUILTINS
from acp_tui.policy.rules import AskPolicy, Rule, RulePolicy

APP_NAME = "acp-tui"
CONFIG_FILE_NAME = "agents.toml"
# `allow-once` allows only through `allow_once` options (never `allow_always`), else rejects.
BUILTIN_POLICIES = ("reject", "allow", "allow-once", "ask")
# The built-in policies the core takes by name (the others are resolved here).
CORE_POLICIES = ("reject", "allow", "allow-once")
ACTIONS = ("allow", "reject")
OPTION_KINDS = ("allow_once", "allow_always", "reject_once", "reject_always")
DEFAULT_PROMPT = "Explain what an ACP subagent is, in a few paragraphs."
_CORE = AcpProviderConfig  # its class attributes are the core's defaults
DEFAULT_HANDSHAKE_TIMEOUT: float = _CORE.handshake_timeout


class ConfigError(ValueError):
    """A bad preset file or option, said in one line."""


# How fields are declared -------------------------------------------------------------------------


class _Constraint:
    """A constraint pydantic reads from an annotation (through its `__get_pydantic_core_schema__`
    hook): declaring it imports nothing, pydantic only loads when a file is validated."""

    def __init__(self, **schema: Any) -> None:
        self.schema = schema

    def __get_pydantic_core_schema__(self, source: Any, handler: Any) -> Any:
        return {**handler(source), **self.schema}


# Strict: a TOML `true` is no number and `1` no boolean.
NonBlank = Annotated[str, _Constraint(strict=True, pattern=r"^\s*\S")]
Seconds = Annotated[float, _Constraint(strict=True, gt=0, allow_inf_nan=False)]
Switch = Annotated[bool, _Constraint(strict=True)]
Count = Annotated[int, _Constraint(strict=True, gt=0)]
Bytes = Annotated[int, _Constraint(strict=True, gt=0)]
SECONDS = "must be a positive number of seconds"
# An isolated run's files larger than this are not recorded (as `workspace.worktrees.MAX_FILE_BYTES`).
MAX_FILE_BYTES = 10_000_000


def _says(message: str, *, required: str | None = None, **kwargs: Any) -> Any:
    """A field, with the words of its error: `"<field>" <message>`."""
    return field(metadata={"says": message, "required": required}, **kwargs)


@dataclass(frozen=True)
class McpServer:
    """An MCP server handed to the agent in `session/new`: stdio (`command`, `args`, `env`) or
    `type = "http"` / `"sse"` (`url`, `headers`)."""

    __pydantic_config__ = {"extra": "forbid"}

    name: NonBlank = _says("must be a non-empty string")
    type: Literal["stdio", "http", "sse"] = _says('must be "stdio", "http" or "sse"', default="stdio")
    command: NonBlank | None = _says("must be a non-empty string", default=None)
    args: tuple[str, ...] = _says("must be a list of strings", default=())
    env: dict[str, str] = _says("must be a table of strings", default_factory=dict, repr=False)
    url: NonBlank | None = _says("must be a non-empty string", default=None)
    headers: dict[str, str] = _says("must be a table of strings", default_factory=dict, repr=False)

    def to_acp(self) -> dict[str, Any]:
        """The server as `session/new` carries it (`env` and `headers` as name/value lists)."""
        if self.type == "stdio":
            env = [{"name": k, "value": v} for k, v in self.env.items()]
            return {"name": self.name, "command": self.command, "args": list(self.args), "env": env}
        headers = [{"name": k, "value": v} for k, v in self.headers.items()]
        return {"type": self.type, "name": self.name, "url": self.url, "headers": headers}


@dataclass(frozen=True)
class AgentPreset:
    """One agent the user can run: how to start it, how to set its session up, which permission
    policy answers it. `repr()` never shows `env` (credentials) nor the MCP servers' env/headers."""

    __pydantic_config__ = {"extra": "forbid"}

    name: NonBlank = _says("must be a non-empty string")
    command: NonBlank = _says("must be a non-empty string")
    args: tuple[str, ...] = _says("must be a list of strings", default=())
    cwd: NonBlank | None = _says("must be a non-empty string", default=None)
    env: dict[str, str] = _says(
        "must be a table of strings", default_factory=dict, hash=False, repr=False
    )  # explicit credentials
    policy: str = _says("must be a string", default="reject")  # built in, or a named policy
    handshake_timeout: Seconds = _says(SECONDS, default=_CORE.handshake_timeout)
    # Session config options to set before the prompt: option id -> value id.
    options: dict[str, str] = _says(
        "must be a table of option ids to value ids", default_factory=dict, hash=False
    )
    mcp_servers: tuple[McpServer, ...] = _says(
        "must be an array of tables ([[agent.mcp_servers]])", default=(), hash=False, repr=False
    )
    run_timeout: Seconds | None = _says(SECONDS, default=_CORE.run_timeout)
    idle_timeout: Seconds | None = _says(SECONDS, default=_CORE.idle_timeout)
    isolation: Literal["none", "worktree"] = _says('must be "none" or "worktree"', default="none")
    max_file_bytes: Bytes = _says("must be a positive whole number of bytes", default=MAX_FILE_BYTES)
    # "workspace": confined by bubblewrap (README, Sandbox); writable/hidden: paths, `~` its home.
    sandbox: Literal["none", "workspace"] = _says('must be "none" or "workspace"', default=_CORE.sandbox)
    sandbox_writable: tuple[str, ...] = _says("must be a list of paths", default=())
    sandbox_hidden: tuple[str, ...] = _says("must be a list of paths", default=())
    sandbox_network: Switch = _says("must be true or false", default=_CORE.sandbox_network)
    # A spare of this agent is started ahead of its next run (the app's warm starts), unless false.
    warm: Switch = _says("must be true or false", default=True)
    # A recorded trace played as the agent: the command becomes `acp-tui replay PATH`.
    replay: NonBlank | None = _says("must be a non-empty path", default=None)
    # The demo's scratch dir is made when a run is configured, never merely by loading settings.
    create_cwd: bool = field(default=False, compare=False, repr=False, metadata={"internal": True})

    @property
    def argv(self) -> list[str]:
        return [self.command, *self.args]

    def provider_config(
        self, *, policy: PermissionPolicy | str | None = None, trace_dir: str | None = None
    ) -> AcpProviderConfig:
        """The core's config for this preset. A named policy must come resolved (see `Settings`)."""
        chosen = self.policy if policy is None else policy
        if isinstance(chosen, str) and chosen not in CORE_POLICIES:
            raise ConfigError(
                f'agent "{self.name}": policy "{chosen}" needs Settings.provider_config to resolve it'
            )
        if isinstance(chosen, str) and chosen not in CORE_BUILTINS:  # the core's, once it has them
            raise ConfigError(f'agent "{self.name}": policy "{chosen}" is not available in this build')
        if self.create_cwd and self.cwd:
            # Should this fail, the run says "working directory not found", naming it.
            with contextlib.suppress(OSError):
                Path(self.cwd).mkdir(parents=True, exist_ok=True)
        return AcpProviderConfig(
            command=self.command,
            args=self.args,
            env=dict(self.env),
            cwd=self.cwd,
            permission_policy=chosen,
            handshake_timeout=self.handshake_timeout,
            name=self.name,
            trace_dir=trace_dir,
            options=dict(self.options),
            mcp_servers=tuple(server.to_acp() for server in self.mcp_servers),
            run_timeout=self.run_timeout,
            idle_timeout=self.idle_timeout,
            sandbox=self.sandbox,
            sandbox_writable=self.sandbox_writable,
            sandbox_hidden=self.sandbox_hidden,
            sandbox_network=self.sandbox_network,
        )

    def secrets(self) -> list[str]:
        """Every value this preset hands the agent that could be a credential."""
        values = list(self.env.values())
        for server in self.mcp_servers:
            values.extend(server.env.values())
            values.extend(server.headers.values())
        return values


@dataclass(frozen=True)
class RuleTable:
    """A `[[policy.NAME.rule]]`: every criterion given must match; `action` decides."""

    __pydantic_config__ = {"extra": "forbid"}

    action: Literal["allow", "reject", "ask"] = _says(
        'must be "allow", "reject" or "ask"', required='"action" is required (allow, reject or ask)'
    )
    name: NonBlank | None = _says("must be a non-empty string", default=None)
    kind: tuple[str, ...] = _says("must be a list of tool kinds", default=())
    title: NonBlank | None = _says("must be a non-empty glob pattern", default=None)
    command: tuple[NonBlank, ...] = _says("must be a glob or a list of globs", default=())
    path: tuple[NonBlank, ...] = _says("must be a glob or a list of globs", default=())
    option: tuple[str, ...] = _says("must be an option kind or a list of them", default=())


# Fields that take one value or a list of them.
_ONE_OR_MANY = ("kind", "command", "path", "option")


@dataclass(frozen=True)
class PolicyTable:
    """A `[policy.NAME]`: ordered rules, and what decides when none matches."""

    __pydantic_config__ = {"extra": "forbid"}

    default: Literal["allow", "reject"] = _says('must be "allow" or "reject"', default="reject")
    order: Literal["first-match", "deny-first"] = _says(
        'must be "first-match" or "deny-first"', default="first-match"
    )
    rule: tuple[dict[str, Any], ...] = _says(
        "must be an array of tables ([[policy.{name}.rule]])", default=()
    )


@dataclass(frozen=True)
class SettingsFile:
    """The top level of the file."""

    __pydantic_config__ = {"extra": "forbid"}

    prompt: NonBlank = _says("must be a non-empty string", default=DEFAULT_PROMPT)
    agent: tuple[dict[str, Any], ...] = _says("must be an array of tables ([[agent]])", default=())
    policy: dict[str, Any] = _says("must be a table of named policies ([policy.NAME])", default_factory=dict)
    bell: Switch = _says("must be true or false", default=True)  # ring when a run needs someone
    toasts: Switch = _says("must be true or false", default=True)  # pop a note when a run ends
    warm: Switch = _says("must be true or false", default=True)  # spares for the next runs (the app)
    warm_idle: Seconds = _says(SECONDS, default=600.0)  # a spare not taken for this long is disposed
    keep_sessions: Count = _says("must be a positive whole number", default=50)  # the app's saved sessions


@dataclass(frozen=True)
class Settings:
    """Everything the app and `run` need to know before spawning anything."""

    presets: tuple[AgentPreset, ...]
    policies: dict[str, RulePolicy] = field(default_factory=dict, hash=False)
    prompt: str = DEFAULT_PROMPT
    source: Path | None = None  # the file the presets came from; None for the demo set
    selected: tuple[str, ...] = ()  # the presets `--agent` named, in order; empty: all of them
    bell: bool = True
    toasts: bool = True
    warm: bool = True
    warm_idle: float = 600.0
    keep_sessions: int = 50

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
        """A policy name as the core takes it: the built-in ones as is, the others as objects."""
        where = f'agent "{agent}": ' if agent else ""
        if name in CORE_POLICIES:
            return name
        if name == "ask":
            if ask_handler is None:
                raise ConfigError(f'{where}policy "ask" needs someone to ask: it works in the app only')
            return AskPolicy(ask_handler)
        if name in self.policies:
            # `ask` rules reach a person where there is one (the app); headless, the default decides.
            return dataclasses.replace(self.policies[name], ask_handler=ask_handler)
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

    from acp_tui.core.files import UnreadableFile, read_text

    try:
        text = read_text(path, label=label)
        data = tomllib.loads(text)
    except UnreadableFile as exc:
        raise ConfigError(str(exc)) from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{label}: invalid TOML: {exc}") from None
    except RecursionError:  # tomllib recurses into nested arrays and tables
        raise ConfigError(f"{label}: invalid TOML: nested too deeply") from None
    seal = _seal(path, text.encode())
    if _was_valid(path, seal):
        try:
            return _parse_trusted(data, label=label, source=path)
        except _Doubt:
            pass  # a value the seal vouched for is not so (a forged seal): validated below
    settings = parse_settings(data, label=label, source=path)
    _remember_valid(path, seal)
    return settings


# Validating costs pydantic (measured: load_settings of assets/agents.sample.toml takes 100-140 ms
# with it, about 20 ms without): a file that passed once, byte for byte, with this very code, is built
# from its declarations without it. The seal is a hash anyone can compute, so it only says "worth
# trying": the values are still checked against their declared types, literals and constraints
# (`_build`), and any doubt sends the file through the full validation. Only a hash is kept (in
# the user cache dir), never a value of the file.
_TRUSTED: ContextVar[bool] = ContextVar("acp_tui_settings_trusted", default=False)


def _parse_trusted(data: Mapping[str, Any], *, label: str, source: Path) -> Settings:
    token = _TRUSTED.set(True)
    try:
        return parse_settings(data, label=label, source=source)
    finally:
        _TRUSTED.reset(token)


def _seal(path: Path, raw: bytes) -> str:
    import hashlib

    code = Path(__file__).stat()
    stamp = f"{APP_NAME} {code.st_mtime_ns} {code.st_size} {path.resolve()}\n".encode()
    return hashlib.sha256(stamp + raw).hexdigest()


def _seal_file(path: Path) -> Path:
    import hashlib

    import platformdirs

    name = hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:32]
    return platformdirs.user_cache_path(APP_NAME, appauthor=False) / "valid-settings" / name


def _was_valid(path: Path, seal: str) -> bool:
    try:
        return _seal_file(path).read_text(encoding="ascii") == seal
    except (OSError, UnicodeDecodeError):
        return False


def _remember_valid(path: Path, seal: str) -> None:
    from acp_tui.core.files import private_dir, replace_file

    with contextlib.suppress(OSError):
        marker = _seal_file(path)
        replace_file(private_dir(marker.parent) / marker.name, seal)  # never through a link


def parse_settings(data: Mapping[str, Any], *, label: str, source: Path | None = None) -> Settings:
    """Validate a parsed TOML document. A relative `cwd` is taken from the directory of `source`."""
    base_dir = source.parent if source is not None else None
    top = _validate(SettingsFile, data, f"{label}: ")
    policies = {name: _parse_policy(name, raw, label) for name, raw in top.policy.items()}
    if not top.agent:
        raise ConfigError(f"{label}: no agents: add at least one [[agent]] table")
    known = (*BUILTIN_POLICIES, *policies)
    presets: list[AgentPreset] = []
    for number, raw in enumerate(top.agent, start=1):
        preset = _parse_agent(number, raw, label, base_dir)
        if any(p.name == preset.name for p in presets):
            raise ConfigError(f'{label}: agent "{preset.name}": duplicate name')
        if preset.policy not in known:
            raise ConfigError(
                f'{label}: agent "{preset.name}": unknown policy "{preset.policy}" '
                f"(expected {_one_of(known)})"
            )
        presets.append(preset)
    return Settings(
        presets=tuple(presets),
        policies=policies,
        prompt=top.prompt,
        source=source,
        bell=top.bell,
        toasts=top.toasts,
        warm=top.warm,
        warm_idle=top.warm_idle,
        keep_sessions=top.keep_sessions,
    )


def _parse_agent(number: int, raw: Mapping[str, Any], label: str, base_dir: Path | None) -> AgentPreset:
    name = raw.get("name")
    named = name.strip() if isinstance(name, str) else ""
    where = f'{label}: agent "{named}": ' if named else f"{label}: agent #{number}: "
    replay = raw.get("replay")
    if replay is not None and "command" in raw:
        raise ConfigError(f'{where}"command" and "replay" are exclusive (replay PATH runs acp-tui replay)')
    if replay is not None:
        # The shorthand: the recorded trace, played by `acp-tui replay`, is the agent. (A `replay`
        # that is no path is left as is, for the validation to name.)
        raw = {**raw, "command": sys.executable}
        if isinstance(replay, str) and replay.strip():
            replay = raw["replay"] = str(_resolve(replay, base_dir))
            args = raw.get("args", [])
            extra = args if isinstance(args, list) else [args]  # a wrong `args` is still reported
            raw["args"] = ["-m", "acp_tui", "replay", replay, *extra]
    preset: AgentPreset = _validate(AgentPreset, raw, where)
    for number, server in enumerate(preset.mcp_servers, start=1):
        _check_mcp_server(server, f"{where}mcp server #{number}: ")
    return replace(
        preset,
        name=preset.name.strip(),
        command=preset.command.strip(),
        cwd=str(_resolve(preset.cwd, base_dir)) if preset.cwd is not None else None,
    )


def _resolve(path: str, base_dir: Path | None) -> Path:
    """`~` expanded; a relative path is taken from the directory of the settings file."""
    expanded = Path(os.path.expanduser(path))
    if not expanded.is_absolute() and base_dir is not None:
        expanded = base_dir / expanded
    return expanded


def _check_mcp_server(server: McpServer, where: str) -> None:
    if server.type == "stdio":
        if server.command is None:
            raise ConfigError(f'{where}"command" is required (or type = "http" / "sse" with a url)')
        if server.url is not None or server.headers:
            raise ConfigError(f'{where}"url" and "headers" need type = "http" or "sse"')
    else:
        if server.url is None:
            raise ConfigError(f'{where}"url" is required for type "{server.type}"')
        if server.command is not None or server.args or server.env:
            raise ConfigError(f'{where}"command", "args" and "env" are for stdio servers only')


def _parse_policy(name: str, raw: Any, label: str) -> RulePolicy:
    where = f'{label}: policy "{name}": '
    if name in BUILTIN_POLICIES:
        raise ConfigError(f"{where}the name is reserved ({', '.join(BUILTIN_POLICIES)} are built in)")
    if not isinstance(raw, dict):
        raise ConfigError(f"{where}must be a table ([policy.{name}])")
    table = _validate(PolicyTable, raw, where, name=name)
    rules = tuple(_parse_rule(number, r, where) for number, r in enumerate(table.rule, start=1))
    return RulePolicy(name=name, rules=rules, default=table.default, order=table.order)


def _parse_rule(number: int, raw: Any, policy_where: str) -> Rule:
    rule_name = raw.get("name") if isinstance(raw, dict) else None
    named = isinstance(rule_name, str) and rule_name.strip()
    where = f'{policy_where}rule "{rule_name}": ' if named else f"{policy_where}rule {number}: "
    if isinstance(raw, dict):
        raw = {k: [v] if k in _ONE_OR_MANY and isinstance(v, str) else v for k, v in raw.items()}
    table = _validate(RuleTable, raw, where)
    for kind in table.kind:
        if kind not in TOOL_KINDS:
            raise ConfigError(f'{where}unknown kind "{kind}" (expected {_one_of(TOOL_KINDS)})')
    for kind in table.option:
        if kind not in OPTION_KINDS:
            raise ConfigError(f'{where}unknown option kind "{kind}" (expected {_one_of(OPTION_KINDS)})')
    return Rule(
        name=table.name.strip() if table.name else f"rule {number}",
        action=table.action,
        kinds=table.kind,
        title=table.title,
        commands=table.command,
        paths=table.path,
        offered=table.option,
    )


# Validation: the declarations above, checked by pydantic, said in one line ----------------------


@cache
def _adapter(cls: Any) -> Any:
    from pydantic import TypeAdapter

    return TypeAdapter(cls)


def _validate(cls: Any, raw: Any, where: str, **fill: str) -> Any:
    """`raw` as a `cls`, or a `ConfigError` about the first problem: `<where>"<field>" <says>`."""
    if isinstance(raw, Mapping):
        _check_keys(raw, _keys(cls), where)
    if _TRUSTED.get():
        return _build(cls, raw)
    from pydantic import ValidationError

    try:
        return _adapter(cls).validate_python(raw)
    except ValidationError as exc:
        raise ConfigError(where + _say(cls, exc.errors()[0], fill)) from None


class _Doubt(Exception):
    """A value the trusted path cannot vouch for: the file is validated in full instead."""


def _build(cls: Any, raw: Any) -> Any:
    """`raw` as a `cls` without pydantic (it passed before), with the conversions validation makes:
    every value checked against its declared type (literals, constraints, nested tables); what
    validation might refuse raises `_Doubt`. Stricter than pydantic is fine, laxer never."""
    if not isinstance(raw, Mapping) or any(key not in _keys(cls) for key in raw):
        raise _Doubt
    hints = _hints(cls)
    values: dict[str, Any] = {}
    for declared in fields(cls):
        if declared.name in raw:
            values[declared.name] = _checked(raw[declared.name], hints[declared.name])
        elif declared.default is dataclasses.MISSING and declared.default_factory is dataclasses.MISSING:
            raise _Doubt  # a required field is missing
    return cls(**values)


@cache
def _hints(cls: Any) -> dict[str, Any]:
    import typing

    return typing.get_type_hints(cls, include_extras=True)


def _checked(value: Any, hint: Any) -> Any:
    """`value` as `hint` (a declared field type) has it, or `_Doubt`."""
    import types
    import typing

    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is Annotated:
        value = _checked(value, args[0])
        for constraint in args[1:]:
            if not isinstance(constraint, _Constraint):
                raise _Doubt  # a constraint of another kind: pydantic knows it, not we
            _meets(value, constraint.schema)
        return value
    if origin is Literal:
        if any(type(value) is type(allowed) and value == allowed for allowed in args):
            return value
    elif origin in (typing.Union, types.UnionType):
        for option in args:
            with contextlib.suppress(_Doubt):
                return _checked(value, option)
    elif origin is tuple and isinstance(value, list | tuple):
        return tuple(_checked(item, args[0]) for item in value)
    elif origin is dict and isinstance(value, dict):
        return {_checked(k, args[0]): _checked(v, args[1]) for k, v in value.items()}
    elif hint is Any or (hint in (str, bool, type(None)) and type(value) is hint):
        return value
    elif hint is float and type(value) in (int, float):
        return float(value)
    elif dataclasses.is_dataclass(hint):
        return _build(hint, value)
    raise _Doubt


def _meets(value: Any, schema: Mapping[str, Any]) -> None:
    """The constraints of a `_Constraint` (those it is declared with here), or `_Doubt`."""
    import math
    import re

    for key, bound in schema.items():
        if key == "strict":
            continue  # `_checked` takes no value of another type
        if key == "pattern" and re.search(bound, value):
            continue
        if key == "gt" and value > bound:
            continue
        if key == "allow_inf_nan" and (bound or math.isfinite(value)):
            continue
        raise _Doubt


def _say(cls: Any, error: Mapping[str, Any], fill: Mapping[str, str]) -> str:
    loc: tuple[Any, ...] = tuple(error.get("loc", ()))
    declared = {f.name: f for f in fields(cls)}
    if not loc or loc[0] not in declared:
        if error.get("type") == "unexpected_keyword_argument" and loc:
            return _unknown_key(str(loc[-1]), _keys(cls))
        return " ".join(str(error.get("msg", "invalid")).split())
    name, rest = str(loc[0]), loc[1:]
    item = _item_class(declared[name])
    if item is not None and len(rest) >= 2 and isinstance(rest[0], int):  # inside a nested table
        return f"mcp server #{rest[0] + 1}: " + _say(item, {**error, "loc": rest[1:]}, fill)
    if error.get("type") == "missing":
        return declared[name].metadata.get("required") or f'"{name}" is required'
    if len(rest) == 1 and isinstance(rest[0], str):  # a value of a table of strings
        return f'"{name}.{rest[0]}" must be a string'
    says = declared[name].metadata.get("says") or "is invalid"
    return f'"{name}" ' + says.format(**fill)


def _item_class(declared: Field[Any]) -> type[Any] | None:
    return McpServer if declared.name == "mcp_servers" else None


@cache
def _keys(cls: Any) -> tuple[str, ...]:
    """The keys a table of the file may have: the declared fields but the internal ones."""
    return tuple(f.name for f in fields(cls) if not f.metadata.get("internal"))


def _check_keys(raw: Mapping[str, Any], allowed: Sequence[str], where: str) -> None:
    for key in raw:
        if key not in allowed:
            raise ConfigError(f"{where}{_unknown_key(str(key), allowed)}")


def _unknown_key(key: str, allowed: Sequence[str]) -> str:
    import difflib

    close = difflib.get_close_matches(key, allowed, n=1)
    hint = f' (did you mean "{close[0]}"?)' if close else f" (expected {_one_of(allowed)})"
    return f'unknown key "{key}"{hint}'


def _one_of(names: Sequence[str]) -> str:
    return ", ".join(names[:-1]) + f" or {names[-1]}" if len(names) > 1 else "".join(names)


# Agents and options from the command line -------------------------------------------------------


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


__all__ = [
    "APP_NAME",
    "BUILTIN_POLICIES",
    "DEFAULT_HANDSHAKE_TIMEOUT",
    "DEFAULT_PROMPT",
    "AgentPreset",
    "ConfigError",
    "McpServer",
    "Settings",
    "demo_presets",
    "load_settings",
    "parse_agent_spec",
    "parse_option_specs",
    "with_agent_specs",
    "with_options",
]
