"""A confined agent's network (`sandbox_network`), as this kernel can give it, never less confined
than docs/sandbox.md promises:

    sandbox_network   here                              the agent gets
    false             any                               a loopback of its own, nothing else
    true              Landlock ABI 6 or later           the host's network; no abstract unix socket
                                                        made outside is reachable (`landlock`)
    true              else pasta or slirp4netns         a network namespace of its own, outbound
                                                        through that user-mode stack (`launcher`)
    true              neither                           nothing runs: the run ends `error` (NO_WAY)
    [hosts]           any                               a network namespace of its own whose loopback
                                                        holds our proxy, which lets those hosts
                                                        through by name (--listen; netproxy)

In a network namespace of its own no abstract socket of the host exists: they are per namespace.
`Kernel` is what decides; it is a parameter, so that every way can be tried on one machine.
"""

from __future__ import annotations

import contextlib
import functools
import os
import random
import shutil
import socket
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from acp_tui.process import landlock, launcher
from acp_tui.process.sandbox import NetworkWay, SandboxError

if TYPE_CHECKING:
    from acp_tui.process.netproxy import HostProxy, Resolver

NO_WAY = (
    "sandbox: this kernel can keep the agent from the host's abstract unix sockets neither with "
    "Landlock (ABI 6, Linux 6.12) nor, without pasta or slirp4netns installed, with a network namespace "
    "of its own (apt install passt), or set sandbox_network = false, or a list of hosts"
)
PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy")
PROXY_PORTS = (20000, 30000)  # where the proxy listens inside: any port of its empty loopback would do


@dataclass(frozen=True)
class Kernel:
    """What this machine offers the sandbox's network: Landlock's ABI (0: none) and the user-mode
    network stacks installed, in order of preference."""

    landlock: int
    stacks: tuple[str, ...]

    @classmethod
    def here(cls) -> Kernel:
        return cls(_landlock_abi(), tuple(name for name in launcher.STACKS if shutil.which(name)))

    @property
    def scopes_abstract_sockets(self) -> bool:
        return self.landlock >= landlock.SCOPE_ABI


def describe_network(network: bool | Sequence[str], kernel: Kernel | None = None) -> str:
    """What a confined agent gets of the network here, in words (`acp-tui probe --sandbox`)."""
    if network is False:
        return "none: a loopback of its own"
    if network is not True:
        hosts = ", ".join(network) or "no host"
        return f"only {hosts}, through acp-tui's proxy (a network namespace of its own)"
    kernel = kernel or Kernel.here()
    if kernel.scopes_abstract_sockets:
        return f"the host's, its abstract unix sockets closed by Landlock (ABI {kernel.landlock})"
    if kernel.stacks:
        return f"a network namespace of its own, outbound through {kernel.stacks[0]}"
    return "refused: " + NO_WAY.removeprefix("sandbox: ")


def _launched(*options: str) -> NetworkWay:
    """bwrap run by our launcher (`options` its own), in a network namespace it makes."""
    return NetworkWay((sys.executable, "-I", "-S", launcher.__file__, *options, "--"), ())


def _scope() -> landlock.AbstractSocketScope:
    try:
        return landlock.AbstractSocketScope()
    except OSError as exc:
        raise SandboxError(f"sandbox: {exc.strerror}: {os.strerror(exc.errno or 0)}") from None


@functools.cache
def _landlock_abi() -> int:
    return landlock.abi()


class SandboxNetwork:
    """One confined run's network, from before its spawn to its end: how bwrap is wrapped and what
    the child does for it (`way`), the descriptors the spawn passes (`pass_fds`), the agent's
    environment, and for a host list our proxy, which reports what it refuses to
    `on_refused(host, port)`. `SandboxError` when this kernel cannot give what is asked."""

    def __init__(
        self,
        network: bool | Sequence[str],
        *,
        on_refused: Callable[[str, int], None] = lambda host, port: None,
        kernel: Kernel | None = None,
        resolve: Resolver | None = None,
    ) -> None:
        self._proxy: HostProxy | None = None
        self._ours: socket.socket | None = None  # our end of the socket the listener comes over
        self._theirs: socket.socket | None = None
        self._scope: landlock.AbstractSocketScope | None = None
        self.port: int | None = None  # where our proxy listens inside, for a host list
        if network is False:
            self.way = NetworkWay()
        elif network is True:
            self.way = self._network_on(kernel or Kernel.here())
        else:  # imported only now: most runs have no host list
            from acp_tui.policy.hosts import HostPatterns
            from acp_tui.process.netproxy import HostProxy, system_resolver

            self._proxy = HostProxy(HostPatterns(network), on_refused, resolve=resolve or system_resolver)
            self._ours, self._theirs = socket.socketpair()
            self.port = random.randrange(*PROXY_PORTS)
            self.way = _launched("--listen", str(self.port), "--hand-to", str(self._theirs.fileno()))

    def _network_on(self, kernel: Kernel) -> NetworkWay:
        if kernel.scopes_abstract_sockets:
            self._scope = _scope()
            return NetworkWay(options=(), preexec=self._scope.apply)
        if kernel.stacks:
            return _launched("--stack", kernel.stacks[0])
        raise SandboxError(NO_WAY)

    @property
    def pass_fds(self) -> tuple[int, ...]:
        """The descriptors the launcher needs (it closes them before bwrap runs)."""
        return (self._theirs.fileno(),) if self._theirs is not None else ()

    def environ(self, env: Mapping[str, str]) -> dict[str, str]:
        """The agent's environment: for a host list, our proxy in every variable clients read."""
        if self.port is None:
            return dict(env)
        return {**env, **dict.fromkeys(PROXY_VARIABLES, f"http://127.0.0.1:{self.port}")}

    def spawned(self) -> None:
        """The child runs: what it took is no longer ours to hold (Landlock's ruleset, the
        launcher's end of the socket its listener comes back over)."""
        if self._scope is not None:
            self._scope.close()
        if self._theirs is not None:
            self._theirs.close()
            self._theirs = None

    async def serve(self) -> None:
        """For a host list, our proxy serves the listener the launcher sends, once it does, until
        cancelled (whoever holds the child runs this in its task group); otherwise nothing to do."""
        if self._ours is not None and self._proxy is not None:
            await self._serve(self._ours, self._proxy)

    async def aclose(self) -> None:
        """Stop the proxy and close what is ours; idempotent."""
        if self._scope is not None:
            self._scope.close()
        if self._proxy is not None:
            await self._proxy.aclose()
        for end in (self._ours, self._theirs):
            if end is not None:
                end.close()
        self._ours = self._theirs = None

    @staticmethod
    async def _serve(ours: socket.socket, proxy: HostProxy) -> None:
        import anyio

        ours.setblocking(False)
        await anyio.wait_readable(ours)
        with contextlib.suppress(OSError):  # the launcher failed first: it says why on stderr
            _, fds, _, _ = socket.recv_fds(ours, 16, 1)
            if fds:
                await proxy.serve(socket.socket(fileno=fds[0]))
