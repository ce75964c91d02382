"""The ACP provider's config: what one agent's runs are started with. A plain declaration, below the
backend (run, process, SDK) that takes it and beside the settings that make it from a preset, which
share its defaults."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import urlsplit

from acp_tui.settings import run_defaults

if TYPE_CHECKING:
    from acp_tui.core.elicitation import QuestionHandler
    from acp_tui.policy.ask import PermissionPolicy

FAR_HOME = "~"  # a far run's cwd until its far side says where its login started

# "workspace": the agent and all it starts confined by bubblewrap (acp_tui.process.sandbox).
SandboxMode = Literal["none", "workspace"]


@dataclass(frozen=True)
class AcpProviderConfig:
    command: str
    args: Sequence[str] = ()
    env: Mapping[str, str] = field(default_factory=dict, repr=False)  # the child's own credentials
    cwd: str | None = None
    permission_policy: str | PermissionPolicy = "reject"
    # Who answers the agent's questions to the person (`elicitation/create`): the app's queue; None
    # (`acp-tui run`): each is declined at once.
    question_handler: QuestionHandler | None = None
    handshake_timeout: float = run_defaults.HANDSHAKE_TIMEOUT
    cancel_grace: float = 1.0  # session/cancel -> SIGTERM to the group
    term_grace: float = 0.5  # SIGTERM -> SIGKILL
    max_output_chars: int = 16_000_000  # the answer kept beyond this is cut, and says so
    max_line_bytes: int = 32 << 20  # one JSON-RPC message from the child, at most
    name: str | None = None  # a label for traces and diagnostics
    trace_dir: str | None = None  # when set, every JSON-RPC frame of each run goes to a JSONL file
    # Session config options to set before the prompt (id -> value id; `mode` falls back to
    # `session/set_mode` when the agent offers modes but no config options).
    options: Mapping[str, str] = field(default_factory=dict)
    # MCP servers handed to `session/new`, in the ACP shape (stdio: name, command, args, env;
    # http/sse: type, name, url, headers).
    mcp_servers: Sequence[Mapping[str, Any]] = field(default=(), repr=False)  # env, headers: secrets
    # Dispose a run that outlives this (it ends aborted), or is silent for this long (no frame from
    # the agent).
    run_timeout: float | None = run_defaults.RUN_TIMEOUT
    idle_timeout: float | None = run_defaults.IDLE_TIMEOUT
    # "workspace": the agent and all it starts confined by bubblewrap (acp_tui.process.sandbox).
    sandbox: SandboxMode = run_defaults.SANDBOX
    sandbox_writable: Sequence[str] = ()  # writable beyond the cwd and /tmp (`~`: the agent's home)
    sandbox_readable: Sequence[str] = ()  # seen read-only (its home is empty, the rest of ours unseen)
    sandbox_hidden: Sequence[str] = ()  # absent, beyond the credential folders and ours
    sandbox_sockets: Sequence[str] = ()  # unix sockets of the host it may connect to (none otherwise)
    # A worktree's: where git looks for its entry in the repository -> a git directory of the agent's
    # own shown there (see `process.sandbox.worktree_view`).
    sandbox_git_dirs: Mapping[str, str] = field(default_factory=dict)
    # True: the network; False: none at all (a loopback of its own); host patterns: those hosts only,
    # through our proxy (`acp_tui.policy.hosts`, `acp_tui.process.network`).
    sandbox_network: bool | Sequence[str] = run_defaults.SANDBOX_NETWORK
    # Where the agent runs: None here, else a carrier's URL (acp_tui.settings.remote); then
    # `command`, `args`, `env` and `cwd` (None: the remote login's home) are the far side's.
    remote: str | None = None
    remote_options: Sequence[str] = ()  # the carrier's client's arguments, before the host

    def cwd_for(self, cwd: str | None) -> str:
        """Where a run asked to work in `cwd` works: there, else the config's cwd, else ours (made
        absolute); on the far side, else its login's home (FAR_HOME until it says which)."""
        if self.remote is not None:
            return cwd or self.cwd or FAR_HOME
        return os.path.abspath(cwd or self.cwd or os.getcwd())

    # An A2A agent: where its card is discovered, and the HTTP headers every request carries
    # (credentials, masked like `env`).
    url: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict, repr=False)

    @property
    def label(self) -> str:
        """What the agent is called in its trace's name and its session's notes: its name, else
        its command's file name."""
        return self.name or os.path.basename(self.command)

    def secrets(self) -> list[str]:
        """What the run hands the agent that could be a credential: its env, an A2A agent's headers
        and the password of its URL, and its MCP servers' env and header values (as `session/new`
        carries them: lists of name/value)."""
        values = [*self.env.values(), *self.headers.values()]
        password = urlsplit(self.url).password if self.url else None
        if password:  # http://user:PASSWORD@host/
            values.append(password)
        for server in self.mcp_servers:
            for key in ("env", "headers"):
                for item in server.get(key) or ():
                    if isinstance(item, Mapping) and isinstance(item.get("value"), str):
                        values.append(item["value"])
        return values
