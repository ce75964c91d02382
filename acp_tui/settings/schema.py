"""Settings, declared: agent presets, named policies and app switches, as a file holds them and as
the app and `run` use them (the file's own tables, which only a file read needs, are
`settings.file_tables`).

Each field's type, constraint, default and the words of its error live on the field; a file is
validated against these declarations by pydantic (`settings.load`). Declaring them imports no
pydantic (the constraints are read through pydantic's `__get_pydantic_core_schema__` hook), so the
demo set and `--agent` specs never pay for it. Defaults shared with the core's `AcpProviderConfig`
are `settings.run_defaults`: declaring presets declares no config of the core.
"""

# ruff: noqa: RUF009  (`says` is `dataclasses.field` with the words of the field's error)

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from functools import cache, cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeAlias

from acp_tui.settings import run_defaults

if TYPE_CHECKING:  # the policies' modules load when a policy is resolved, not to declare settings
    from acp_tui.policy.ask import AskHandler, PermissionPolicy
    from acp_tui.policy.rules import RulePolicy
    from acp_tui.settings.provider_config import AcpProviderConfig

OPTION_KINDS = ("allow_once", "allow_always", "reject_once", "reject_always")
# What a preset's agent speaks (its `provider`): ACP over stdio (the default), A2A over HTTP, the Codex
# app-server protocol over stdio, or the Claude Agent SDK.
Provider = Literal["acp", "a2a", "codex", "claude"]
PROVIDERS: tuple[Provider, ...] = ("acp", "a2a", "codex", "claude")
# A `provider = "codex"` preset's command, unless it names its own.
CODEX_COMMAND = ("codex", "app-server")
# A `provider = "claude"` preset's command, unless it names its own: the Claude Code CLI the SDK
# bundles (else `claude` on PATH).
CLAUDE_COMMAND = "claude"
DEFAULT_PROMPT = "Explain what an ACP subagent is, in a few paragraphs."
DEFAULT_HANDSHAKE_TIMEOUT: float = run_defaults.HANDSHAKE_TIMEOUT
# An isolated run's files larger than this are not recorded, but listed (a preset's `max_file_bytes`).
MAX_FILE_BYTES = 10_000_000


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


class OneOrMany:
    """A list, where one value stands for the list of it (`kind = "read"`)."""

    def __get_pydantic_core_schema__(self, source: Any, handler: Any) -> Any:
        # pydantic-core's `no_info_before_validator_function`, as the dict it makes
        listed = {"type": "no-info", "function": _listed}
        return {"type": "function-before", "function": listed, "schema": handler(source)}


def _listed(value: Any) -> Any:
    return [value] if isinstance(value, str) else value


class _HostPattern:
    """A host pattern (`acp_tui.policy.hosts`), kept as it compares."""

    def __get_pydantic_core_schema__(self, source: Any, handler: Any) -> Any:
        from acp_tui.policy.hosts import host_pattern

        checked = {"type": "no-info", "function": host_pattern}
        return {"type": "function-after", "function": checked, "schema": handler(source)}


# Strict: a TOML `true` is no number and `1` no boolean.
NonBlank = Annotated[str, _Constraint(strict=True, pattern=r"^\s*\S")]
Name = Annotated[str, _Constraint(strict=True, strip_whitespace=True, min_length=1)]  # kept stripped
Positive = Annotated[float, _Constraint(strict=True, gt=0, allow_inf_nan=False)]
Seconds = Positive
Dollars = Positive
Switch = Annotated[bool, _Constraint(strict=True)]
Count = Annotated[int, _Constraint(strict=True, gt=0)]
Bytes = Count
Globs = Annotated[tuple[NonBlank, ...], OneOrMany()]
Url = Annotated[str, _Constraint(strict=True, pattern=r"^https?://[^\s/?#]+[^\s]*$")]
Hosts = tuple[Annotated[str, _Constraint(strict=True), _HostPattern()], ...]
SECONDS = "must be a positive number of seconds"
# How the app calls the person (a request or a question waits, a run ends while they are elsewhere):
# nothing, the terminal's bell, or the bell and a desktop notification.
Notify: TypeAlias = Literal["off", "bell", "all"]


def says(message: str, *, required: str | None = None, **kwargs: Any) -> Any:
    """A field, with the words of its error: `"<field>" <message>`."""
    return field(metadata={"says": message, "required": required}, **kwargs)


