"""`--sandbox` with a remote preset: confined by bubblewrap on the far side, by the same code as
at home, or refused in one line when the far side has none. A real sshd (tests/remote/support.py)."""

from __future__ import annotations

import json
import os
import pwd
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from acp_tui import AcpProviderConfig, AcpSubagentProvider, SubagentRequest
from acp_tui.core.model import SubagentStopReason
from tests.remote.support import FarHost, far_folder, far_user, sshd


def confined(host: FarHost, cwd: Path) -> AcpProviderConfig:
    return AcpProviderConfig(
        command="python3",
        args=[host.agent("trying_agent.py")],
        cwd=str(cwd),
        remote=host.url,
        remote_options=host.options,
        sandbox="workspace",
        term_grace=0.3,
        cancel_grace=0.5,
    )


async def tries(config: AcpProviderConfig, *attempts: list[str]) -> list[str]:
    run = await AcpSubagentProvider(config).start(SubagentRequest(prompt=json.dumps(list(attempts))))
    result = await run.result()
    assert result.stop_reason is SubagentStopReason.COMPLETED, result.error
    outcomes: list[str] = json.loads(result.output)
    return outcomes


async def test_a_remote_agent_is_confined_on_the_far_side(far_host: FarHost) -> None:
    work = far_folder("confined-work")
    home = Path(far_user().pw_dir)
    secret = home / ".ssh" / "far_key"
    secret.parent.mkdir(exist_ok=True)
    secret.write_text("far private key")
    outside = home / "outside.txt"
    outside.unlink(missing_ok=True)
    outcomes = await tries(
        confined(far_host, work),
        ["write", str(work / "inside.txt")],
        ["write", str(outside)],
        ["read", str(secret)],
        ["procs"],
    )
    assert outcomes[0] == "ok" and (work / "inside.txt").exists()  # its workspace: writable
    assert outcomes[1].startswith("error:") and not outside.exists()  # the rest of its home: not
    assert outcomes[2].startswith("error:")  # credentials: absent
    assert int(outcomes[3].removeprefix("ok:")) <= 3  # its own PID namespace: bwrap, itself, a child


@pytest.fixture
def host_without_bwrap(far_account: pwd.struct_passwd) -> Iterator[FarHost]:
    """An sshd whose sessions' PATH has python3 and no bwrap."""
    with tempfile.TemporaryDirectory(prefix="acp-tui-nobwrap-") as folder:
        os.chmod(folder, 0o755)
        os.symlink("/usr/bin/python3", Path(folder) / "python3")
        with sshd(path=folder) as host:
            yield host


async def test_without_bwrap_on_the_far_side_nothing_runs(host_without_bwrap: FarHost) -> None:
    work = far_folder("unconfined-work")
    config = confined(host_without_bwrap, work)
    run = await AcpSubagentProvider(config).start(SubagentRequest(prompt=json.dumps([["write", "x"]])))
    result = await run.result()
    assert result.stop_reason is SubagentStopReason.ERROR
    assert result.error == (
        f"{host_without_bwrap.where}: sandbox: bubblewrap (bwrap) is not installed (Debian/Ubuntu: apt "
        'install bubblewrap), or set sandbox = "none"'
    )
    assert not (work / "x").exists()
