"""`acp-tui probe` for an A2A preset: discover the agent card at the preset's `url` (with its
headers) and say what the agent is and offers: its skills, its interfaces, its capabilities. No
message is ever sent.

The record has the ACP probe's keys (no modes, options or login methods: A2A has none of these),
and `description`, `skills` (each: `id`, `name`, `description`, `tags`) and `interfaces` (each:
`url`, `protocol_binding`, `protocol_version`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from acp_tui.a2a.run import A2aSubagentRun
from acp_tui.core.model import SubagentStopReason
from acp_tui.runs.probe import probe_record, probed, run_keys
from acp_tui.runs.talk import Outcome

if TYPE_CHECKING:
    from a2a.client import Client
    from a2a.types import AgentCard

    from acp_tui.settings.provider_config import AcpProviderConfig


class ProbeRun(A2aSubagentRun):
    """A run that stops once it has the agent card: no message is sent."""

    async def prompt(self, client: Client) -> Outcome:
        return SubagentStopReason.COMPLETED, None


async def describe_a2a(
    config: AcpProviderConfig, on_stderr: Callable[[str], object] = lambda _: None
) -> tuple[dict[str, Any], bool]:
    """The probe's record of the agent, and whether its card was found."""
    run, result, error = await probed(ProbeRun, config, on_stderr)
    card = run.card
    record = probe_record(result.agent, error, **(run.guard.json(_card(card)) if card else {}))
    return {**record, **run_keys(config)}, card is not None and error is None


def _card(card: AgentCard) -> dict[str, Any]:
    from google.protobuf.json_format import MessageToDict

    return {
        "agent_capabilities": MessageToDict(card.capabilities),
        "description": card.description,
        "skills": [
            {"id": s.id, "name": s.name, "description": s.description, "tags": list(s.tags)}
            for s in card.skills
        ],
        "interfaces": [
            {"url": i.url, "protocol_binding": i.protocol_binding, "protocol_version": i.protocol_version}
            for i in card.supported_interfaces
        ],
    }
