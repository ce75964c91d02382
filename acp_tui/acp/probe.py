"""`acp-tui probe`: start an agent, set a session up in an empty temporary directory, say what the
agent is and offers (modes, models, login methods), and dispose it. No prompt is ever sent.

The probe is a run that stops after its session setup, so it gets the same spawn, process group,
stderr drain, handshake timeout and disposal as any run."""

from __future__ import annotations

import asyncio
import dataclasses
import sys
import tempfile
from collections.abc import Awaitable, Callable
from typing import Any, Protocol, TextIO, TypeVar

from acp_tui.acp.run import AcpSubagentRun
from acp_tui.acp.session_setup import describe
from acp_tui.core.model import StderrLine, SubagentRequest, SubagentResult, SubagentStopReason
from acp_tui.core.text import one_line
from acp_tui.policy.ask import PermissionPolicy
from acp_tui.process.network import describe_network
from acp_tui.reports.records import json_line
from acp_tui.reports.text import probe_text
from acp_tui.runs.base import RunBase
from acp_tui.settings.provider_config import AcpProviderConfig

R = TypeVar("R", bound=RunBase)


class ProbeRun(AcpSubagentRun):
    """A run whose turn is never taken: the session is set up, then the run ends."""

    async def take_turn(self, session_id: str) -> str:
        return "end_turn"


async def describe_agent(
    config: AcpProviderConfig, on_stderr: Callable[[str], object] = lambda _: None
) -> tuple[dict[str, Any], bool]:
    """The probe's record of the agent, and whether a session was created. For the app too (the
    values of its options for a chooser): it never raises for what the agent does."""
    run, result = await probe_run(ProbeRun, config, on_stderr)
    setup = run.setup
    created = setup is not None and setup.session_id is not None
    error = result.error if result.stop_reason is not SubagentStopReason.COMPLETED else None
    if error is None and not created:
        error = "no session was created"
    record = describe(setup, error) if setup is not None else _nothing(error)
    return record | sandbox_keys(config), created and error is None


async def probe_run(
    make: Callable[[AcpProviderConfig, SubagentRequest, PermissionPolicy], R],
    config: AcpProviderConfig,
    on_stderr: Callable[[str], object],
) -> tuple[R, SubagentResult]:
    """A probe's run (whatever its provider), to its end: the agent as it comes (none of the
    preset's options set), in an empty temporary directory, under `reject`; its stderr told."""
    from acp_tui.policy.names import FIXED_POLICIES

    config = dataclasses.replace(config, options={})
    with tempfile.TemporaryDirectory(prefix="acp-tui-probe-") as empty:
        run = make(config, SubagentRequest(prompt="", cwd=empty), FIXED_POLICIES["reject"])
        await run.start()
        try:
            async for event in run.events():
                if isinstance(event, StderrLine):
                    on_stderr(one_line(event.text))
        finally:
            await run.dispose()
        return run, await run.result()


def sandbox_keys(config: AcpProviderConfig) -> dict[str, Any]:
    """What a probe's record says of its sandbox: `sandbox`, and when confined what this kernel
    gives its network (`sandbox_network`)."""
    if config.sandbox != "workspace":
        return {"sandbox": config.sandbox}
    return {"sandbox": config.sandbox, "sandbox_network": describe_network(config.sandbox_network)}


def _nothing(error: str | None) -> dict[str, Any]:
    return {
        "agent": None,
        "protocol_version": None,
        "agent_capabilities": {},
        "auth_methods": [],
        "modes": {"current": None, "available": []},
        "config_options": [],
        "error": error,
    }


EXIT_SESSION_CREATED = 0


EXIT_NO_SESSION = 1


class Describe(Protocol):
    """What probes an agent (`describe_agent` for an ACP one): its record, whether it set up."""

    def __call__(
        self, config: AcpProviderConfig, on_stderr: Callable[[str], object] = ...
    ) -> Awaitable[tuple[dict[str, Any], bool]]: ...


def probe(
    config: AcpProviderConfig,
    *,
    fmt: str = "text",
    out: TextIO | None = None,
    describe: Describe = describe_agent,
) -> int:
    """Probe one agent, print what it offers (`describe` says it: an ACP agent's session unless
    told otherwise); 0 when the session was created, else 1."""
    return asyncio.run(_probe(config, fmt, out or sys.stdout, sys.stderr, describe))


async def _probe(config: AcpProviderConfig, fmt: str, out: TextIO, err: TextIO, describe: Describe) -> int:
    name = config.name or config.command
    record, created = await describe(config, lambda line: err.write(f"[{name}] {line}\n"))
    out.write(json_line(record) + "\n" if fmt == "json" else probe_text(name, record))
    out.flush()
    return EXIT_SESSION_CREATED if created else EXIT_NO_SESSION
