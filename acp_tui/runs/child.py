"""The child a run talks to: how it is started (a carrier) and how it is held (`ChildProcess`).

A carrier turns a `Launch` (what to run, where, with which environment and confinement) into a
running `Child`: a local process that leads its own process group, with piped stdio. The local
carrier starts the agent itself (through bubblewrap when confined); the remote one starts a local
ssh, docker, podman or kubectl whose far side runs our shim around the agent (`process.link`): it
relays the agent's stdio and ends its processes with it. Either way a run holds a `Child`, and
`ChildProcess` does everything a run needs of it:

- its stderr drained into the run's `StderrTail`, to the end, whatever the run is doing (a child
  blocked on a full stderr pipe never answers again);
- its exit watched: a leader that exited while something else (a wrapper's grandchild) still holds
  its pipes ends the run, which would otherwise wait for an end of file that never comes;
- its end: stdin closed, the group (and every process carrying the run's mark) let go or signalled
  (`process.group.terminate_group`), the pipes let run dry, then closed;
- why it broke, in one line: its exit code or signal and its last stderr line (or the link's loss);
- where it works: a far agent's cwd is the far side's to say (its login's home, unless asked).
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Protocol, cast

import anyio
from anyio.abc import TaskGroup

from acp_tui.core.model import EndedBy, NetworkRefusal
from acp_tui.core.text import one_line
from acp_tui.process.confined import SandboxSpec
from acp_tui.process.environment import child_environment, protect_own_environment
from acp_tui.process.exit_cause import explaining_line, spawn_error_message
from acp_tui.process.group import (
    Child,
    Stdin,
    close_pipes,
    drain_lines,
    spawn,
    terminate_group,
)
from acp_tui.runs.output import StderrTail
from acp_tui.settings.provider_config import FAR_HOME

if TYPE_CHECKING:
    from acp_tui.settings.provider_config import AcpProviderConfig

PIPE_CLOSE_GRACE = 1.0  # after the group is gone, how long a stray holder may keep our pipes open
MAX_REFUSALS = 1000  # refused connections kept (and told); an agent trying more is not news
HOST_CHARS = 300  # a refused host is kept to this (a DNS name has at most 253)


class ChildStartError(Exception):
    """The child could not be started; the message says why, in one line."""


@dataclass(frozen=True)
class Launch:
    command: str
    args: Sequence[str]
    cwd: str
    env: Mapping[str, str] = field(repr=False)
    sandbox: SandboxSpec | None = None  # None: unconfined


class Carrier(Protocol):
    """Where a child runs. `start` raises ChildStartError, never anything else for a bad launch."""

    async def start(self, launch: Launch) -> Child: ...


class LocalCarrier:
    """On this machine, in a process group of its own; confined by bubblewrap when asked."""

    async def start(self, launch: Launch) -> Child:
        from acp_tui.process.confined import spawn_confined
        from acp_tui.process.sandbox import SandboxError

        command, args, cwd, env = launch.command, launch.args, launch.cwd, launch.env
        try:
            if launch.sandbox is not None:
                return await spawn_confined(command, args, cwd=cwd, env=env, spec=launch.sandbox)
            return await spawn(command, args, cwd=cwd, env=env)
        except SandboxError as exc:  # never unconfined instead: nothing runs
            raise ChildStartError(str(exc)) from None
        except OSError as exc:
            raise ChildStartError(spawn_error_message(exc, launch.command, launch.cwd)) from None


LOCAL = LocalCarrier()


@dataclass(frozen=True)
class RemoteCarrier:
    """On the far side of a `remote` URL, through its engine's own client (`remote_options` its
    arguments), by our shim (`process.link`): the launch's env is the agent's own (the far side
    lays it over its environment, scrubbed there), its cwd the far side's (FAR_HOME: the login's
    home), its sandbox made over there. The client is our child; the agent is the shim's."""

    url: str
    options: Sequence[str] = ()
    connect_timeout: float = 60.0  # the handshake's: reaching the far side is its first step
    term_grace: float = 0.5

    async def start(self, launch: Launch) -> Child:
        from acp_tui.process.link import LinkFailed, spawn_far

        try:
            return await spawn_far(
                self.url,
                self.options,
                [launch.command, *launch.args],
                cwd=None if launch.cwd == FAR_HOME else launch.cwd,
                env=launch.env,
                sandbox=launch.sandbox,
                connect_timeout=self.connect_timeout,
                term_grace=self.term_grace,
            )
        except LinkFailed as exc:
            raise ChildStartError(str(exc)) from None


