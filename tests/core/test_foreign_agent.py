"""An ACP agent we did not write: the ACP TypeScript SDK's compiled example agent, under node.

`@agentclientprotocol/sdk` 1.9.0 ships `dist/examples/agent.js`. Per turn it streams a sentence, makes
a `read` tool call (call_1), streams another sentence, announces an `edit` tool call (call_2) and asks
permission for it (options allow/allow_once "Allow this change", reject/reject_once "Skip this
change"), then streams a last sentence that depends on the answer. It pauses 1 s between steps (its
"model interaction"), so a turn takes about 5 s: these tests are slow by the agent's design.

It is installed once per machine into `<repo>/.cache/ts-agent` (git-ignored). Without `node` the tests
are skipped; a failing `npm install` fails them.
"""

from __future__ import annotations

import asyncio
import fcntl
import json
import shutil
import subprocess
from pathlib import Path

import pytest

from acp_tui import AcpProviderConfig, AcpSubagentProvider, OutputDelta, SubagentRequest, SubagentStopReason
from acp_tui.core.model import PermissionDecided, PermissionOptionInfo
from acp_tui.policy.ask import PermissionAsk
from acp_tui.policy.rules import AskPolicy
from acp_tui.process.group import group_alive

pytestmark = pytest.mark.timeout(240)  # the first test may pay for the npm install

SDK_VERSION = "1.9.0"
REPO = Path(__file__).resolve().parents[2]
INSTALL_DIR = REPO / ".cache" / "ts-agent"
SDK_DIR = INSTALL_DIR / "node_modules" / "@agentclientprotocol" / "sdk"
AGENT_JS = SDK_DIR / "dist" / "examples" / "agent.js"

# The example's own text (dist/examples/agent.js), chunk by chunk.
FIRST = "I'll help you with that. Let me start by reading some files to understand the current situation."
SECOND = " Now I understand the project structure. I need to make some changes to improve it."
AFTER_ALLOW = " Perfect! I've successfully updated the configuration. The changes have been applied."
AFTER_REJECT = " I understand you prefer not to make that change. I'll skip the configuration update."
EDIT_TITLE = "Modifying critical configuration file"
OPTIONS = (
    PermissionOptionInfo("allow", "Allow this change", "allow_once"),
    PermissionOptionInfo("reject", "Skip this change", "reject_once"),
)


def installed_version() -> str | None:
    try:
        return str(json.loads((SDK_DIR / "package.json").read_text())["version"])
    except (OSError, ValueError, KeyError):
        return None


