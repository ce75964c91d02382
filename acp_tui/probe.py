"""`acp-tui probe`: start an agent, set a session up in an empty temporary directory, say what the
agent is and offers (modes, models, login methods), and dispose it. No prompt is ever sent.

The probe is a run that stops after its session setup, so it gets the same spawn, process group,
stderr drain, handshake timeout and disposal as any run.
"""

from __future__ import annotations

import asyncio
import dataclasses
import sys
import tempfile
from collections.abc import Callable
from typing import Any, TextIO

from .report import json_line
from .subagents.acp.provider import AcpProviderConfig
from .subagents.acp.run import AcpSubagentRun
from .subagents.acp.session_setup import describe
from .subagents.model import StderrLine, SubagentRequest, SubagentStopReason
from .untrusted import one_line

EXIT_SESSION_CREATED = 0
EXIT_NO_SESSION = 1


class ProbeRun(AcpSubagentRun):
    """A run whose turn is never taken: the session is set up, then the run ends."""

    async def _prompt(self, conn: Any, session_id: str) -> str:
        return "end_turn"


def probe(config: AcpProviderConfig, *, fmt: str = "text", out: TextIO | None = None) -> int:
    """Probe one agent, print what it offers; 0 when the session was created, else 1."""
    return asyncio.run(_probe(config, fmt, out or sys.stdout, sys.stderr))


async def _probe(config: AcpProviderConfig, fmt: str, out: TextIO, err: TextIO) -> int:
    name = config.name or config.command
    record, created = await describe_agent(config, lambda line: err.write(f"[{name}] {line}\n"))
    out.write(json_line(record) + "\n" if fmt == "json" else text_report(name, record))
    out.flush()
    return EXIT_SESSION_CREATED if created else EXIT_NO_SESSION


async def describe_agent(
    config: AcpProviderConfig, on_stderr: Callable[[str], object] = lambda _: None
) -> tuple[dict[str, Any], bool]:
    """The probe's record of the agent, and whether a session was created. For the app too (the
    values of its options for a chooser): it never raises for what the agent does."""
    from .subagents.acp.permissions import resolve_policy

    # The agent describes itself, as it comes: none of the preset's options are set.
    config = dataclasses.replace(config, options={})
    with tempfile.TemporaryDirectory(prefix="acp-tui-probe-") as empty:
        run = ProbeRun(config, SubagentRequest(prompt="", cwd=empty), resolve_policy("reject"))
        await run.start()
        try:
            async for event in run.events():
                if isinstance(event, StderrLine):
                    on_stderr(one_line(event.text))
        finally:
            await run.dispose()
        result = await run.result()
    setup = run._setup
    created = setup is not None and setup.session_id is not None
    error = result.error if result.stop_reason is not SubagentStopReason.COMPLETED else None
    if error is None and not created:
        error = "no session was created"
    record = describe(setup, error) if setup is not None else _nothing(error)
    return record, created and error is None


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


def text_report(name: str, record: dict[str, Any]) -> str:
    """The probe for people: every string from the agent shown literally, on one line."""
    lines = [f"=== {one_line(name)} ==="]
    agent = record["agent"]
    if agent:
        title = f' "{one_line(agent["title"])}"' if agent.get("title") else ""
        version = f" {one_line(agent['version'])}" if agent.get("version") else ""
        lines.append(f"agent: {one_line(agent['name'])}{title}{version}")
    if record["protocol_version"] is not None:
        lines.append(f"protocol version: {record['protocol_version']}")
    sessions = record["agent_capabilities"].get("sessionCapabilities") or {}
    if record["protocol_version"] is not None:
        lines.append("session/close: " + ("advertised" if "close" in sessions else "not advertised"))
    modes = record["modes"]
    if modes["available"]:
        marked = [f"{one_line(m)}*" if m == modes["current"] else one_line(m) for m in modes["available"]]
        lines.append("modes: " + " ".join(marked) + "   (* current)")
    for option in record["config_options"]:
        values = [f"{one_line(v)}*" if v == option["current"] else one_line(v) for v in option["values"]]
        category = f" [{one_line(option['category'])}]" if option.get("category") else ""
        lines.append(f"option {one_line(option['id'])}{category}: " + " ".join(values))
    if record["auth_methods"]:
        lines.append("login methods:")
    for method in record["auth_methods"]:
        kind = f" [{one_line(method['type'])}]" if method.get("type") else ""
        variables = f" (set {', '.join(map(one_line, method['vars']))})" if method.get("vars") else ""
        about = f": {one_line(method['description'])}" if method.get("description") else ""
        lines.append(f"  {one_line(method['id'])}{kind}: {one_line(method['name'])}{variables}{about}")
    if record["error"]:
        lines.append(f"error: {one_line(record['error'])}")
    return "\n".join(lines) + "\n"
