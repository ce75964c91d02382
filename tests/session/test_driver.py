"""The driver: one lifecycle for the app and `acp-tui run`, ended on every path (issue 18's bugs,
each with the test that failed before its fix). Real children over stdio, real git."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from acp_tui.core.model import SubagentStopReason
from acp_tui.session.attempts import Attempt, Session
from acp_tui.session.driver import SessionDriver
from acp_tui.settings.schema import AgentPreset, Settings
from acp_tui.workspace.git import IsolationError
from acp_tui.workspace.worktrees import Isolation
from tests.containment.support import checkout_with_an_edit, isolated_cache, scratch_tmpdir
from tests.helpers import SCRIPTED_AGENT, our_live_processes

cache_home = pytest.fixture(autouse=True)(isolated_cache)
repo = pytest.fixture(checkout_with_an_edit)
scratch = pytest.fixture(autouse=True)(scratch_tmpdir)


def agent(name: str, cwd: Path | None = None, **options: object) -> AgentPreset:
    import sys

    args = (SCRIPTED_AGENT, *(f"{key}={value}" for key, value in options.items()))
    return AgentPreset(name, sys.executable, args, cwd=str(cwd) if cwd else None)


async def until(condition: object, timeout: float = 20) -> None:
    """Let the driver work until `condition()` holds (polled; fails after `timeout`)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not condition():  # type: ignore[operator]
        assert loop.time() < deadline, "condition not reached in time"
        await asyncio.sleep(0.01)


def driver_for(*presets: AgentPreset) -> tuple[SessionDriver, list[Attempt]]:
    settings = Settings(presets=presets)
    driver = SessionDriver(lambda attempt: settings.provider_config(attempt.preset))
    attempts = Session().new_round("go", list(presets), {p.name: p.policy for p in presets})
    return driver, attempts


async def test_a_cancel_while_the_worktree_is_being_made_spawns_nothing_and_leaves_no_worktree(
    repo: Path,
) -> None:
    driver, [attempt] = driver_for(agent("slow", repo, forever=1))
    attempt.isolated = True
    driver.start(attempt)
    await driver.cancel(attempt)  # still preparing: its worktree is not even asked for yet
    result = await asyncio.wait_for(driver.wait(attempt), 20)
    assert result.stop_reason is SubagentStopReason.ABORTED and attempt.state == "cancelled"
    assert attempt.run is None and not our_live_processes()
    await driver.aclose()
    isolation = driver.isolation
    assert isolation is None or all(w.removed for w in isolation.worktrees)


async def test_a_cancel_while_the_run_spawns_disposes_it(repo: Path) -> None:
    driver, [attempt] = driver_for(agent("forever", repo, forever=1))
    driver.start(attempt)
    await until(lambda: attempt.phase not in ("waiting", "preparing"))
    await driver.cancel(attempt)
    result = await asyncio.wait_for(driver.wait(attempt), 20)
    assert result.stop_reason is SubagentStopReason.ABORTED
    await driver.aclose()
    assert not our_live_processes()


async def test_a_finished_attempts_provider_is_dropped() -> None:
    driver, attempts = driver_for(agent("one"), agent("two"))
    for attempt in attempts:
        driver.start(attempt)
    for attempt in attempts:
        assert (await asyncio.wait_for(driver.wait(attempt), 20)).stop_reason is SubagentStopReason.COMPLETED
    assert not any(f"attempt {attempt.id}" in driver.subagents for attempt in attempts)
    await driver.aclose()


async def test_the_watcher_hears_when_a_run_has_started() -> None:
    """What waits for the runs starting (the app's next spares) hears the end of each start."""
    driver, [attempt] = driver_for(agent("one"))
    phases: list[str] = []
    driver.on_change = lambda changed: phases.append(changed.phase)
    driver.start(attempt)
    await asyncio.wait_for(driver.wait(attempt), 20)
    assert phases == ["preparing", "prompting", "ended"]
    await driver.aclose()


async def test_closing_a_live_isolated_attempt_records_its_change_once_then_removes_it(repo: Path) -> None:
    driver, [attempt] = driver_for(agent("writer", repo, forever=1))
    attempt.isolated = True
    driver.start(attempt)
    await until(lambda: attempt.worktree is not None and attempt.run is not None)
    assert attempt.worktree is not None
    (attempt.worktree.cwd / "made.txt").write_text("made by the agent\n")
    recorded = []
    record = attempt.worktree.record

    async def counted(*args: object, **kwargs: object) -> object:
        recorded.append(1)
        return await record(*args, **kwargs)  # type: ignore[arg-type]

    attempt.worktree.record = counted  # type: ignore[method-assign]
    assert await asyncio.wait_for(driver.close(attempt), 20) is None
    assert recorded == [1]
    assert attempt.worktree.change is not None and attempt.worktree.change.stat is not None
    assert attempt.worktree.change.stat.files == 1 and attempt.worktree.removed
    await driver.aclose()


async def test_quitting_records_each_live_change_before_removing_its_worktree(repo: Path) -> None:
    driver, [attempt] = driver_for(agent("writer", repo, forever=1))
    attempt.isolated = True
    driver.start(attempt)
    await until(lambda: attempt.worktree is not None and attempt.run is not None)
    assert attempt.worktree is not None
    (attempt.worktree.cwd / "made.txt").write_text("made by the agent\n")
    assert await asyncio.wait_for(driver.aclose(), 20) == []
    change = attempt.worktree.change
    assert change is not None and change.error is None and change.stat is not None
    assert change.stat.files == 1 and attempt.worktree.removed


async def test_a_failed_start_of_the_worktrees_is_not_kept(tmp_path: Path, repo: Path) -> None:
    root = tmp_path / "cache" / "worktrees"
    root.parent.mkdir()
    root.write_text("not a folder")  # the cache cannot be had: the first start fails
    isolation = Isolation(root)
    with pytest.raises(IsolationError):
        await isolation.start()
    root.unlink()
    await isolation.start()  # the next isolated round tries again, and works
    await isolation.aclose()
