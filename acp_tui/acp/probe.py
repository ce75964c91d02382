"""`acp-tui probe`: start an agent, set a session up in an empty temporary directory, say what the
agent is and offers (modes, models, login methods, slash commands, whether it lists its sessions),
and dispose it. No prompt is ever sent.

The probe is a run that stops after its session setup, so it gets the same spawn, process group,
stderr drain, handshake timeout and disposal as any run. Agents announce their slash commands just
after the session opens (a notification, which nothing asks for): the probe gives them
`COMMANDS_GRACE` seconds to, and goes on as soon as they do."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable, Callable
from typing import Any, TextIO

from acp_tui.acp.run import AcpSubagentRun
from acp_tui.acp.session_setup import describe
from acp_tui.reports.records import json_line
from acp_tui.reports.text import probe_text
from acp_tui.runs.probe import probe_record, probed, run_keys
from acp_tui.settings.provider_config import AcpProviderConfig

COMMANDS_GRACE = 0.5


class ProbeRun(AcpSubagentRun):
    """A run whose turn is never taken: the session is set up, then the run ends."""

    async def take_turn(self, session_id: str) -> str:
        import anyio

        if self.setup is not None:
            with anyio.move_on_after(COMMANDS_GRACE):
                await self.setup.commands_announced.wait()
        return "end_turn"


async def describe_agent(
    config: AcpProviderConfig, on_stderr: Callable[[str], object] = lambda _: None
) -> tuple[dict[str, Any], bool]:
    """The probe's record of the agent, and whether a session was created. For the app too (the
    values of its options for a chooser): it never raises for what the agent does."""
    run, _, error = await probed(ProbeRun, config, on_stderr)
    setup = run.setup
    created = setup is not None and setup.session_id is not None
    if error is None and not created:
        error = "no session was created"
    record = describe(setup, error) if setup is not None else probe_record(None, error)
    return {**record, **run_keys(config)}, created and error is None


EXIT_SESSION_CREATED = 0
EXIT_NO_SESSION = 1


Describe = Callable[[AcpProviderConfig, Callable[[str], object]], Awaitable[tuple[dict[str, Any], bool]]]


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
