"""Issue 16, "descendants stay ours": we are a child subreaper, so a descendant whose parent died is
adopted by us and found by ancestry, whatever its environment says or hides; as an unprivileged
supervisor (the test's own user, when it runs as root) a descendant that calls setsid() and then
prctl(PR_SET_DUMPABLE, 0) hides its environment, marks included, and must still end with its run,
and with the watchdog when the supervisor dies. What we adopt we reap; nothing else."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from acp_tui import AcpSubagentProvider, SubagentRequest, SubagentStopReason
from acp_tui.process.watchdog import WATCH_EVERY
from tests.helpers import scripted
from tests.hostile.support import eventually
from tests.sandbox.procs import alive, by_command_line, zombie_children
from tests.sandbox.support import (
    User,
    make_user,
    outside_tmp,
    read_json_line,
    remove_user,
    supervise_as,
    tries,
    trying,
)

S = SubagentStopReason


@pytest.fixture(scope="module")
def unprivileged() -> Iterator[User]:
    user = make_user()
    try:
        yield user
    finally:
        remove_user(user)


def group_and_session(pid: int) -> tuple[int, ...]:
    """A process's group and session, as its stat says (a zombie's too)."""
    with open(f"/proc/{pid}/stat", "rb") as f:
        return tuple(int(field) for field in f.read().rsplit(b")", 1)[1].split()[2:4])


def ppid_of(pid: int) -> int:
    with open(f"/proc/{pid}/stat", "rb") as f:
        return int(f.read().rsplit(b")", 1)[1].split()[1])


@pytest.mark.parametrize("hidden", [False, True], ids=["shown", "hidden"])
async def test_an_orphan_is_adopted_by_us_ended_with_its_run_and_reaped(tmp_path: Path, hidden: bool) -> None:
    tag = f"acp-tui-orphan-{uuid.uuid4().hex}"
    how = ["orphan", "hidden"] if hidden else ["orphan"]
    prompt = tries(["daemon", tag, str(tmp_path / "ready"), how], ["hold"])
    run = await AcpSubagentProvider(trying(sandbox="none")).start(SubagentRequest(prompt, cwd=str(tmp_path)))
    await eventually(lambda: len(by_command_line(tag)) == 1, what="the orphan")
    (orphan,) = by_command_line(tag)
    assert ppid_of(orphan) == os.getpid()  # adopted: we are its subreaper, not init
    await run.dispose("stop")
    assert (await run.result()).stop_reason is S.ABORTED
    assert not alive(orphan)
    assert orphan not in zombie_children()  # and waited for


async def test_the_dead_we_adopted_from_a_run_are_reaped_when_it_ends() -> None:
    """`orphan=1`: the launcher exits at once and its child, the real agent, is adopted by us; it
    exits by itself at the end of stdin."""
    run = await AcpSubagentProvider(scripted(orphan=1, text="done")).start(SubagentRequest("go"))
    result = await run.result()
    assert result.stop_reason is S.COMPLETED and result.output == "done"
    # Only the run's own dead count: an earlier test's stray may die (and wait for us) meanwhile.
    assert run.pid is not None and not [pid for pid in zombie_children() if run.pid in group_and_session(pid)]


async def test_a_run_that_ends_by_itself_scans_the_machines_processes_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Its end is checked by one scan of /proc (nothing of the run left), and what we adopted is
    looked for among our own children: at 64 runs ending together, each scan of every process of
    the machine (which the other runs fill) made ending cost more per run the more runs there were."""
    from acp_tui.process import group

    scans: list[int] = []
    table = group.process_table
    monkeypatch.setattr(group, "process_table", lambda: scans.append(1) or table())
    run = await AcpSubagentProvider(scripted(text="done")).start(SubagentRequest("go"))
    assert (await run.result()).stop_reason is S.COMPLETED
    assert len(scans) == 1


