"""`acp-tui probe` for a Codex preset: start `codex app-server`, open a thread kept in memory only
(nothing is written to Codex's home) in an empty temporary directory, list the models the
app-server offers (`model/list`), and dispose it. No turn is started.

The record has the ACP probe's keys: the models are its one config option, `model` (category
`model`), the thread's model its current value."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from acp_tui.codex import frames
from acp_tui.codex.peer import Peer
from acp_tui.codex.run import CodexSubagentRun
from acp_tui.core.model import ConfigOptionInfo, SubagentStopReason
from acp_tui.runs.probe import probe_record, probed, run_keys
from acp_tui.runs.talk import Outcome

if TYPE_CHECKING:
    from acp_tui.settings.provider_config import AcpProviderConfig

MAX_PAGES = 20  # of `model/list`: a server paging without end is cut here


class ProbeRun(CodexSubagentRun):
    """A run whose turn is never taken: its thread is opened, its models listed."""

    ephemeral = True
    models: tuple[str, ...] = ()

    async def prompt(self, peer: Peer) -> Outcome:
        models: list[str] = []
        cursor: Any = None
        for _ in range(MAX_PAGES):
            with self.deadlines.handshake_step():  # an app-server that never answers ends the probe
                page = frames.mapping(await peer.request("model/list", {"cursor": cursor}))
            models += [m["id"] for m in frames.objects(page.get("data")) if isinstance(m.get("id"), str)]
            cursor = page.get("nextCursor")
            if not isinstance(cursor, str):
                break
        self.models = tuple(models)
        return SubagentStopReason.COMPLETED, None


async def describe_codex(
    config: AcpProviderConfig, on_stderr: Callable[[str], object] = lambda _: None
) -> tuple[dict[str, Any], bool]:
    """The probe's record of the app-server, and whether its thread was opened."""
    run, result, error = await probed(ProbeRun, config, on_stderr)
    opened = run.thread.session_id is not None
    if error is None and not opened:
        error = "no thread was opened"
    current = run.thread.options.get("model", "")
    offered = [ConfigOptionInfo("model", "Model", "model", current, run.models)] if run.models else []
    record = probe_record(result.agent, error, offered=run.guard.json(offered))
    return {**record, **run_keys(config)}, opened and error is None
