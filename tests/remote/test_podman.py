"""Agents in a container, for real: `podman exec -i` into a container of an image built here from a
directory (tests/remote/containers.py), our shim inside around the agent. The same cases as over
ssh where a container has them: the answer, the env, cancel, the client or acp-tui killed, a
container that is not there, a sandbox it cannot have. (Docker's client takes the same argv; no
Docker daemon runs here.)"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from acp_tui import AcpProviderConfig, AcpSubagentProvider, SubagentRequest
from acp_tui.core.model import OutputDelta, StderrLine, SubagentStopReason
from tests.helpers import git
from tests.remote.containers import Container, container, python_image
from tests.remote.support import (
    FAR_CREDENTIAL,
    acp_tui,
    agents_toml,
    all_cmdlines,
    await_gone,
    sigkill_acp_tui_amid,
    worktree_round_trip,
)


@pytest.fixture(scope="module")
def image() -> Iterator[str]:
    with python_image() as name:
        yield name


@pytest.fixture(scope="module")
def box(image: str) -> Iterator[Container]:
    with container(image) as made:
        yield made


@pytest.fixture(autouse=True)
def nothing_left_in_the_box(box: Container) -> Iterator[None]:
    yield
    left = box.processes()
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    assert not left, f"processes left running in the container: {left}"


def in_box(box: Container, *options: str, **fields: Any) -> AcpProviderConfig:
    """The scripted agent in the container, with `options` (see tests/scripted_agent.py)."""
    return AcpProviderConfig(
        command="python3",
        args=["/far/scripted_agent.py", *options],
        remote=box.url,
        term_grace=0.3,
        cancel_grace=0.5,
        **fields,
    )


async def first_chunk(run: Any) -> None:
    async for event in run.events():
        if isinstance(event, OutputDelta):
            return
    raise AssertionError("the run ended without a chunk")


async def test_the_answer_streams_and_stderr_comes_back(box: Container) -> None:
    config = in_box(box, "chunks=3", "delay=0.2", "text=one two three", "stderr=hello from the box")
    run = await AcpSubagentProvider(config).start(SubagentRequest(prompt="hi"))
    events = [event async for event in run.events()]
    result = await run.result()
    assert result.stop_reason is SubagentStopReason.COMPLETED, result.error
    streamed = [e.text for e in events if isinstance(e, OutputDelta)]  # (how many joined: up to timing)
    assert len(streamed) > 1 and "".join(streamed) == result.output == "one two three"
    assert StderrLine("hello from the box") in events
    assert run.cwd == "/"  # no remote_cwd: the container's working directory, as the shim said
    assert box.last_end() == {"why": "exit", "ended_by": "exit", "code": 0}


async def test_env_travels_inside_the_channel_scrubbed_and_in_no_argv(box: Container) -> None:
    secret = "preset-secret-5d1e"
    dump = box.folder / "env.json"
    config = in_box(box, "env_dump=/far/env.json", "forever=1", env={"PRESET_API_KEY": secret})
    run = await AcpSubagentProvider(config).start(SubagentRequest(prompt="hi"))
    try:
        await first_chunk(run)
        cmdlines = all_cmdlines()
    finally:
        await run.dispose()
    assert not [line for line in cmdlines if secret.encode() in line]
    env = json.loads(dump.read_text())["env"]
    assert env["PRESET_API_KEY"] == secret
    assert FAR_CREDENTIAL[0] not in env  # the container's own credential: scrubbed in there


async def test_cancel_asks_first_then_ends_the_group_in_the_container(box: Container) -> None:
    config = in_box(box, "forever=1", "wrapper=1", "on_cancel=ignore", "record=/far/received.jsonl")
    run = await AcpSubagentProvider(config).start(SubagentRequest(prompt="hi"))
    await first_chunk(run)
    await run.dispose("cancelled by the test")
    result = await run.result()
    assert result.stop_reason is SubagentStopReason.ABORTED and result.error == "cancelled by the test"
    assert box.processes() == []  # gone when dispose returns
    methods = [
        json.loads(line).get("method") for line in (box.folder / "received.jsonl").read_text().splitlines()
    ]
    assert "session/cancel" in methods
    assert box.last_end()["why"] == "kill-line"


async def test_the_client_killed_ends_the_run_error_and_the_group(box: Container) -> None:
    """`podman exec` gone (the link, for a container): the shim hears no more and ends its group."""
    run = await AcpSubagentProvider(in_box(box, "forever=1", "wrapper=1")).start(SubagentRequest(prompt="hi"))
    await first_chunk(run)
    assert run.pid is not None
    os.kill(run.pid, signal.SIGKILL)  # the client, here
    await asyncio.to_thread(await_gone, box.processes)
    assert box.last_end()["why"] in ("end-of-input", "hangup", "heartbeat")
    result = await run.result()
    assert result.stop_reason is SubagentStopReason.ERROR
    assert result.error == f"lost the link to {box.where} (podman was killed by signal 9)"
    assert result.output  # the partial answer is kept


def test_sigkill_of_acp_tui_ends_the_group_in_the_container(box: Container, tmp_path: Path) -> None:
    config = agents_toml(
        tmp_path, "boxed", ["python3", "/far/scripted_agent.py", "forever=1", "wrapper=1"], box.url
    )
    sigkill_acp_tui_amid(config, box.processes, 3)  # once the shim, the wrapper and its grandchild run
    assert box.last_end()["why"] in ("end-of-input", "hangup", "heartbeat")


async def test_a_container_that_is_not_there_names_it_and_the_clients_message(box: Container) -> None:
    config = replace(in_box(box), remote="podman://acp-tui-no-such-box")
    result = await (await AcpSubagentProvider(config).start(SubagentRequest(prompt="hi"))).result()
    assert result.stop_reason is SubagentStopReason.ERROR
    assert result.error == (
        "could not reach podman:acp-tui-no-such-box: Error: no container with name or ID "
        '"acp-tui-no-such-box" found: no such container'
    )


async def test_without_bwrap_in_the_container_nothing_runs(box: Container) -> None:
    config = in_box(box, "env_dump=/far/confined.json", sandbox="workspace", cwd="/tmp")
    result = await (await AcpSubagentProvider(config).start(SubagentRequest(prompt="hi"))).result()
    assert result.stop_reason is SubagentStopReason.ERROR
    assert result.error == (
        f"{box.where}: sandbox: bubblewrap (bwrap) is not installed (Debian/Ubuntu: apt install bubblewrap), "
        'or set sandbox = "none"'
    )
    assert not (box.folder / "confined.json").exists()  # never unconfined instead


def test_worktree_round_trip_in_the_container(box: Container, tmp_path: Path) -> None:
    """The worktree is made in the container, in remote_cwd's checkout; its diff lands in the local
    record, and `apply` applies it here."""
    repo = box.folder / "repo"
    repo.mkdir()
    (repo / "README").write_text("boxed checkout\n")
    for argv in (["init", "-q", "-b", "main"], ["add", "README"], ["commit", "-q", "-m", "base"]):
        git(repo, *argv)
    here = tmp_path / "here"
    subprocess.run(["git", "clone", "-q", str(repo), str(here)], check=True, capture_output=True)
    argv = ["python3", "/far/trying_agent.py"]
    config = agents_toml(tmp_path, "boxed", argv, box.url, remote_cwd="/far/repo")
    record = worktree_round_trip(config, here)
    assert record["remote"] == box.url
    assert record["worktree"].startswith("/root/.cache/acp-tui/worktrees/")  # in the container
    assert not (repo / "made-there.txt").exists()  # its checkout untouched
    # Its worktree lived as long as the run that made it: a follow-up of the record says so.
    again = acp_tui(
        config, "run", "--continue", str(tmp_path / "records.jsonl"), "--prompt", "more", "--format", "json"
    )
    assert again.returncode == 1
    assert (
        json.loads(again.stdout)["error"] == f"cannot continue: its worktree was on the far side of {box.url}"
    )
