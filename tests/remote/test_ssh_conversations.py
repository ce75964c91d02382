"""Follow-ups over ssh: a remote run's session continued on the far side, by `acp-tui run --continue`
of its record and by a warm spare made for the follow-up. A real sshd (tests/remote/support.py) and
an agent whose sessions outlive it (tests/sessions_agent.py), kept over there."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from acp_tui import AcpProviderConfig, AcpSubagentProvider, SubagentRequest
from acp_tui.core.model import SubagentStopReason
from tests.remote.support import FarHost, acp_tui, agents_toml, far_agents, far_folder, far_user


def sessions_agent(host: FarHost, offers: str) -> list[str]:
    store = far_folder(f"sessions-{offers}")
    return [host.agent("sessions_agent.py"), f"store={store}", f"offers={offers}"]


def run_json(config: Path, *args: str) -> dict[str, Any]:
    done = acp_tui(config, "run", "--format", "json", *args)
    assert done.returncode == 0, done.stderr
    record: dict[str, Any] = json.loads(done.stdout)
    return record


def test_run_continue_of_a_remote_record_continues_over_ssh(far_host: FarHost, tmp_path: Path) -> None:
    argv = ["python3", *sessions_agent(far_host, "load")]
    config = agents_toml(tmp_path, "far", argv, far_host.url, remote_options=list(far_host.options))
    first = run_json(config, "--prompt", "the first task")
    assert first["remote"] == far_host.url and first["cwd"] == far_user().pw_dir  # the far side's
    recorded = tmp_path / "first.jsonl"
    recorded.write_text(json.dumps(first) + "\n")

    second = run_json(config, "--continue", str(recorded), "--prompt", "and now the test")
    assert second["turn"] == 2 and second["session_id"] == first["session_id"]
    assert second["output"] == "turn 2: and now the test (after: the first task)"  # its history, there
    assert second["remote"] == far_host.url and second["cwd"] == first["cwd"]
    assert second["hidden"] == {"history": 2}  # session/load replayed it over the link


async def test_a_warm_spare_continues_a_remote_session(far_host: FarHost) -> None:
    """The app's spare for a follow-up: spawned over there and through `initialize` ahead; the
    run that takes it continues the session the first run left on the far side."""
    config = AcpProviderConfig(
        command="python3", args=sessions_agent(far_host, "resume"), remote=far_host.url,
        remote_options=far_host.options, term_grace=0.3,
    )  # fmt: skip
    provider = AcpSubagentProvider(config)
    try:
        first = await (await provider.start(SubagentRequest(prompt="the first task"))).result()
        assert first.stop_reason is SubagentStopReason.COMPLETED, first.error
        home = far_user().pw_dir
        spare = await provider.prepare(cwd=config.cwd_for(home), presession=False)
        await spare.ready.wait()
        assert spare.failure is None and spare.session_id is None  # no session of its own
        run = spare.take(SubagentRequest(prompt="next", cwd=home, session_id=first.session_id))
        second = await run.result()
    finally:
        await provider.aclose()
    assert second.stop_reason is SubagentStopReason.COMPLETED, second.error
    assert second.output == "turn 2: next (after: the first task)" and run.warm
    assert second.session_id == first.session_id and second.continuation == "resume"
    assert far_agents() == []
