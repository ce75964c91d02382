"""The sessions an agent keeps (`session/list`): for `acp-tui sessions --agent NAME` and the app's
list of an agent's sessions.

A fresh child is asked, and never opens a session of its own (`session/new` would add one to the
very list asked for): spawn, `initialize`, `session/list` page after page, then it is ended like any
run's child (process group, graces). An agent that does not advertise `session/list` is never sent
it: the answer is one line saying so, as it is for an agent of another provider (A2A, Claude
Code), which is never started for it. What the agent lists is masked like anything it says.
"""

from __future__ import annotations

from collections.abc import Callable

import anyio

from acp_tui.acp.handshake import AcpHandshake
from acp_tui.core.model import AgentSessionInfo
from acp_tui.runs.child import ChildStartError
from acp_tui.runs.deadlines import Deadlines
from acp_tui.settings.provider_config import AcpProviderConfig

Listed = tuple[tuple[AgentSessionInfo, ...], str | None]  # the sessions, or why there are none


async def agent_sessions(
    config: AcpProviderConfig, on_stderr: Callable[[str], None] = lambda _: None, *, provider: str = "acp"
) -> Listed:
    """The sessions the agent of `config` (a preset of `provider`) keeps, or the one line saying
    why none could be listed. It never raises for what the agent does."""
    if provider != "acp":
        return (), f"{config.label} does not list its sessions (it speaks {provider}; session/list is ACP's)"
    link = AcpHandshake(config, config.cwd_for(None))
    link.tail.on_line = on_stderr
    deadlines = Deadlines.of(config)
    try:
        await link.launch()
    except ChildStartError as exc:
        return (), str(exc)
    found: tuple[AgentSessionInfo, ...] = ()
    error: str | None = None
    async with anyio.create_task_group() as group:
        try:
            link.connect()
            link.start_helpers(group)
            await link.initialize(deadlines)
            assert link.setup is not None
            with deadlines.handshake_step():
                found = link.guard.json(await link.setup.list_sessions())
        except Exception as exc:
            error = await link.explain(exc) or f"internal error: {type(exc).__name__}: {exc}"
        finally:
            with anyio.CancelScope(shield=True):
                await link.close(graceful=True, grace=config.cancel_grace, on_step=lambda step: None)
            group.cancel_scope.cancel()
    return found, error
