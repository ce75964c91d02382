"""A protocol trace is a bug report: `acp-tui replay` plays it back, and the run comes out the same."""

from __future__ import annotations

import sys
from pathlib import Path

from acp_tui import AcpProviderConfig, AcpSubagentProvider, SubagentRequest
from acp_tui.lab.replay import replay_argv
from tests.helpers import SCRIPTED_AGENT, read_trace


async def run(args: list[str], trace_dir: Path | None = None) -> tuple[object, str | None]:
    config = AcpProviderConfig(
        command=sys.executable,
        args=args,
        permission_policy="allow",
        trace_dir=str(trace_dir) if trace_dir else None,
    )
    handle = await AcpSubagentProvider(config).start(SubagentRequest("replay me"))
    return await handle.result(), handle.trace_path


async def test_a_trace_replays_to_the_same_result(tmp_path: Path) -> None:
    original, trace = await run(
        [
            SCRIPTED_AGENT,
            "text=a traced answer",
            "chunks=5",
            "hidden=1",
            "permission=normal",
            "stop=max_tokens",
        ],
        trace_dir=tmp_path,
    )
    assert trace is not None
    methods = [e["frame"].get("method") for e in read_trace(trace) if e["dir"] == "out"]
    assert methods[:3] == ["initialize", "session/new", "session/prompt"]

    replayed, _ = await run([*replay_argv(trace)[1:], "--speed", "0"])
    for field in ("stop_reason", "output", "hidden"):
        assert getattr(replayed, field) == getattr(original, field), field
    assert [p.decision for p in replayed.permissions] == [p.decision for p in original.permissions]  # type: ignore[attr-defined]