def carrier_for(config: AcpProviderConfig) -> Carrier:
    """Where a config's agent runs (the one place a carrier is chosen)."""
    if config.remote is not None:
        return RemoteCarrier(
            config.remote, tuple(config.remote_options), config.handshake_timeout, config.term_grace
        )
    return LOCAL


def launch_for(config: AcpProviderConfig, cwd: str) -> Launch:
    """What a config's agent is started as, in `cwd`. Its environment is ours scrubbed with its
    own `env` on top; beyond a link, its own `env` alone (the far side scrubs its own environment,
    and nothing of ours travels)."""
    protect_own_environment()
    sandbox = None
    if config.sandbox == "workspace":  # the config's `sandbox_*` fields, by name
        sandbox = SandboxSpec(**{f.name: getattr(config, f"sandbox_{f.name}") for f in fields(SandboxSpec)})
    env = dict(config.env) if config.remote is not None else child_environment(config.env)
    return Launch(config.command, tuple(config.args), cwd, env, sandbox)


async def start_child(config: AcpProviderConfig, cwd: str, tail: StderrTail) -> ChildProcess:
    """A config's agent, started in `cwd` (whatever protocol it speaks), its stderr into `tail`;
    ChildStartError when it cannot be."""
    launch = launch_for(config, cwd)
    leader = await carrier_for(config).start(launch)
    return ChildProcess(leader, tail, confined=launch.sandbox is not None)


