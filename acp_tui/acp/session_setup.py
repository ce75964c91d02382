"""Setting one session up and closing it: every protocol case between the spawn and the prompt.

`initialize` (what the agent is, what it can do, how one logs in to it), `session/new` (with the MCP
servers exactly as configured), then each configured option: `session/set_config_option`, or
`session/set_mode` for `mode` when the agent offers modes but no config options. A value or an option
the agent does not offer ends the run before any prompt, naming what it does offer. A JSON-RPC -32000
(authentication required) becomes a message naming the agent's login methods. `session/close` is
sent only to agents that advertised it, bounded by the time the caller gives it; `session/list`
only to those that advertised that.

What we declare in `initialize`: no file system, no terminal; questions to the person
(`elicitation`, form and URL modes: the app asks, `acp-tui run` declines); boolean config options.

The run calls this; so does `acp-tui probe`. It imports the SDK: load it after the spawn."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import acp
from acp.schema import (
    AcpMcpServer,
    AvailableCommandsUpdate,
    BooleanConfigOptionCapabilities,
    ClientCapabilities,
    ClientSessionCapabilities,
    ConfigOptionUpdate,
    CurrentModeUpdate,
    ElicitationCapabilities,
    ElicitationFormCapabilities,
    ElicitationUrlCapabilities,
    EnvVarAuthMethod,
    EnvVariable,
    HttpHeader,
    HttpMcpServer,
    Implementation,
    InitializeResponse,
    McpServerStdio,
    NewSessionResponse,
    SessionConfigOptionBoolean,
    SessionConfigOptionsCapabilities,
    SessionConfigOptionSelect,
    SessionConfigSelectGroup,
    SseMcpServer,
    TerminalAuthMethod,
    UsageUpdate,
)

from acp_tui.acp.auth import auth_message
from acp_tui.core.model import (
    AgentInfo,
    AgentSessionInfo,
    AuthMethodInfo,
    CommandInfo,
    ConfigOptionInfo,
    Continuation,
    Cost,
    Usage,
)
from acp_tui.core.text import one_line
from acp_tui.runs.probe import options_json

if TYPE_CHECKING:
    from acp.client.connection import ClientSideConnection


AUTH_REQUIRED = -32000  # ACP's "authentication required"


CLIENT_INFO = Implementation(name="acp-tui", version="0.1.0")
CLIENT_CAPABILITIES = ClientCapabilities(
    elicitation=ElicitationCapabilities(form=ElicitationFormCapabilities(), url=ElicitationUrlCapabilities()),
    session=ClientSessionCapabilities(
        config_options=SessionConfigOptionsCapabilities(boolean=BooleanConfigOptionCapabilities())
    ),
)
MAX_LISTED = 1000  # sessions `session/list` is asked for, page after page, at most


ConfigOption = SessionConfigOptionSelect | SessionConfigOptionBoolean


class SessionSetupError(Exception):
    """The session cannot be used as configured; the message says why, in one line."""


@dataclass
class SessionSetup:
    """One session's setup, and what the agent said about itself along the way."""

    conn: ClientSideConnection
    cwd: str
    options: Mapping[str, str] = field(default_factory=dict)
    mcp_servers: Sequence[Mapping[str, Any]] = ()
    name: str | None = None  # the agent as the user knows it (the preset), for messages
    step: str = "initialize"  # the request under way: what a timeout or a failure names
    protocol_version: int | None = None
    agent: AgentInfo | None = None
    agent_capabilities: dict[str, Any] = field(default_factory=dict)
    auth_methods: tuple[AuthMethodInfo, ...] = ()
    session_id: str | None = None
    config_options: list[ConfigOption] = field(default_factory=list)
    current_mode: str | None = None
    available_modes: tuple[str, ...] = ()
    commands: tuple[CommandInfo, ...] = ()  # the slash commands the agent offers, as last announced
    commands_announced: asyncio.Event = field(default_factory=asyncio.Event, repr=False)
    can_close: bool = False
    _closed: bool = field(default=False, init=False, repr=False)

    # The steps ---------------------------------------------------------------------------------

    async def open_session(
        self, on_session: Callable[[str], None] = lambda _: None, *, continuing: str | None = None
    ) -> str:
        """The session after `initialize`: `session/new`, or the one `continuing` names reached
        again (`session/resume` when the agent offers it, else `session/load`); then the options.
        `on_session` is called as soon as the id is known (updates for it may be on their way)."""
        if continuing is None:
            session_id = await self.new_session()
            on_session(session_id)
        else:
            session_id = continuing
            on_session(session_id)  # load replays the history for it before it answers
            await self.continue_session(session_id)
        await self.apply_options()
        return session_id

    @property
    def continuation(self) -> Continuation | None:
        """How this agent's sessions are reached again, as `initialize` said."""
        sessions = self.agent_capabilities.get("sessionCapabilities") or {}
        if isinstance(sessions, dict) and sessions.get("resume") is not None:
            return "resume"
        if self.agent_capabilities.get("loadSession") is True:
            return "load"
        return None

    async def continue_session(self, session_id: str) -> None:
        """Reach the session again; SessionSetupError (nothing sent) when the agent offers no way."""
        how = self.continuation
        servers = self._servers()
        if how == "resume":
            self.step = "session/resume"
            response: Any = await self.conn.resume_session(
                session_id=session_id, cwd=self.cwd, mcp_servers=servers
            )
        elif how == "load":
            self.step = "session/load"
            response = await self.conn.load_session(session_id=session_id, cwd=self.cwd, mcp_servers=servers)
        else:
            agent = self.name or (self.agent.name if self.agent else "the agent")
            raise SessionSetupError(
                f"cannot continue: {agent} offers neither session/resume nor session/load"
            )
        self.session_id = session_id
        self._take_session_state(response)

    async def initialize(self) -> InitializeResponse:
        self.step = "initialize"
        response = await self.conn.initialize(
            protocol_version=acp.PROTOCOL_VERSION,
            client_capabilities=CLIENT_CAPABILITIES,
            client_info=CLIENT_INFO,
        )
        self.protocol_version = response.protocol_version
        info = response.agent_info
        self.agent = AgentInfo(info.name, info.title, info.version) if info is not None else None
        capabilities = response.agent_capabilities
        if capabilities is not None:
            self.agent_capabilities = capabilities.model_dump(mode="json", by_alias=True, exclude_none=True)
            sessions = capabilities.session_capabilities
            self.can_close = sessions is not None and sessions.close is not None
        self.auth_methods = tuple(_auth_method(m) for m in response.auth_methods or ())
        return response

    @property
    def can_list(self) -> bool:
        """The agent offers `session/list`."""
        sessions = self.agent_capabilities.get("sessionCapabilities") or {}
        return isinstance(sessions, dict) and sessions.get("list") is not None

    async def list_sessions(self) -> tuple[AgentSessionInfo, ...]:
        """Every session the agent keeps, as `session/list` gives them page after page (at most
        `MAX_LISTED`); SessionSetupError (nothing sent) when the agent does not offer it."""
        if not self.can_list:
            agent = self.name or (self.agent.name if self.agent else "the agent")
            raise SessionSetupError(f"{agent} does not list its sessions (it offers no session/list)")
        self.step = "session/list"
        found: list[AgentSessionInfo] = []
        cursor: str | None = None
        cursors: set[str] = set()
        while len(found) < MAX_LISTED:
            response = await self.conn.list_sessions(cursor=cursor)
            found.extend(
                AgentSessionInfo(info.session_id, info.cwd, info.title, info.updated_at)
                for info in response.sessions
            )
            cursor = response.next_cursor
            if cursor is None or cursor in cursors:  # a cursor given twice would never end
                break
            cursors.add(cursor)
        return tuple(found[:MAX_LISTED])

    async def new_session(self) -> str:
        self.step = "session/new"
        response: NewSessionResponse = await self.conn.new_session(cwd=self.cwd, mcp_servers=self._servers())
        self.session_id = response.session_id
        self._take_session_state(response)
        return response.session_id

    def _servers(self) -> list[HttpMcpServer | SseMcpServer | AcpMcpServer | McpServerStdio]:
        """The MCP servers as configured, as `session/new`, `resume` and `load` carry them."""
        return [mcp_server(server) for server in self.mcp_servers]

    def _take_session_state(self, response: Any) -> None:
        """The options and modes a session's answer carries (new, resume and load alike)."""
        if response is None:
            return
        self.config_options = list(getattr(response, "config_options", None) or ())
        modes = getattr(response, "modes", None)
        if modes is not None:
            self.current_mode = modes.current_mode_id
            self.available_modes = tuple(mode.id for mode in modes.available_modes)

    async def apply_options(self) -> None:
        """Each configured option, in order; raises `SessionSetupError` for one the agent lacks."""
        assert self.session_id is not None
        for asked_id, value in self.options.items():
            option = self._option(asked_id)
            option_id = option.id if option is not None else asked_id
            if option is not None:
                offered = _values(option)
                if value not in offered:
                    raise SessionSetupError(_not_offered(option_id, value, offered))
                self.step = "session/set_config_option"
                wire: str | bool = (
                    value == "true" if isinstance(option, SessionConfigOptionBoolean) else value
                )
                answer = await self.conn.set_config_option(
                    config_id=option_id, session_id=self.session_id, value=wire
                )
                if answer is not None and answer.config_options:
                    self.config_options = list(answer.config_options)
                else:  # an answer without the options: ours is set, as far as we know
                    self._set_current(option_id, value)
            elif option_id == "mode" and not self.config_options and self.available_modes:
                if value not in self.available_modes:
                    raise SessionSetupError(_not_offered("mode", value, self.available_modes))
                self.step = "session/set_mode"
                await self.conn.set_session_mode(session_id=self.session_id, mode_id=value)
                self.current_mode = value
            else:
                raise SessionSetupError(_no_such_option(option_id, self.option_ids))
        self.step = "session/prompt"

    async def close(self, timeout: float) -> None:
        """`session/close`, once, when the agent advertised it; never waits beyond `timeout`."""
        if not self.can_close or self.session_id is None or self._closed or timeout <= 0:
            return
        self._closed = True
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.conn.close_session(session_id=self.session_id), timeout)

    # What the session is now -------------------------------------------------------------------

    def on_update(self, update: Any) -> Usage | None:
        """Follow the session's own updates: options and mode changes; a usage report is returned."""
        if isinstance(update, ConfigOptionUpdate):
            self.config_options = list(update.config_options)
        elif isinstance(update, CurrentModeUpdate):
            self.current_mode = update.current_mode_id
        elif isinstance(update, AvailableCommandsUpdate):
            self.commands = tuple(
                CommandInfo(c.name, c.description, c.input.root.hint if c.input is not None else None)
                for c in update.available_commands
            )
            self.commands_announced.set()
        elif isinstance(update, UsageUpdate):
            cost = None
            # The SDK's float takes "Infinity" and "NaN" as strings: no number JSON could carry.
            if update.cost is not None and math.isfinite(update.cost.amount):
                cost = Cost(update.cost.amount, update.cost.currency)
            return Usage(used=update.used, size=update.size, cost=cost)
        return None

    @property
    def option_ids(self) -> tuple[str, ...]:
        if self.config_options:
            return tuple(option.id for option in self.config_options)
        return ("mode",) if self.available_modes else ()

    @property
    def current_options(self) -> dict[str, str]:
        """Every option's current value id (the mode alone, for an agent with modes only)."""
        if self.config_options:
            return {option.id: _current(option) for option in self.config_options}
        return {"mode": self.current_mode} if self.current_mode is not None else {}

    @property
    def offered(self) -> tuple[ConfigOptionInfo, ...]:
        """The options and their values, for a probe or a chooser (a `mode` option built from the
        modes when the agent offers no config options)."""
        if self.config_options:
            return tuple(
                ConfigOptionInfo(o.id, o.name, _category(o.category), _current(o), _values(o), o.type)
                for o in self.config_options
            )
        if self.available_modes and self.current_mode is not None:
            return (ConfigOptionInfo("mode", "Mode", "mode", self.current_mode, self.available_modes),)
        return ()

    def failure(self, step: str, exc: Exception) -> str | None:
        """The words for a failed request when they need more than the agent's own: -32000."""
        if getattr(exc, "code", None) != AUTH_REQUIRED:
            return None
        agent = self.name or (self.agent.name if self.agent else "the agent")
        said = one_line(str(exc), shown=False)  # cut by the run, after masking
        return auth_message(agent, self.auth_methods) + (f'; {step} said "{said}"' if said else "")

    def _option(self, asked: str) -> ConfigOption | None:
        """The option with that id; else the only one of that category (`mode`, `model`), so that
        `mode=ask` reaches an agent whose mode option has another id."""
        by_id = [o for o in self.config_options if o.id == asked]
        by_category = [o for o in self.config_options if _category(o.category) == asked]
        found = by_id or (by_category if len(by_category) == 1 else [])
        return found[0] if found else None

    def _set_current(self, option_id: str, value: str) -> None:
        for i, option in enumerate(self.config_options):
            if option.id == option_id:
                current: str | bool = (
                    value == "true" if isinstance(option, SessionConfigOptionBoolean) else value
                )
                self.config_options[i] = option.model_copy(update={"current_value": current})