@dataclass(frozen=True)
class McpServer:
    """An MCP server handed to the agent in `session/new`: stdio (`command`, `args`, `env`) or
    `type = "http"` / `"sse"` (`url`, `headers`)."""

    __pydantic_config__ = {"extra": "forbid"}

    name: NonBlank = says("must be a non-empty string")
    type: Literal["stdio", "http", "sse"] = says('must be "stdio", "http" or "sse"', default="stdio")
    command: NonBlank | None = says("must be a non-empty string", default=None)
    args: tuple[str, ...] = says("must be a list of strings", default=())
    env: dict[str, str] = says("must be a table of strings", default_factory=dict, repr=False)
    url: NonBlank | None = says("must be a non-empty string", default=None)
    headers: dict[str, str] = says("must be a table of strings", default_factory=dict, repr=False)

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

    name: Name = says("must be a non-empty string")
    command: Name = says("must be a non-empty string")
    args: tuple[str, ...] = says("must be a list of strings", default=())
    cwd: NonBlank | None = says("must be a non-empty string", default=None)
    provider: Provider = says('must be "acp", "a2a", "codex" or "claude"', default="acp")
    # `provider = "a2a"`: where the agent card is discovered, and the HTTP headers of every request
    # (credentials, masked like `env`). Its `command` is the url (what panes and records show).
    url: Url | None = says("must be an http:// or https:// URL", default=None)
    headers: dict[str, str] = says("must be a table of strings", default_factory=dict, hash=False, repr=False)
    env: dict[str, str] = says(
        "must be a table of strings", default_factory=dict, hash=False, repr=False
    )  # explicit credentials
    policy: str = says("must be a string", default="reject")  # built in, or a named policy
    handshake_timeout: Seconds = says(SECONDS, default=run_defaults.HANDSHAKE_TIMEOUT)
    # Session config options to set before the prompt: option id -> value id.
    options: dict[str, str] = says(
        "must be a table of option ids to value ids", default_factory=dict, hash=False
    )
    mcp_servers: tuple[McpServer, ...] = says(
        "must be an array of tables ([[agent.mcp_servers]])", default=(), hash=False, repr=False
    )
    run_timeout: Seconds | None = says(SECONDS, default=run_defaults.RUN_TIMEOUT)
    idle_timeout: Seconds | None = says(SECONDS, default=run_defaults.IDLE_TIMEOUT)
    isolation: Literal["none", "worktree"] = says('must be "none" or "worktree"', default="none")
    max_file_bytes: Bytes = says("must be a positive whole number of bytes", default=MAX_FILE_BYTES)
    # "workspace": confined by bubblewrap (docs/sandbox.md): it sees its workspace, an empty home and
    # what these open (paths, `~` its home, relative ones from its cwd); hidden is absent even there.
    sandbox: Literal["none", "workspace"] = says(
        'must be "none" or "workspace"', default=run_defaults.SANDBOX
    )
    sandbox_writable: tuple[str, ...] = says("must be a list of paths", default=())
    sandbox_readable: tuple[str, ...] = says("must be a list of paths", default=())
    sandbox_hidden: tuple[str, ...] = says("must be a list of paths", default=())
    sandbox_sockets: tuple[str, ...] = says("must be a list of paths of unix sockets", default=())
    # true: all, false: none, a list: those hosts only (`api.example.com`, `*.example.com`, an address)
    sandbox_network: Switch | Hosts = says(
        "must be true, false or a list of host names (api.example.com, *.example.com, an IP address)",
        default=run_defaults.SANDBOX_NETWORK,
    )
    # Where the agent runs (docs/remote.md): a carrier's URL, its client's arguments (before the
    # host or container), the agent's cwd there (default: the login's home). None: here.
    remote: NonBlank | None = says("must be a URL such as ssh://HOST (docs/remote.md)", default=None)
    remote_options: tuple[str, ...] = says("must be a list of strings", default=())
    remote_cwd: NonBlank | None = says("must be an absolute path", default=None)
    # A spare of this agent is started ahead of its next run (the app's warm starts), unless false.
    warm: Switch = says("must be true or false", default=True)
    # Once a run's reported cost (in US dollars) passes this, the run is cancelled (`acp_tui.core.costs`).
    budget_usd: Dollars | None = says("must be a positive number of US dollars", default=None)
    # A recorded trace played as the agent: the command becomes `acp-tui replay PATH`.
    replay: NonBlank | None = says("must be a non-empty path", default=None)
    # The demo's folders (its cwd, its writable ones) are made when a run is configured, never
    # merely by loading settings.
    create_cwd: bool = field(default=False, compare=False, repr=False, metadata={"internal": True})

    @property
    def argv(self) -> list[str]:
        return [self.command, *self.args]

    @property
    def spared(self) -> bool:
        """Whether a spare of this agent is started ahead of its next run: `warm`, for an ACP
        agent (a spare is an ACP child taken through `initialize`; other providers start cold)."""
        return self.warm and self.provider == "acp"

    def provider_config(
        self, *, policy: PermissionPolicy | str | None = None, trace_dir: str | None = None
    ) -> AcpProviderConfig:
        """The core's config for this preset. A named policy must come resolved (see `Settings`)."""
        from acp_tui.policy.names import FIXED_POLICIES

        chosen = self.policy if policy is None else policy
        if isinstance(chosen, str) and chosen not in FIXED_POLICIES:
            raise ConfigError(
                f'agent "{self.name}": policy "{chosen}" needs Settings.provider_config to resolve it'
            )
        if self.create_cwd:
            # Should this fail, the run says "working directory not found", naming it.
            for folder in (*([self.cwd] if self.cwd else []), *self.sandbox_writable):
                with contextlib.suppress(OSError):
                    Path(folder).mkdir(parents=True, exist_ok=True)
        from acp_tui.settings.provider_config import AcpProviderConfig

        same = {name: getattr(self, name) for name in _shared_with_core()}  # one name, one meaning
        return AcpProviderConfig(
            **same,
            env=dict(self.env),
            headers=dict(self.headers),
            options=dict(self.options),
            cwd=self.remote_cwd if self.remote is not None else self.cwd,
            permission_policy=chosen,
            trace_dir=trace_dir,
            mcp_servers=tuple(server.to_acp() for server in self.mcp_servers),
        )

    @property
    def where(self) -> str | None:
        """Where the agent runs when not here (`host`, `docker:NAME`, `pod NS/POD`), else None."""
        if self.remote is None:
            return None
        from acp_tui.settings.remote import RemoteError, parse_remote

        try:
            return parse_remote(self.remote).where
        except RemoteError:
            return self.remote

    def check_remote(self) -> None:
        """A ConfigError (one line) when the remote keys do not fit together."""
        from acp_tui.settings.remote import RemoteError, parse_remote

        # Without `remote`, `remote_options` and `remote_cwd` wait for one (`--remote URL`).
        if self.remote_cwd is not None and not self.remote_cwd.startswith("/"):
            raise ConfigError(f'"remote_cwd" must be an absolute path there, not "{self.remote_cwd}"')
        if self.remote is None:
            return
        try:
            parse_remote(self.remote)
        except RemoteError as exc:
            raise ConfigError(str(exc)) from None
        if self.cwd is not None and not self.create_cwd:
            raise ConfigError('"cwd" is a folder here: with "remote", the far side\'s is "remote_cwd"')

    def secrets(self) -> list[str]:
        """Every value this preset hands the agent that could be a credential."""
        from acp_tui.settings.provider_config import AcpProviderConfig

        servers = tuple(server.to_acp() for server in self.mcp_servers)
        return AcpProviderConfig(
            self.command, env=self.env, mcp_servers=servers, url=self.url, headers=self.headers
        ).secrets()