class ChildProcess:
    def __init__(self, leader: Child, tail: StderrTail, *, confined: bool = False) -> None:
        self.leader = leader  # the child we spawned, which leads its process group
        self.tail = tail
        self.confined = confined
        self.drained = asyncio.Event()  # its stderr reached its end
        self.gone = False  # it exited, and its pipes stayed open after it
        self.stdout_closed: asyncio.Event | None = None  # its stdout's end, as its reader sees it
        # What its sandbox refused (a host list's proxy), told to `on_refused`, `at` by `clock`.
        self.refused: list[NetworkRefusal] = []
        self.on_refused: Callable[[NetworkRefusal], None] = lambda refusal: None
        self.clock: Callable[[], float] = asyncio.get_running_loop().time
        if leader.holding is not None:
            leader.holding.on_refused = self._refused

    @property
    def stdio(self) -> tuple[asyncio.StreamReader, Stdin]:
        """Its stdout and stdin, for the protocol's transport."""
        return self.leader.stdout, self.leader.stdin

    @property
    def stdout_pipe(self) -> asyncio.ReadTransport | None:
        """The pipe its stdout is read from (to pause its reading)."""
        pipe = self.leader.transport.get_pipe_transport(1)
        return pipe if isinstance(pipe, asyncio.ReadTransport) else None

    async def started_in(self, cwd: str) -> str:
        """Where the agent works: `cwd`; beyond a link, where the far side says once the agent
        runs there (FAR_HOME: its login's home), else ChildStartError saying why it never will."""
        far = self.leader.far
        if far is None:
            return cwd
        from acp_tui.process.link import LinkFailed

        try:
            return await far.ready()
        except LinkFailed as exc:
            raise ChildStartError(str(exc)) from None

    def unreached(self, timeout: float) -> str | None:
        """Why the handshake timed out when the far side was never reached, else None."""
        return self.leader.far.unreached(timeout) if self.leader.far is not None else None

    # Helpers: each runs in the task group of whoever holds the child -------------------------

    def tend(self, group: TaskGroup, stdout_closed: asyncio.Event, on_gone: Callable[[], None]) -> None:
        """Its helpers, in `group` (they end with it): the stderr drain, what its sandbox serves,
        the exit watch (`watch_exit`). `stdout_closed`: set by its stdout's reader at the end."""
        self.stdout_closed = stdout_closed
        group.start_soon(self.drain)
        group.start_soon(self.serve)
        group.start_soon(self.watch_exit, stdout_closed, on_gone)

    async def drain(self) -> None:
        """Its stderr into the tail, to the end."""
        try:
            await drain_lines(self.leader.stderr, self.tail.line)
        finally:
            self.drained.set()

    async def serve(self) -> None:
        """What it holds that serves it while it lives (a sandbox's proxy, a link)."""
        if self.leader.holding is not None:
            await self.leader.holding.serve()
        if self.leader.far is not None:
            await self.leader.far.serve()

    def _refused(self, host: str, port: int) -> None:
        if len(self.refused) < MAX_REFUSALS:
            host = one_line(self.tail.guard(host), HOST_CHARS, shown=False)
            self.refused.append(refusal := NetworkRefusal(host, port, self.clock()))
            self.on_refused(refusal)

    async def watch_exit(self, stdout_closed: asyncio.Event, on_gone: Callable[[], None]) -> None:
        """`on_gone()` when it has exited and its stdout is still open `PIPE_CLOSE_GRACE` later."""
        await self.leader.wait_exit()
        with anyio.move_on_after(PIPE_CLOSE_GRACE):
            await stdout_closed.wait()
        if not stdout_closed.is_set():
            self.gone = True
            on_gone()

    # The end -----------------------------------------------------------------------------------

    async def end(
        self,
        *,
        graceful: bool,
        term_grace: float,
        on_step: Callable[[str], None],
    ) -> EndedBy:
        """End all of it and return how it ended. `graceful`: it may first exit by itself on
        stdin's end (for `term_grace`); else it is signalled at once. Its pipes are let run dry
        (its stdout's reader to the end, when it was tended) before they are closed."""
        try:
            self.leader.stdin.close()
            ended = await terminate_group(
                self.leader,
                term_grace=term_grace,
                exit_grace=term_grace if graceful and not self.gone else 0.0,
                on_step=on_step,
            )
            with anyio.move_on_after(PIPE_CLOSE_GRACE):
                await self.drained.wait()
                if self.stdout_closed is not None:
                    await self.stdout_closed.wait()
            return cast(EndedBy, ended)
        finally:
            close_pipes(self.leader)  # whatever still holds them, we keep no descriptor of this run
            if self.leader.holding is not None:  # its processes are gone: what it held goes too
                await self.leader.holding.aclose()

    async def why_broken(self, *, heard: bool) -> str:
        """Why the conversation broke, in one line: the exit code or signal, the last stderr line."""
        code = await self.leader.wait_exit(PIPE_CLOSE_GRACE)
        if code is None:
            return "the agent closed the connection"
        with anyio.move_on_after(0.2):  # its last words may still be in the pipe
            await self.drained.wait()
        if self.leader.far is not None:
            lost = self.leader.far.failure()
            if lost is not None:
                return lost
            if (code := self.leader.returncode) is None:
                return "the agent closed the connection"
        if self.confined and code == 1 and not heard:
            from acp_tui.process.sandbox import failure_message

            failed = failure_message(self.tail.lines)
            if failed:
                return failed  # bwrap could not set the sandbox up: the agent never ran
        how = f"exited with code {code}"
        if code < 0:
            with contextlib.suppress(ValueError):
                how = f"was killed by {signal.Signals(-code).name}"
        last = explaining_line(list(self.tail.lines))
        return f"agent {how}" + (f": {last.strip()}" if last else "")