def mcp_server(server: Mapping[str, Any]) -> HttpMcpServer | SseMcpServer | McpServerStdio:
    """A configured server (the ACP shape) as the SDK's type, nothing added or dropped."""
    kind = server.get("type", "stdio")
    if kind in ("http", "sse"):
        headers = [HttpHeader(name=h["name"], value=h["value"]) for h in server.get("headers", ())]
        cls = HttpMcpServer if kind == "http" else SseMcpServer
        return cls(type=kind, name=server["name"], url=server["url"], headers=headers)
    env = [EnvVariable(name=e["name"], value=e["value"]) for e in server.get("env", ())]
    return McpServerStdio(
        name=server["name"], command=server["command"], args=list(server.get("args", ())), env=env
    )


def _auth_method(method: Any) -> AuthMethodInfo:
    kind = getattr(method, "type", None)
    variables: tuple[str, ...] = ()
    args: tuple[str, ...] = ()
    if isinstance(method, EnvVarAuthMethod):
        variables = tuple(var.name for var in method.vars)
    elif isinstance(method, TerminalAuthMethod):
        args = tuple(method.args or ())
    return AuthMethodInfo(
        id=method.id, name=method.name, description=method.description, type=kind, vars=variables, args=args
    )


def _values(option: ConfigOption) -> tuple[str, ...]:
    if isinstance(option, SessionConfigOptionBoolean):
        return ("true", "false")
    values: list[str] = []
    for item in option.options:
        if isinstance(item, SessionConfigSelectGroup):
            values.extend(choice.value for choice in item.options)
        else:
            values.append(item.value)
    return tuple(values)


