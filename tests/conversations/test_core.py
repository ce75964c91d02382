"""Continuing an agent's session in a fresh child, and spares (warm starts), in the core: a stdlib
agent that keeps its sessions in a folder, over real stdio."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

from acp_tui import AcpProviderConfig, AcpSubagentProvider, SubagentRequest, SubagentStopReason
from acp_tui.core.model import SubagentResult
from acp_tui.process.group import group_alive

AGENT = str(Path(__file__).resolve().parent.parent / "sessions_agent.py")


def agent(store: Path, **options: object) -> AcpProviderConfig:
    args = [AGENT, f"store={store}", *(f"{key}={value}" for key, value in options.items())]
    return AcpProviderConfig(command=sys.executable, args=args, name="kept", cancel_grace=0.5, term_grace=0.3)


async def turn(config: AcpProviderConfig, prompt: str, session_id: str | None = None) -> SubagentResult:
    run = await AcpSubagentProvider(config).start(SubagentRequest(prompt=prompt, session_id=session_id))
    return await asyncio.wait_for(run.result(), 20)


@pytest.mark.parametrize("offers", ["resume", "load", "both"])
async def test_a_follow_up_in_a_fresh_child_continues_the_agents_session(tmp_path: Path, offers: str) -> None:
    config = agent(tmp_path / "sessions", offers=offers)
    first = await turn(config, "remember the colour blue")
    assert first.stop_reason is SubagentStopReason.COMPLETED, first.error
    assert first.session_id and first.continuation == ("load" if offers == "load" else "resume")
    second = await turn(config, "which colour?", session_id=first.session_id)
    assert second.stop_reason is SubagentStopReason.COMPLETED, second.error
    assert second.output == "turn 2: which colour? (after: remember the colour blue)"
    assert second.session_id == first.session_id
    if offers == "load":  # the replayed history is consumed, counted, never part of the answer
        assert second.hidden.get("history") == 2
    else:
        assert "history" not in second.hidden


async def test_an_agent_that_offers_neither_is_not_prompted(tmp_path: Path) -> None:
    config = agent(tmp_path / "sessions", offers="none")
    first = await turn(config, "hello")
    assert first.continuation is None
    second = await turn(config, "again", session_id=first.session_id)
    assert second.stop_reason is SubagentStopReason.ERROR
    assert second.error == "cannot continue: kept offers neither session/resume nor session/load"
    assert second.output == ""


async def test_a_session_the_agent_does_not_know_ends_error(tmp_path: Path) -> None:
    result = await turn(agent(tmp_path / "sessions"), "again", session_id="kept-nosuchsession")
    assert result.stop_reason is SubagentStopReason.ERROR and "Resource not found" in (result.error or "")


@pytest.mark.parametrize("presession", [False, True])
async def test_a_spare_taken_after_its_start_answers_at_once(tmp_path: Path, presession: bool) -> None:
    config = agent(tmp_path / "sessions", start_delay=1.5)
    provider = AcpSubagentProvider(config)
    spare = await provider.prepare(cwd=str(tmp_path), presession=presession)
    await asyncio.wait_for(spare.ready.wait(), 20)  # the agent's own start-up: what a warm start hides
    assert spare.child is not None
    started = spare.child.leader.pid
    run = spare.take(SubagentRequest(prompt="quick", cwd=str(tmp_path)))
    result = await asyncio.wait_for(run.result(), 20)
    assert result.stop_reason is SubagentStopReason.COMPLETED, result.error
    assert result.output == "turn 1: quick" and run.warm
    assert run.pid == started  # the process whose 1.5 s start was paid before the take


async def test_a_spare_serves_one_run_in_its_own_cwd_only(tmp_path: Path) -> None:
    spare = await AcpSubagentProvider(agent(tmp_path / "sessions")).prepare(cwd=str(tmp_path))
    with pytest.raises(ValueError, match="cannot run in"):
        spare.take(SubagentRequest(prompt="x", cwd="/"))
    run = spare.take(SubagentRequest(prompt="x", cwd=str(tmp_path)))
    with pytest.raises(ValueError, match="not a spare"):
        spare.take(SubagentRequest(prompt="y", cwd=str(tmp_path)))
    await asyncio.wait_for(run.result(), 20)


async def test_a_spare_never_taken_is_disposed_with_nothing_left(tmp_path: Path) -> None:
    spare = await AcpSubagentProvider(agent(tmp_path / "sessions")).prepare(cwd=str(tmp_path))
    await asyncio.wait_for(spare.dispose(), 10)
    assert spare.done() and spare.child is not None and not group_alive(spare.child.leader.pid)
    with pytest.raises(ValueError, match="not a spare"):
        spare.take(SubagentRequest(prompt="x", cwd=str(tmp_path)))


async def test_a_spare_whose_agent_exited_while_waiting_is_replaced(tmp_path: Path) -> None:
    from acp_tui.session.warm import Spares, Wanted

    spares = Spares()
    wanted = [Wanted(agent(tmp_path / "sessions"), str(tmp_path))]
    try:
        spares.want(wanted)
        [first] = spares._spares
        assert await asyncio.wait_for(first.ready(), 20)
        assert first.handshake is not None and first.handshake.child is not None
        first.handshake.child.leader.process.kill()  # the agent exits on its own
        await asyncio.wait_for(first.handshake.child.leader.wait_exit(), 10)
        spares.want(wanted)
        [second] = spares._spares
        assert second is not first
        assert await asyncio.wait_for(second.ready(), 20)
        spare = await spares.take(wanted[0].config, str(tmp_path), follow_up=False)
        assert spare is second.handshake and spare is not None
        run = spare.take(SubagentRequest(prompt="warm", cwd=str(tmp_path)))
        assert (await asyncio.wait_for(run.result(), 20)).output == "turn 1: warm"
    finally:
        await asyncio.wait_for(spares.aclose(), 20)


async def test_a_run_that_comes_while_its_spare_is_spawning_takes_it(tmp_path: Path) -> None:
    """Enter at the first frame: the spares were asked for a moment before. The run waits for its
    spare's spawn instead of starting cold beside it (two agents booting for one run)."""
    from acp_tui.session.warm import Spares, Wanted

    spares = Spares()
    wanted = [Wanted(agent(tmp_path / "sessions"), str(tmp_path))]
    try:
        spares.want(wanted)
        [spare] = spares._spares
        assert spare.handshake is None  # not spawned yet
        taken = await spares.take(wanted[0].config, str(tmp_path), follow_up=False)
        assert taken is not None and taken is spare.handshake and spares._spares == []
        run = taken.take(SubagentRequest(prompt="warm", cwd=str(tmp_path)))
        assert (await asyncio.wait_for(run.result(), 20)).output == "turn 1: warm"
    finally:
        await asyncio.wait_for(spares.aclose(), 20)
