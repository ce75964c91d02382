"""Issue 17: each agent confined to its workspace by bubblewrap.

A standard-library agent (trying_agent.py) tries, over real stdio, what a confined agent must not
do; where it helps, the same tries unconfined show that each would have worked. Then the error
paths (no bwrap, bwrap refusing) and every way a run ends, with a daemon inside that ignores SIGTERM.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from acp_tui import AcpProviderConfig, AcpSubagentProvider, SubagentRequest, Subagents, SubagentStopReason
from acp_tui.process.sandbox import FAILED, NOT_INSTALLED
from acp_tui.settings import paths
from tests.helpers import our_live_processes
from tests.hostile.support import eventually
from tests.sandbox.procs import alive, by_command_line
from tests.sandbox.support import (
    TRYING_AGENT,
    User,
    acp_tui_run,
    answer,
    need_bwrap,
    outcomes,
    outside_tmp,
    read_json_line,
    supervise_as,
    tries,
    trying,
)

S = SubagentStopReason
REFUSAL = (
    "bwrap: No permissions to creating new namespace, likely because the kernel does not allow "
    "non-privileged user namespaces."
)


@pytest.fixture
def confined() -> None:
    need_bwrap()


def daemon_step(tag: str, ready: Path, *how: str) -> list[Any]:
    return ["daemon", tag, str(ready), list(how)]


# What it may read and write ---------------------------------------------------------------------


@pytest.mark.usefixtures("confined")
async def test_its_home_is_empty_and_read_only(tmp_path: Path) -> None:
    with outside_tmp("acp-tui-home-") as home:
        (home / ".ssh").mkdir()
        (home / ".ssh" / "id_ed25519").write_text("PRIVATE KEY")
        (home / "notes.txt").write_text("notes")
        steps = [
            ("read", f"{home}/.ssh/id_ed25519"),
            ("read", f"{home}/notes.txt"),
            ("write", f"{home}/notes.txt"),
            ("write", f"{home}/new.txt"),
        ]
        env = {"HOME": str(home)}
        inside = await answer(trying(env=env), steps, tmp_path)
        plain = await answer(trying(sandbox="none", env=env), steps, tmp_path)
        assert (home / "notes.txt").read_text() == "notes" + "written by the agent\n"  # by the plain run
    assert plain == ["ok:PRIVATE KEY", "ok:notes", "ok", "ok"]
    assert inside == ["error:ENOENT", "error:ENOENT", "error:EROFS", "error:EROFS"]


@pytest.mark.usefixtures("confined")
async def test_a_writable_home_still_hides_its_credentials_and_sandbox_hidden_hides_more(
    tmp_path: Path,
) -> None:
    """Deeper mounts win: a hidden ~/.ssh inside a writable home, a hidden file inside the cwd."""
    with outside_tmp("acp-tui-home-") as home:
        (home / ".ssh").mkdir()
        (home / ".ssh" / "id_ed25519").write_text("PRIVATE KEY")
        (tmp_path / "secret.env").write_text("TOKEN=1")
        config = trying(
            env={"HOME": str(home)}, sandbox_writable=["~"], sandbox_hidden=[f"{tmp_path}/secret.env"]
        )
        steps = [("write", f"{home}/notes.txt"), ("read", f"{home}/.ssh/id_ed25519"), ("read", "secret.env")]
        assert await answer(config, steps, tmp_path) == ["ok", "error:ENOENT", "error:EACCES"]
        assert (home / "notes.txt").exists()
    assert (tmp_path / "secret.env").read_text() == "TOKEN=1"


def test_the_preset_keys_reach_the_run_and_a_bad_one_is_one_line() -> None:
    from acp_tui.settings.load import parse_settings
    from acp_tui.settings.schema import ConfigError

    raw = {
        "name": "a",
        "command": "x",
        "sandbox": "workspace",
        "sandbox_writable": ["~/.claude"],
        "sandbox_readable": ["~/.gitconfig"],
        "sandbox_hidden": ["~/.npmrc"],
        "sandbox_sockets": ["/run/user/1000/bus"],
        "sandbox_network": False,
    }
    config = parse_settings({"agent": [raw]}, label="t").presets[0].provider_config()
    assert (
        config.sandbox,
        config.sandbox_writable,
        config.sandbox_readable,
        config.sandbox_hidden,
        config.sandbox_sockets,
        config.sandbox_network,
    ) == ("workspace", ("~/.claude",), ("~/.gitconfig",), ("~/.npmrc",), ("/run/user/1000/bus",), False)
    for key, value, says in (
        ("sandbox", "yes", '"sandbox" must be "none" or "workspace"'),
        ("sandbox_writable", "~/.claude", '"sandbox_writable" must be a list of paths'),
        ("sandbox_readable", [1], '"sandbox_readable" must be a list of paths'),
        ("sandbox_sockets", "/run/x.sock", '"sandbox_sockets" must be a list of paths of unix sockets'),
        (
            "sandbox_network",
            ["https://x.com"],
            '"sandbox_network" must be true, false or a list of host names (api.example.com, '
            "*.example.com, an IP address)",
        ),
    ):
        with pytest.raises(ConfigError) as raised:
            parse_settings({"agent": [{"name": "a", "command": "x", key: value}]}, label="t")
        assert str(raised.value) == f't: agent "a": {says}'


@pytest.mark.usefixtures("confined")
async def test_it_sees_its_cwd_a_private_tmp_and_what_its_preset_opens_only(tmp_path: Path) -> None:
    in_tmp = Path(f"/tmp/acp-tui-sandbox-{uuid.uuid4().hex}")
    with outside_tmp("acp-tui-work-") as work:
        cwd, other, extra, seen = (work / name for name in ("cwd", "other", "extra", "seen"))
        home = work / "home"  # acp-tui's own folders, outside /tmp
        with paths.rooted_at(home):
            state = paths.state_dir()
        for folder in (cwd, other, extra, seen, state):
            folder.mkdir(parents=True)
        (other / "c.txt").write_text("another folder of the user's")
        (seen / "d.txt").write_text("opened")
        (state / "trace.jsonl").write_text("another run's trace")
        steps = [
            ("write", f"{cwd}/a.txt"),
            ("write", f"{other}/b.txt"),
            ("read", f"{other}/c.txt"),
            ("write", str(in_tmp)),
            ("read", str(in_tmp)),
            ("write", f"{extra}/c.txt"),
            ("read", f"{state}/trace.jsonl"),
            ("write", "/etc/acp-tui-sandbox"),
            ("read", f"{seen}/d.txt"),
            ("write", f"{seen}/d.txt"),
        ]
        config = trying(sandbox_writable=[str(extra)], sandbox_readable=[str(seen)])
        with paths.rooted_at(home):
            inside = await answer(config, steps, cwd)
        assert inside == [
            "ok",
            "error:ENOENT",  # a folder the preset does not open is not there at all
            "error:ENOENT",
            "ok",
            "ok:written by the agent\n",
            "ok",
            "error:ENOENT",
            "error:EROFS",
            "ok:opened",
            "error:EROFS",
        ]
        assert (cwd / "a.txt").exists() and (extra / "c.txt").exists()
        assert not (other / "b.txt").exists()
    assert not in_tmp.exists()  # its /tmp was its own
    assert not os.path.exists("/etc/acp-tui-sandbox")


# What it may see of other processes -------------------------------------------------------------


@pytest.mark.usefixtures("confined")
async def test_a_sibling_agents_environ_and_ours_are_out_of_reach(tmp_path: Path) -> None:
    secret = "sk-sibling-" + "s" * 24
    sibling = await AcpSubagentProvider(trying(sandbox="none", env={"SIBLING_API_KEY": secret})).start(
        SubagentRequest(tries(["hold"]), cwd=str(tmp_path))
    )
    try:
        assert sibling.pid is not None
        steps = [("environ", sibling.pid), ("signal", sibling.pid), ("environ", os.getpid())]
        plain = await answer(trying(sandbox="none"), steps, tmp_path)
        inside = await answer(trying(), steps, tmp_path)
    finally:
        await sibling.dispose()
    assert f"SIBLING_API_KEY={secret}" in plain[0] and plain[1] == "ok"
    assert inside == ["error:ENOENT", "error:ESRCH", "error:ENOENT"]


@pytest.mark.usefixtures("confined")
async def test_it_sees_its_own_processes_only(tmp_path: Path) -> None:
    (plain,) = await answer(trying(sandbox="none"), [("procs",)], tmp_path)
    (inside,) = await answer(trying(), [("procs",)], tmp_path)
    assert int(plain.removeprefix("ok:")) > 10
    assert inside == "ok:2"  # bwrap's init and the agent


@pytest.mark.usefixtures("confined")
async def test_the_network_is_there_or_not_at_all(tmp_path: Path) -> None:
    with socket.create_server(("127.0.0.1", 0)) as server:
        port = server.getsockname()[1]
        steps = [("connect", "127.0.0.1", port)]
        assert await answer(trying(), steps, tmp_path) == ["ok"]
        assert await answer(trying(sandbox_network=False), steps, tmp_path) == ["error:ECONNREFUSED"]


# Never unconfined by surprise ---------------------------------------------------------------------


async def test_without_bwrap_on_path_the_run_ends_error_and_nothing_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    empty = tmp_path / "bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    marker = tmp_path / "ran"
    run = await AcpSubagentProvider(trying()).start(
        SubagentRequest(tries(["write", str(marker)]), cwd=str(tmp_path))
    )
    result = await run.result()
    assert result.stop_reason is S.ERROR
    assert result.error == NOT_INSTALLED
    assert result.error == (
        "sandbox: bubblewrap (bwrap) is not installed (Debian/Ubuntu: apt install bubblewrap), "
        'or set sandbox = "none"'
    )
    assert run.pid is None and result.exit_code is None and not marker.exists()


async def test_bwrap_refusing_ends_the_run_error_with_its_own_words_and_nothing_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "bwrap").write_text(f"#!/bin/sh\necho '{REFUSAL}' >&2\nexit 1\n")
    (fake / "bwrap").chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake}{os.pathsep}{os.environ['PATH']}")
    marker = tmp_path / "ran"
    run = await AcpSubagentProvider(trying()).start(
        SubagentRequest(tries(["write", str(marker)]), cwd=str(tmp_path))
    )
    result = await run.result()
    assert result.stop_reason is S.ERROR
    assert result.error == f"{FAILED}: {REFUSAL}"
    assert 'or set sandbox = "none"' in result.error
    assert result.exit_code == 1 and not marker.exists()


# Every way a run ends takes what it left inside with it -----------------------------------------


@pytest.mark.usefixtures("confined")
@pytest.mark.parametrize("ending", ["completed", "dispose", "abort", "quit"])
async def test_a_setsid_daemon_that_ignores_sigterm_ends_with_the_run(tmp_path: Path, ending: str) -> None:
    tag = f"acp-tui-daemon-{uuid.uuid4().hex}"
    steps: list[Sequence[Any]] = [daemon_step(tag, tmp_path / "ready", "orphan", "hidden")]
    if ending != "completed":
        steps.append(["hold"])
    subagents = Subagents()
    await subagents.register("confined", AcpSubagentProvider(trying()))
    abort = asyncio.Event()
    run = await subagents.start("confined", SubagentRequest(tries(*steps), cwd=str(tmp_path)), abort=abort)
    if ending == "completed":
        result = await run.result()
        assert result.stop_reason is S.COMPLETED and outcomes(result.output) == ["ok"]
    else:
        await eventually(lambda: len(by_command_line(tag)) == 1, what="the daemon")
        (daemon,) = by_command_line(tag)
        if ending == "dispose":
            await run.dispose("stop")
        elif ending == "abort":
            abort.set()
        else:
            await subagents.aclose()  # what quitting the app does
        result = await run.result()
        assert result.stop_reason is S.ABORTED
        assert not alive(daemon)
    assert by_command_line(tag) == []
    await subagents.aclose()


@pytest.mark.usefixtures("confined")
@pytest.mark.parametrize("sig", [signal.SIGHUP, signal.SIGTERM, signal.SIGKILL], ids=lambda s: s.name)
def test_a_signal_to_acp_tui_run_or_its_death_ends_the_daemon_inside(
    tmp_path: Path, sig: signal.Signals
) -> None:
    tag = f"acp-tui-daemon-{uuid.uuid4().hex}"
    prompt = tries(daemon_step(tag, tmp_path / "ready", "orphan"), ["hold"])
    supervisor = subprocess.Popen(
        acp_tui_run(prompt, tmp_path), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    try:
        deadline = time.monotonic() + 30
        while len(by_command_line(tag)) != 1:
            assert time.monotonic() < deadline and supervisor.poll() is None, "no daemon"
            time.sleep(0.01)
        (daemon,) = by_command_line(tag)
        os.kill(supervisor.pid, sig)
        code = supervisor.wait(10)
        assert code == (-signal.SIGKILL if sig == signal.SIGKILL else 130)
        deadline = time.monotonic() + 1.0  # our own death: the kernel ends the namespace at once
        while (alive(daemon) or our_live_processes()) and time.monotonic() < deadline:
            time.sleep(0.005)
        assert not alive(daemon)
        assert our_live_processes() == []  # the agent, bwrap, the watchdog: all gone
    finally:
        if supervisor.poll() is None:
            supervisor.kill()
        supervisor.wait(5)


# What says it was confined ----------------------------------------------------------------------


@pytest.mark.usefixtures("confined")
def test_the_record_and_the_probe_say_sandbox(tmp_path: Path) -> None:
    agent = f"trying={sys.executable} {TRYING_AGENT}"
    for extra, said in (([], "none"), (["--sandbox"], "workspace")):
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "acp_tui",
                "run",
                *extra,
                "--agent",
                agent,
                "--prompt",
                "[]",
                "--format",
                "json",
            ],
            capture_output=True,
            text=True,
            cwd=tmp_path,
            timeout=60,
        )
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout)["sandbox"] == said
        probe = subprocess.run(
            [sys.executable, "-m", "acp_tui", "probe", *extra, "--agent", agent, "--format", "json"],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert probe.returncode == 0, probe.stderr
        assert json.loads(probe.stdout)["sandbox"] == said


# As an unprivileged user ----------------------------------------------------------------------------


@pytest.mark.usefixtures("confined")
@pytest.mark.parametrize("then", ["dispose", "hang"])
def test_as_an_unprivileged_user_the_sandbox_holds_and_ends_with_its_run_or_its_supervisor(
    unprivileged: User, then: str
) -> None:
    tag = f"acp-tui-daemon-{uuid.uuid4().hex}"
    with outside_tmp("acp-tui-user-", owner=unprivileged) as home:
        work = home / "work"
        (home / ".ssh").mkdir()
        (home / ".ssh" / "id_ed25519").write_text("PRIVATE KEY")
        work.mkdir()
        for path in (home / ".ssh", home / ".ssh" / "id_ed25519", work):
            os.chown(path, unprivileged.uid, unprivileged.gid)
        ready = work / "ready"
        steps = [
            ("read", f"{home}/.ssh/id_ed25519"),
            ("procs",),
            ("write", f"{home}/x"),
            daemon_step(tag, ready, "orphan", "hidden"),
            ["hold"],
        ]
        job = {"prompt": tries(*steps), "cwd": str(work), "ready": str(ready), "tag": tag, "then": then}
        supervisor = supervise_as(unprivileged, job, home=home)
        try:
            # The supervisor names the daemon as it saw it: with `dispose` it goes on to end it at once.
            (found,) = read_json_line(supervisor)["daemons"]
            daemon = found["pid"]
            assert found["readable"] is False  # hidden from its own user
            if then == "dispose":
                ending = read_json_line(supervisor)
                assert ending["stop_reason"] == "aborted"
                assert outcomes(ending["output"]) == ["error:ENOENT", "ok:2", "error:EROFS", "ok"]
                assert supervisor.wait(10) == 0
            else:
                supervisor.kill()
                supervisor.wait(10)
                deadline = time.monotonic() + 1.0
                while alive(daemon) and time.monotonic() < deadline:
                    time.sleep(0.005)
            assert not alive(daemon)
        finally:
            if supervisor.poll() is None:
                supervisor.kill()
            supervisor.wait(5)


async def test_a_confined_demo_follow_up_remembers_its_first_turn(tmp_path: Path) -> None:
    """The demo keeps its sessions in our cache, which a sandbox hides: its presets may write that
    one folder, so a follow-up of a confined demo run resumes it."""
    need_bwrap()
    from dataclasses import replace

    from acp_tui.settings.presets import demo_presets
    from acp_tui.settings.schema import Settings

    [scribe, *_] = demo_presets()
    preset = replace(scribe, args=("-m", "acp_tui.demo.agent", "--persona", "chat"), sandbox="workspace")
    config = Settings(presets=(preset,)).provider_config(preset)
    first = await AcpSubagentProvider(config).start(SubagentRequest(prompt="hello", cwd=str(tmp_path)))
    done = await asyncio.wait_for(first.result(), 30)
    assert done.stop_reason is SubagentStopReason.COMPLETED, done.error
    again = await AcpSubagentProvider(config).start(
        SubagentRequest(prompt="and again", cwd=str(tmp_path), session_id=done.session_id)
    )
    follow = await asyncio.wait_for(again.result(), 30)
    assert follow.stop_reason is SubagentStopReason.COMPLETED, follow.error
    assert "earlier: hello" in follow.output


async def test_a_program_the_sandbox_hides_is_refused_in_one_line(tmp_path: Path) -> None:
    """An agent installed in a folder the sandbox hides (a credential folder, acp-tui's, one of
    `sandbox_hidden`): the run says so, rather than bwrap's "execvp: No such file or directory"."""
    need_bwrap()
    with outside_tmp("acp-tui-tools-") as tools:
        program = tools / "bin" / "agent"
        program.parent.mkdir(parents=True)
        program.write_text("#!/bin/sh\nexit 0\n")
        program.chmod(0o755)
        config = AcpProviderConfig(
            command=str(program), sandbox="workspace", sandbox_hidden=[str(tools)], cwd=str(tmp_path)
        )
        run = await AcpSubagentProvider(config).start(SubagentRequest(prompt="hi"))
        result = await asyncio.wait_for(run.result(), 20)
    assert result.stop_reason is SubagentStopReason.ERROR
    assert result.error == (
        f"sandbox: the agent's program needs {program}, which the sandbox hides (credentials, "
        'acp-tui\'s folders, sandbox_hidden): install it elsewhere, or set sandbox = "none"'
    )