def _current(option: ConfigOption) -> str:
    value = option.current_value
    return ("true" if value else "false") if isinstance(value, bool) else value


def _category(category: Any) -> str | None:
    return category if isinstance(category, str) or category is None else str(category)


def _not_offered(option_id: str, value: str, offered: Sequence[str]) -> str:
    return f'option "{option_id}": the agent offers no value "{value}" (offered: {", ".join(offered)})'


def _no_such_option(option_id: str, ids: Sequence[str]) -> str:
    has = f"it has: {', '.join(ids)}" if ids else "it offers no options"
    return f'option "{option_id}": the agent has no such option ({has})'


def describe(setup: SessionSetup, error: str | None) -> dict[str, Any]:
    """The probe's record: exactly agent, protocol_version, agent_capabilities, auth_methods, modes,
    config_options, commands, session_list, client_capabilities, error."""
    from acp_tui.reports.records import AuthMethod

    return {
        "agent": dataclasses.asdict(setup.agent) if setup.agent else None,
        "protocol_version": setup.protocol_version,
        "agent_capabilities": setup.agent_capabilities,
        "auth_methods": [  # as a run's record holds them
            AuthMethod.model_validate(dataclasses.asdict(m), strict=False).model_dump(mode="json")
            for m in setup.auth_methods
        ],
        "modes": {"current": setup.current_mode, "available": list(setup.available_modes)},
        "config_options": options_json(setup.offered) if setup.config_options else [],
        "commands": [dataclasses.asdict(command) for command in setup.commands],
        "session_list": setup.can_list,
        "client_capabilities": CLIENT_CAPABILITIES.model_dump(mode="json", by_alias=True, exclude_none=True),
        "error": error,
    }
