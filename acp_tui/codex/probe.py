"""`acp-tui probe` for a Codex preset: start `codex app-server`, open a thread kept in memory only
(nothing is written to Codex's home) in an empty temporary directory, list the models the
app-server offers (`model/list`), and dispose it. No turn is started.

The record has the ACP probe's keys: the models are its one config option, `model` (category
`model`), the thread's model its current value."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from acp_tui.acp.probe import probe_run, sandbox_keys
from acp_tui.codex import frames
from acp_tui.codex.peer import Peer
from acp_tui.codex.run import CodexSubagentRun
from acp_tui.core.model import SubagentStopReason
from acp_tui.runs.base import Outcome
from acp_tui.settings.provider_config import AcpProviderConfig

MAX_PAGES = 20  # of `model/list`: a server paging without end is cut here


class ProbeRun(CodexSubagentRun):
    """A run whose turn is never taken: its thread is opened, its models listed."""

    ephemeral = True
    models: list[str] | None = None

    async def prompt(self, peer: Peer) -> Outcome:
        models: list[str] = []
        cursor: Any = None
        for _ in range(MAX_PAGES):
            page = frames.mapping(await peer.request("model/list", {"cursor": cursor}))
            models += [m["id"] for m in frames.objects(page.get("data")) if isinstance(m.get("id"), str)]
            cursor = page.get("nextCursor")
            if not isinstance(cursor, str):
                break
        self.models = models
        return SubagentStopReason.COMPLETED, None


async def describe_codex(
    config: AcpProviderConfig, on_stderr: Callable[[str], object] = lambda _: None
) -> tuple[dict[str, Any], bool]:
    """The probe's record of the app-server, and whether its thread was opened."""
    run, result = await probe_run(ProbeRun, config, on_stderr)
    opened = run.thread.id is not None
    error = result.error if result.stop_reason is not SubagentStopReason.COMPLETED else None
    if error is None and not opened:
        error = "no thread was opened"
    options = []
    if run.models:
        current = run.thread.options.get("model", "")
        options.append(
            {"id": "model", "name": "Model", "category": "model", "current": current, "values": run.models}
        )
    record = {
        "agent": dataclasses.asdict(result.agent) if result.agent else None,
        "protocol_version": None,
        "agent_capabilities": {},
        "auth_methods": [],
        "modes": {"current": None, "available": []},
        "config_options": run.guard.json(options),
        "error": error,
    }
    return record | sandbox_keys(config), opened and error is None