@cache
def _shared_with_core() -> tuple[str, ...]:
    """What a preset hands the core as it is: the fields both have, but those converted on the way."""
    from acp_tui.settings.provider_config import AcpProviderConfig

    converted = {"env", "headers", "options", "cwd", "mcp_servers"}
    return tuple(
        sorted(
            {f.name for f in fields(AgentPreset)} & ({f.name for f in fields(AcpProviderConfig)} - converted)
        )
    )


@dataclass(frozen=True)
class Settings:
    """Everything the app and `run` need to know before spawning anything."""

    presets: tuple[AgentPreset, ...]
    policies: dict[str, RulePolicy] = field(default_factory=dict, hash=False)
    prompt: str = DEFAULT_PROMPT
    source: Path | None = None  # the file the presets came from; None for the demo set
    selected: tuple[str, ...] = ()  # the presets `--agent` named, in order; empty: all of them
    notify: Notify = "all"
    toasts: bool = True
    export_dir: Path | None = None  # where the app's exports go; None: the state folder's `exports`
    warm: bool = True
    warm_idle: float = 600.0
    keep_sessions: int = 50

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(preset.name for preset in self.presets)

    @property
    def policy_names(self) -> tuple[str, ...]:
        """Every policy a preset may use: the built-in ones, then the named ones of the file."""
        from acp_tui.policy.names import policy_names

        return policy_names(self.policies)

    def preset(self, name: str) -> AgentPreset:
        return self._by_name[name]

    @cached_property
    def _by_name(self) -> dict[str, AgentPreset]:
        return {preset.name: preset for preset in reversed(self.presets)}  # the first of a name

    def selected_presets(self) -> tuple[AgentPreset, ...]:
        if not self.selected:
            return self.presets
        return tuple(self.preset(name) for name in self.selected)

    def resolve_policy(
        self, name: str, *, ask_handler: AskHandler | None = None, agent: str | None = None
    ) -> str | PermissionPolicy:
        """A policy name as the core takes it: the built-in ones as is, the others as objects."""
        from acp_tui.policy.names import FIXED_POLICIES, NoOneToAsk, UnknownPolicy, resolve

        where = f'agent "{agent}": ' if agent else ""
        if name in FIXED_POLICIES:
            return name
        try:
            return resolve(name, self.policies, ask_handler=ask_handler)
        except NoOneToAsk as exc:
            raise ConfigError(f"{where}{exc}: it works in the app only") from None
        except UnknownPolicy as exc:
            raise ConfigError(f'{where}unknown policy "{name}" (expected {one_of(exc.known)})') from None

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


def one_of(names: Sequence[str]) -> str:
    """`a, b or c`."""
    return ", ".join(names[:-1]) + f" or {names[-1]}" if len(names) > 1 else "".join(names)


__all__ = [
    "DEFAULT_HANDSHAKE_TIMEOUT",
    "DEFAULT_PROMPT",
    "AgentPreset",
    "ConfigError",
    "McpServer",
    "Settings",
]
