"""A confined child: what the sandbox opens to it (`SandboxSpec`), its start through bubblewrap
(`spawn_confined`), and what it holds until its processes are gone (`Confined`): the stand-ins its
checkout's `.git` keeps for it (`sandbox.Confinement`) and its network (`network.SandboxNetwork`:
Landlock's scope, a stack's launcher, or our proxy for a host list)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Any

from acp_tui.process.group import Child, spawn
from acp_tui.process.network import SandboxNetwork
from acp_tui.process.sandbox import Confinement, confine


@dataclass(frozen=True)
class SandboxSpec:
    """What the sandbox opens beyond the cwd: `process.sandbox.confine`'s arguments, by name, and
    the network (`sandbox_network`: true, false or host patterns)."""

    writable: Sequence[str] = ()
    readable: Sequence[str] = ()
    hidden: Sequence[str] = ()
    sockets: Sequence[str] = ()
    git_dirs: Mapping[str, str] = field(default_factory=dict)
    network: bool | Sequence[str] = True

    def opened(self) -> dict[str, Any]:
        """`confine`'s keyword arguments for the paths this opens (the network is served apart)."""
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name != "network"}


class Confined:
    """What a confined child holds until its processes are gone. Its proxy (for a host list) tells
    `on_refused(host, port)` what it refused; `serve()` runs it while the child lives."""

    def __init__(self, network: SandboxNetwork) -> None:
        self.network = network
        self.confinement: Confinement | None = None
        self.on_refused: Callable[[str, int], None] = lambda host, port: None

    async def serve(self) -> None:
        await self.network.serve()

    async def aclose(self) -> None:
        """Let go of it all (idempotent): the `.git` stand-ins, the proxy, Landlock's ruleset."""
        if self.confinement is not None:
            self.confinement.close()
        await self.network.aclose()


async def spawn_confined(
    command: str, args: Sequence[str], *, cwd: str, env: Mapping[str, str], spec: SandboxSpec
) -> Child:
    """`command args` started confined, as `group.spawn` starts a child; its `holding` is the
    `Confined` to serve and close. Raises what `confine` and `spawn` raise, having let go first."""
    held = Confined(SandboxNetwork(spec.network, on_refused=lambda host, port: held.on_refused(host, port)))
    try:
        env = held.network.environ(env)
        held.confinement = confine(command, args, cwd=cwd, env=env, network=held.network.way, **spec.opened())
        argv = held.confinement.argv
        child = await spawn(
            argv[0],
            argv[1:],
            cwd=cwd,
            env=env,
            pass_fds=held.network.pass_fds,
            preexec=held.confinement.preexec,
            holding=held,
        )
    except BaseException:
        await held.aclose()
        raise
    held.network.spawned()
    return child