@pytest.fixture(scope="session")
def ts_agent() -> Path:
    """The example agent's script, installed with npm on first use."""
    if shutil.which("node") is None:
        pytest.skip("node is not installed: cannot run the ACP TypeScript SDK's example agent")
    INSTALL_DIR.mkdir(parents=True, exist_ok=True)
    with open(INSTALL_DIR / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # pytest-xdist's workers: one installs, the others wait for it
        install_once()
    return AGENT_JS


def install_once() -> None:
    if not AGENT_JS.exists() or installed_version() != SDK_VERSION:
        npm = shutil.which("npm")
        if npm is None:
            pytest.fail("node is installed but npm is not: cannot install @agentclientprotocol/sdk")
        command = [
            npm,
            "install",
            "--prefix",
            str(INSTALL_DIR),
            f"@agentclientprotocol/sdk@{SDK_VERSION}",
            "--no-audit",
            "--no-fund",
        ]
        done = subprocess.run(command, capture_output=True, text=True, timeout=200, check=False)
        if done.returncode != 0 or not AGENT_JS.exists():
            pytest.fail(f"{' '.join(command)} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")


def ts_config(agent: Path, policy: object = "reject") -> AcpProviderConfig:
    return AcpProviderConfig(
        command="node",
        args=[str(agent)],
        permission_policy=policy,  # type: ignore[arg-type]
        cancel_grace=0.5,
        term_grace=0.3,
    )


@pytest.mark.parametrize(
    ("policy", "decision", "option_id", "last", "edit_updates"),
    [
        ("reject", "reject_once", "reject", AFTER_REJECT, 0),
        ("allow", "allow_once", "allow", AFTER_ALLOW, 1),
    ],
)
async def test_the_typescript_example_agent_under_each_policy(
    ts_agent: Path, tmp_path: Path, policy: str, decision: str, option_id: str, last: str, edit_updates: int
) -> None:
    run = await AcpSubagentProvider(ts_config(ts_agent, policy)).start(
        SubagentRequest("Please improve the config", cwd=str(tmp_path))
    )
    events = [event async for event in run.events()]
    result = await run.result()

    assert result.stop_reason is SubagentStopReason.COMPLETED, result.error
    assert result.error is None
    assert result.output == FIRST + SECOND + last
    assert "".join(e.text for e in events if isinstance(e, OutputDelta)) == result.output
    # call_1 (read) and call_2 (edit) announced; call_1 completed; call_2 completed only when allowed.
    assert result.hidden == {"tool_call": 2, "tool_call_update": 1 + edit_updates}
    [record] = result.permissions
    assert (record.title, record.kind, record.options) == (EDIT_TITLE, "edit", OPTIONS)
    assert (record.decision, record.option_id, record.rule) == (decision, option_id, policy)
    assert [e.record for e in events if isinstance(e, PermissionDecided)] == [record]
    assert list(tmp_path.iterdir()) == []  # the example only pretends to edit
    assert not group_alive(run.pid or 0)


async def test_disposing_the_typescript_agent_mid_turn_leaves_nothing(ts_agent: Path) -> None:
    config = ts_config(ts_agent)
    run = await AcpSubagentProvider(config).start(SubagentRequest("hi"))
    async for event in run.events():
        if isinstance(event, OutputDelta):
            break
    await run.dispose("stopped by test")
    result = await run.result()
    assert result.stop_reason is SubagentStopReason.ABORTED
    assert result.error == "stopped by test"
    assert result.output == FIRST
    assert not group_alive(run.pid or 0)
    # It notices a cancel only when its 1 s timer fires: within cancel_grace, or it is terminated
    # (never killed: it does not ignore SIGTERM).
    assert result.ended_by in ("exit", "sigterm")


async def test_a_pending_question_cancelled_by_dispose_ends_the_typescript_turn_as_aborted(
    ts_agent: Path,
) -> None:
    """The example returns `end_turn` when its permission request is answered `cancelled`: a run whose
    cancellation was requested is `aborted` whatever the agent answers."""
    asked = asyncio.Event()

    async def never_answers(ask: PermissionAsk) -> str | None:
        asked.set()
        await asyncio.get_running_loop().create_future()
        raise AssertionError("unreachable")

    run = await AcpSubagentProvider(ts_config(ts_agent, AskPolicy(never_answers))).start(
        SubagentRequest("hi")
    )
    await asked.wait()
    await run.dispose()
    result = await run.result()
    assert result.stop_reason is SubagentStopReason.ABORTED
    assert result.output == FIRST + SECOND
    [record] = result.permissions
    assert (record.title, record.decision, record.option_id) == (EDIT_TITLE, "cancelled", None)
    assert not group_alive(run.pid or 0)


async def test_the_typescript_agent_offers_no_options_and_is_not_sent_session_close(
    ts_agent: Path, tmp_path: Path
) -> None:
    """An agent that offers no config options nor modes: an option asked of it ends the run before the
    prompt, naming what it has (nothing); it never advertised session/close, so none is sent."""
    import dataclasses

    trace = tmp_path / "trace"
    servers = ({"name": "fs", "command": "mcp-fs", "args": [], "env": []},)
    config = dataclasses.replace(
        ts_config(ts_agent), options={"mode": "ask"}, mcp_servers=servers, trace_dir=str(trace)
    )
    run = await AcpSubagentProvider(config).start(SubagentRequest("hi", cwd=str(tmp_path)))
    result = await run.result()
    assert result.stop_reason is SubagentStopReason.ERROR
    assert result.error == 'option "mode": the agent has no such option (it offers no options)'
    assert (result.agent, result.options, result.usage, result.auth_methods) == (None, {}, None, ())
    [trace_file] = trace.iterdir()
    sent = [json.loads(line)["frame"] for line in trace_file.read_text().splitlines()]
    methods = [frame["method"] for frame in sent if "method" in frame and "id" in frame]
    assert methods[:2] == ["initialize", "session/new"] and "session/prompt" not in methods
    assert "session/close" not in methods
    new = next(frame for frame in sent if frame.get("method") == "session/new")
    assert new["params"]["mcpServers"] == list(servers)
    assert not group_alive(run.pid or 0)