async def test_reaping_never_takes_the_exit_status_of_a_child_someone_else_waits_for(tmp_path: Path) -> None:
    """Children in sessions of their own that are not the run's (a program hosting the core may
    have some) keep their exit status for their owner: one dead and not yet waited for, one live."""
    go = tmp_path / "go"
    # Popen, not asyncio: nothing waits for it, so it stays a zombie until we do.
    dead = subprocess.Popen([sys.executable, "-c", "raise SystemExit(7)"], start_new_session=True)  # noqa: ASYNC220
    waiting = "import os, sys, time\nwhile not os.path.exists(sys.argv[1]): time.sleep(0.01)\nsys.exit(9)"
    live = await asyncio.create_subprocess_exec(
        sys.executable, "-c", waiting, str(go), start_new_session=True
    )
    await eventually(lambda: dead.pid in zombie_children(), what="the first to be dead")
    tag = f"acp-tui-orphan-{uuid.uuid4().hex}"
    prompt = tries(["daemon", tag, str(tmp_path / "ready"), ["orphan", "hidden"]], ["hold"])
    run = await AcpSubagentProvider(trying(sandbox="none")).start(SubagentRequest(prompt, cwd=str(tmp_path)))
    await eventually(lambda: len(by_command_line(tag)) == 1, what="the orphan")
    await run.dispose("stop")
    go.touch()
    assert await asyncio.wait_for(live.wait(), 10) == 9
    assert dead.wait(5) == 7


# As an unprivileged supervisor: what hides its environment is still ours ---------------------------


@pytest.mark.parametrize("how", ["child", "orphan"])
def test_as_an_unprivileged_user_a_descendant_hiding_its_environment_ends_with_its_run(
    unprivileged: User, how: str
) -> None:
    tag = f"acp-tui-hidden-{uuid.uuid4().hex}"
    with outside_tmp("acp-tui-user-", owner=unprivileged) as home:
        ready = home / "ready"
        steps = [["daemon", tag, str(ready), ["hidden", *(["orphan"] if how == "orphan" else [])]], ["hold"]]
        job = {"prompt": tries(*steps), "cwd": str(home), "ready": str(ready), "tag": tag}
        supervisor = supervise_as(unprivileged, {**job, "sandbox": "none", "then": "dispose"}, home=home)
        try:
            report = read_json_line(supervisor)
            (daemon,) = report["daemons"]
            assert daemon["readable"] is False  # marks and all: not ours to read
            if how == "orphan":
                assert daemon["ppid"] == report["supervisor"]  # adopted
            ending = read_json_line(supervisor)
            assert ending["stop_reason"] == "aborted"
            assert ending["zombies"] == []
            assert supervisor.wait(10) == 0
            assert not alive(daemon["pid"])
        finally:
            _end(supervisor)


@pytest.mark.parametrize("how", ["child", "orphan"])
def test_as_an_unprivileged_user_the_watchdog_ends_a_hidden_descendant_when_the_supervisor_dies(
    unprivileged: User, how: str
) -> None:
    tag = f"acp-tui-hidden-{uuid.uuid4().hex}"
    with outside_tmp("acp-tui-user-", owner=unprivileged) as home:
        ready = home / "ready"
        steps = [["daemon", tag, str(ready), ["hidden", *(["orphan"] if how == "orphan" else [])]], ["hold"]]
        job = {"prompt": tries(*steps), "cwd": str(home), "ready": str(ready), "tag": tag}
        supervisor = supervise_as(unprivileged, {**job, "sandbox": "none", "then": "hang"}, home=home)
        try:
            (daemon,) = read_json_line(supervisor)["daemons"]
            assert daemon["readable"] is False
            # The watchdog notes what our death could hide every WATCH_EVERY seconds: its contract
            # is a descendant older than that, which two of its looks surely saw. (A child's
            # parent, the agent, may end at our death before the watchdog looks: then only the
            # note names it.)
            time.sleep(2 * WATCH_EVERY)
            supervisor.kill()
            supervisor.wait(10)
            while alive(daemon["pid"]):  # the watchdog ends it; the test's timeout is the only clock
                time.sleep(0.01)
        finally:
            _end(supervisor)


def _end(process: subprocess.Popen[str]) -> None:
    if process.poll() is None:
        process.kill()
    process.wait(5)
