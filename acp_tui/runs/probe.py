"""What every provider's `acp-tui probe` shares: a run that stops before any prompt, of the agent as
it comes, seen through (its stderr forwarded, then disposed), and the record it is described by
(the ACP probe's keys, then how the agent was run)."""

from __future__ import annotations

import dataclasses
import tempfile
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, TypeVar

from acp_tui.core.model import (
    AgentInfo,
    CommandInfo,
    ConfigOptionInfo,
    StderrLine,
    SubagentRequest,
    SubagentResult,
    SubagentStopReason,
)
from acp_tui.core.text import one_line
from acp_tui.policy.names import FIXED_POLICIES
from acp_tui.process.network import describe_network
from acp_tui.runs.base import RunBase
from acp_tui.runs.provider import RunInputs

if TYPE_CHECKING:
    from acp_tui.settings.provider_config import AcpProviderConfig

R = TypeVar("R", bound=RunBase)


async def probed(
    make: Callable[[RunInputs], R],
    config: AcpProviderConfig,
    on_stderr: Callable[[str], object],
) -> tuple[R, SubagentResult, str | None]:
    """A probe's run of `config` (made by `make`), to its end: the agent as it comes (none of the
    preset's options set), under `reject`, in an empty temporary directory (on the far side, where
    the agent runs: an empty folder of ours would be one more thing to leave behind there), its
    stderr forwarded. The run, its result, and its error unless it completed."""
    config = dataclasses.replace(config, options={})
    with tempfile.TemporaryDirectory(prefix="acp-tui-probe-") as empty:
        cwd = empty if config.remote is None else None
        run = make(RunInputs(config, SubagentRequest(prompt="", cwd=cwd), FIXED_POLICIES["reject"]))
        await run.start()
        try:
            async for event in run.events():
                if isinstance(event, StderrLine):
                    on_stderr(one_line(event.text))
        finally:
            await run.dispose()
    result = await run.result()
    return run, result, result.error if result.stop_reason is not SubagentStopReason.COMPLETED else None


def probe_record(
    agent: AgentInfo | None,
    error: str | None,
    *,
    offered: Iterable[ConfigOptionInfo] = (),
    commands: Iterable[CommandInfo] = (),
    **more: Any,
) -> dict[str, Any]:
    """A probe's record that says nothing ACP-specific (no protocol version, login methods, modes,
    session list or capabilities of ours): the agent, the options and slash commands it offers, the
    error, then `more`."""
    return {
        "agent": dataclasses.asdict(agent) if agent else None,
        "protocol_version": None,
        "agent_capabilities": {},
        "auth_methods": [],
        "modes": {"current": None, "available": []},
        "config_options": options_json(offered),
        "commands": [dataclasses.asdict(command) for command in commands],
        "session_list": False,
        "client_capabilities": {},
        "error": error,
        **more,
    }


def options_json(offered: Iterable[ConfigOptionInfo]) -> list[dict[str, Any]]:
    return [{**dataclasses.asdict(option), "values": list(option.values)} for option in offered]


def run_keys(config: AcpProviderConfig) -> dict[str, Any]:
    """How the probe ran the agent: `sandbox`, `remote`, and when confined, the network the kernel
    it runs on gives it (this one's, or the far side's)."""
    keys: dict[str, Any] = {"sandbox": config.sandbox, "remote": config.remote}
    if config.sandbox == "workspace" and config.remote is None:
        keys["sandbox_network"] = describe_network(config.sandbox_network)
    elif config.sandbox == "workspace":
        from acp_tui.process.link import describe_far_network

        keys["sandbox_network"] = describe_far_network(config.sandbox_network)
    return keys
