"""`acp-tui replay`: a recorded run played back as an agent, over real stdio, under any policy.

A run of the demo agent's `pong` persona is recorded once under `allow` (it writes proof.txt);
its trace is then the agent of later runs: same answer, same permission rows, nothing written, and
under another policy the divergence is said and nothing crashes.
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from acp_tui import AcpProviderConfig, AcpSubagentProvider, SubagentRequest, SubagentStopReason
from acp_tui.core.model import StderrLine, SubagentResult
from acp_tui.lab.replay import META_KEY, replay_argv
from tests.helpers import demo, read_trace, unhurried

REPO = Path(__file__).resolve().parents[2]


def replayer(trace: Path | str, *extra: str, policy: str = "allow") -> AcpProviderConfig:
    command, *args = replay_argv(str(trace))
    return AcpProviderConfig(
        command=command,
        args=[*args, *extra],
        permission_policy=policy,
        term_grace=0.3,
        cancel_grace=0.5,
    )


async def run(
    config: AcpProviderConfig, cwd: Path, trace_dir: Path | None = None
) -> tuple[SubagentResult, Any]:
    if trace_dir is not None:
        config = dataclasses.replace(config, trace_dir=str(trace_dir))
    handle = await AcpSubagentProvider(config).start(SubagentRequest("ping", cwd=str(cwd)))
    events = [event async for event in handle.events()]
    return await handle.result(), (events, handle.trace_path)


@pytest.fixture
async def recorded(tmp_path: Path) -> tuple[SubagentResult, Path]:
    """One real run of `pong` under `allow`, traced; its proof.txt removed afterwards."""
    work = tmp_path / "recorded"
    work.mkdir()
    result, (_, trace) = await run(demo("pong", policy="allow"), work, trace_dir=tmp_path / "traces")
    assert result.stop_reason is SubagentStopReason.COMPLETED, result.error
    assert (work / "proof.txt").exists()
    (work / "proof.txt").unlink()
    assert trace is not None
    return result, Path(trace)


def rows(result: SubagentResult) -> list[tuple[Any, ...]]:
    return [(p.title, p.kind, p.options, p.decision, p.option_id, p.rule) for p in result.permissions]


async def test_a_replay_under_the_recorded_policy_is_the_same_run_and_writes_nothing(
    recorded: tuple[SubagentResult, Path], tmp_path: Path
) -> None:
    original, trace = recorded
    work = tmp_path / "recorded"  # the very folder the recorded run wrote its proof in
    result, (events, replay_trace) = await run(replayer(trace, "--speed", "0"), work, tmp_path / "again")

    assert result.stop_reason is SubagentStopReason.COMPLETED, result.error
    assert result.output == original.output == "PONG"
    assert rows(result) == rows(original)
    assert result.hidden == original.hidden
    assert not (work / "proof.txt").exists()  # the replay only says it wrote it
    assert not any("divergence" in e.text for e in events if isinstance(e, StderrLine))
    # No divergence: the prompt's answer is as recorded, without our _meta.
    answer = [e["frame"] for e in read_trace(replay_trace) if e["dir"] == "in" and "stopReason" in str(e)]
    assert answer and META_KEY not in json.dumps(answer[-1])


async def test_a_replay_under_another_policy_reports_the_divergence_and_goes_on(
    recorded: tuple[SubagentResult, Path], tmp_path: Path
) -> None:
    _, trace = recorded
    work = tmp_path / "elsewhere"
    work.mkdir()
    config = replayer(trace, "--speed", "0", policy="reject")
    result, (events, replay_trace) = await run(config, work, tmp_path / "again")

    assert result.stop_reason is SubagentStopReason.COMPLETED, result.error
    assert result.output == "PONG"  # the recorded frames go on
    [record] = result.permissions
    assert (record.decision, record.rule) == ("reject_once", "reject")
    [line] = [e.text for e in events if isinstance(e, StderrLine) and "divergence" in e.text]
    assert '"Write proof.txt"' in line
    assert 'recorded "allow" (allow_once), chosen "reject" (reject_once)' in line
    [answer] = [
        e["frame"] for e in read_trace(replay_trace) if e["dir"] == "in" and "stopReason" in json.dumps(e)
    ]
    [divergence] = answer["result"]["_meta"][META_KEY]["divergences"]
    assert divergence["request"] == "Write proof.txt"
    assert (divergence["recorded"]["kind"], divergence["chosen"]["kind"]) == ("allow_once", "reject_once")
    assert list(work.iterdir()) == []


def synthetic_trace(path: Path, gap: float) -> Path:
    """A recorded run with one long think between two chunks (`gap` seconds)."""
    sid = "s-1"

    def chunk(t: float, text: str) -> dict[str, Any]:
        update = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}}
        frame = {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": sid, "update": update}}
        return {"t": t, "dir": "in", "frame": frame}

    def call(t: float, rid: int, method: str) -> dict[str, Any]:
        return {"t": t, "dir": "out", "frame": {"jsonrpc": "2.0", "id": rid, "method": method, "params": {}}}

    def reply(t: float, rid: int, result: dict[str, Any]) -> dict[str, Any]:
        return {"t": t, "dir": "in", "frame": {"jsonrpc": "2.0", "id": rid, "result": result}}

    entries = [
        call(0.0, 0, "initialize"),
        reply(0.1, 0, {"protocolVersion": 1}),
        call(0.2, 1, "session/new"),
        reply(0.3, 1, {"sessionId": sid}),
        call(0.4, 2, "session/prompt"),
        chunk(0.5, "before "),
        chunk(0.5 + gap, "after"),
        reply(0.6 + gap, 2, {"stopReason": "end_turn"}),
    ]
    path.write_text("".join(json.dumps(e) + "\n" for e in entries))
    return path


@pytest.mark.parametrize(("speed", "at_least"), [("0", 0.0), ("100", 1.0)])
async def test_the_recorded_timing_is_played_and_speed_0_drops_it(
    tmp_path: Path, speed: str, at_least: float
) -> None:
    # 100 s recorded between the chunks: 0 s at --speed 0, 1 s at --speed 100. A speed not applied
    # would pause 60 s (the most a pause lasts), past the test's timeout: no clock of ours decides.
    trace = synthetic_trace(tmp_path / "slow.jsonl", gap=100.0)
    started = time.monotonic()
    handle = await AcpSubagentProvider(replayer(trace, "--speed", speed)).start(SubagentRequest("go"))
    result = await handle.result()
    assert result.stop_reason is SubagentStopReason.COMPLETED, result.error
    assert result.output == "before after"
    assert time.monotonic() - started >= at_least  # the pause was played


async def test_a_cancel_ends_a_replayed_turn_at_once(tmp_path: Path) -> None:
    trace = synthetic_trace(tmp_path / "slow.jsonl", gap=600.0)
    handle = await AcpSubagentProvider(unhurried(replayer(trace))).start(SubagentRequest("go"))
    async for event in handle.events():
        if type(event).__name__ == "OutputDelta":
            break
    await handle.dispose("enough")
    result = await handle.result()
    assert result.stop_reason is SubagentStopReason.ABORTED
    assert result.output == "before "
    assert result.ended_by == "exit"  # the turn ended on the cancel: no grace ran out, no signal


@pytest.mark.parametrize("via", ["module", "command line"])
def test_a_bad_trace_is_one_line_and_status_2(tmp_path: Path, via: str) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"t": 0, "dir": "out", "frame": {}}\nnot json\n')
    argv = replay_argv(str(bad)) if via == "module" else [sys.executable, "-m", "acp_tui", "replay", str(bad)]
    done = subprocess.run(
        argv,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        timeout=30,
        check=False,
    )
    assert done.returncode == 2
    assert done.stdout == ""
    [line] = done.stderr.strip().splitlines()
    assert line.endswith(f"replay: error: {bad} line 2: not JSON"), line


@pytest.mark.parametrize("via", ["module", "command line"])
def test_the_replay_agent_does_not_load_the_sdk(tmp_path: Path, via: str) -> None:
    """It is spawned like any agent, often many at once: it must start as fast as a stdlib one."""
    trace = synthetic_trace(tmp_path / "t.jsonl", gap=0)
    argv = (
        replay_argv(str(trace))
        if via == "module"
        else [sys.executable, "-m", "acp_tui", "replay", str(trace)]
    )
    done = subprocess.run(
        [argv[0], "-X", "importtime", *argv[1:]],
        input="",
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        timeout=30,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    imported = {
        line.rsplit("|", 1)[-1].strip()
        for line in done.stderr.splitlines()
        if line.startswith("import time:")
    }
    assert "acp_tui.lab.trace_file" in imported
    heavy = {name for name in imported if name.split(".")[0] in ("acp", "pydantic", "textual", "rich")}
    assert heavy == set()


async def test_a_question_answered_otherwise_in_a_replay_is_a_divergence(tmp_path: Path) -> None:
    from acp_tui.core.elicitation import ElicitationAnswer, ElicitationAsk
    from tests.helpers import featured

    async def accept(ask: ElicitationAsk) -> ElicitationAnswer:
        return ElicitationAnswer.accept({"name": "web", "region": "eu"})

    work = tmp_path / "work"
    work.mkdir()
    answered = dataclasses.replace(featured(elicit="form", commands="none"), question_handler=accept)
    original, (_, trace) = await run(answered, work, trace_dir=tmp_path / "traces")
    assert [e.action for e in original.elicitations] == ["accept"]
    assert trace is not None
    frames = [e["frame"] for e in read_trace(trace)]
    assert any(f.get("method") == "elicitation/create" for f in frames)  # the trace keeps it

    again = dataclasses.replace(replayer(trace, "--speed", "0"), question_handler=accept)
    same, (events, _) = await run(again, work)
    assert same.output == original.output
    assert not any("divergence" in e.text for e in events if isinstance(e, StderrLine))

    declined, (events, replay_trace) = await run(replayer(trace, "--speed", "0"), work, tmp_path / "again")
    assert declined.output == original.output  # the recorded frames go on
    [line] = [e.text for e in events if isinstance(e, StderrLine) and "divergence" in e.text]
    assert 'divergence at question "Where should this go?"' in line
    assert '"action": "decline"' in line
    [answer] = [
        e["frame"] for e in read_trace(replay_trace) if e["dir"] == "in" and "stopReason" in json.dumps(e)
    ]
    [divergence] = answer["result"]["_meta"][META_KEY]["divergences"]
    assert divergence["recorded"]["action"] == "accept" and divergence["chosen"] == {
        "action": "decline",
        "content": None,
    }
