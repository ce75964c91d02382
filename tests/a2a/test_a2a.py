"""The A2A provider against a real A2A agent (the SDK's own server classes, in a child process)."""

from __future__ import annotations

import asyncio
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from click.testing import CliRunner

from acp_tui import SubagentRequest, Subagents, SubagentStopReason
from acp_tui.a2a.probe import describe_a2a
from acp_tui.a2a.provider import A2aSubagentProvider
from acp_tui.cli.main import main
from acp_tui.core.model import OutputDelta, RunEvent, SessionStarted, SubagentResult
from acp_tui.reports.text import probe_text
from acp_tui.settings.provider_config import AcpProviderConfig
from tests.a2a.conftest import AgentServer


def preset(url: str, **fields: object) -> AcpProviderConfig:
    return AcpProviderConfig(command=url, url=url, cancel_grace=2.0, **fields)  # type: ignore[arg-type]


async def ask(url: str, prompt: str, **fields: object) -> tuple[SubagentResult, list[RunEvent]]:
    run = await A2aSubagentProvider(preset(url, **fields)).start(SubagentRequest(prompt=prompt))
    events = [event async for event in run.events()]
    return await run.result(), events


@pytest.mark.parametrize(
    ("prompt", "answer"),
    [
        ("artifact Hel|lo, world", "Hello, world"),  # an artifact's chunks go on where they ended
        ("status Working...|Done.", "Working...\nDone."),  # each status message on a line of its own
        ("message just this", "just this"),  # a message instead of a task
    ],
)
async def test_the_answer_streams_however_the_agent_sends_it(
    agent: AgentServer, prompt: str, answer: str
) -> None:
    result, events = await ask(agent.url, prompt)
    assert result.stop_reason is SubagentStopReason.COMPLETED, result.error
    assert result.output == answer
    assert "".join(e.text for e in events if isinstance(e, OutputDelta)) == answer
    started = next(e for e in events if isinstance(e, SessionStarted))
    assert started.agent is not None and (started.agent.name, started.agent.version) == (
        "test agent",
        "1.2.3",
    )
    assert result.session_id and result.exit_code is None and result.ended_by is None


@pytest.mark.parametrize(
    ("prompt", "stop_reason", "error"),
    [
        ("fail", SubagentStopReason.ERROR, "the agent failed the task: the tool broke"),
        ("reject", SubagentStopReason.ERROR, "the agent rejected the task: not my job"),
        ("input", SubagentStopReason.ERROR, "the task is input-required (the agent asks: which file?)"),
        ("auth", SubagentStopReason.ERROR, "the task is auth-required (the agent asks: log in first)"),
    ],
)
async def test_a_task_that_ends_without_an_answer_says_why(
    agent: AgentServer, prompt: str, stop_reason: SubagentStopReason, error: str
) -> None:
    result, _ = await ask(agent.url, prompt)
    assert (result.stop_reason, result.error, result.output) == (stop_reason, error, "")


async def test_cancel_sends_the_task_cancel_and_keeps_the_partial_answer(agent: AgentServer) -> None:
    subagents = Subagents()
    await subagents.register("remote", A2aSubagentProvider(preset(agent.url)))
    run = await subagents.start("remote", SubagentRequest(prompt="slow partial"))
    async for event in run.events():
        if isinstance(event, OutputDelta):
            break
    await run.dispose("cancelled by a person")
    result = await run.result()
    assert (result.stop_reason, result.error, result.output) == (
        SubagentStopReason.ABORTED,
        "cancelled by a person",
        "partial",
    )
    # The agent heard the cancel: its task is canceled (it said so on the stream, which ended).
    assert run.task.state_name == "canceled"  # type: ignore[attr-defined]
    await subagents.aclose()


async def test_headers_reach_the_agent_and_never_its_answer(agent: AgentServer) -> None:
    secret = "Bearer s3cr3t-t0ken"
    result, events = await ask(agent.url, "headers", headers={"Authorization": secret})
    assert result.stop_reason is SubagentStopReason.COMPLETED, result.error
    assert result.output == "***"  # the agent said it back: it had it
    assert secret not in repr(events) and secret not in repr(result)


async def test_a_trace_holds_the_card_the_request_and_each_event_masked(
    agent: AgentServer, tmp_path: Path
) -> None:
    secret = "Bearer s3cr3t-t0ken"
    config = preset(agent.url, headers={"Authorization": secret}, trace_dir=str(tmp_path), name="remote")
    run = await A2aSubagentProvider(config).start(SubagentRequest(prompt="headers"))
    result = await run.result()
    assert result.stop_reason is SubagentStopReason.COMPLETED, result.error
    [trace] = tmp_path.iterdir()
    assert run.trace_path == str(trace) and trace.name.startswith("remote-")
    lines = [json.loads(line) for line in trace.read_text().splitlines()]
    card, request, *events = lines
    assert (card["dir"], card["frame"]["name"]) == ("in", "test agent")
    assert (request["dir"], request["frame"]["message"]["parts"]) == ("out", [{"text": "headers"}])
    assert {line["dir"] for line in events} == {"in"} and "artifactUpdate" in json.dumps(events)
    assert secret not in trace.read_text() and "***" in trace.read_text()  # the agent said it back


async def test_a_server_that_dies_mid_answer_ends_error_with_the_partial_answer(
    own_agent: AgentServer,
) -> None:
    run = await A2aSubagentProvider(preset(own_agent.url)).start(SubagentRequest(prompt="slow partial"))
    async for event in run.events():
        if isinstance(event, OutputDelta):
            own_agent.process.kill()
    result = await run.result()
    assert result.stop_reason is SubagentStopReason.ERROR
    assert result.output == "partial"
    assert result.error and result.error.startswith("the task failed:")


async def test_an_agent_of_a2a_0_3_is_reached_through_the_compatibility_layer() -> None:
    server = AgentServer("--legacy")
    try:
        result, _ = await ask(server.url, "artifact old |school")
    finally:
        server.close()
    assert result.stop_reason is SubagentStopReason.COMPLETED, result.error
    assert result.output == "old school"


async def test_no_agent_there_ends_error_at_once() -> None:
    result, _ = await asyncio.wait_for(ask("http://127.0.0.1:9", "hello"), 30)
    assert result.stop_reason is SubagentStopReason.ERROR
    assert result.error and result.error.startswith("the agent card failed:")


async def test_probe_reads_the_agent_card_and_sends_nothing(agent: AgentServer) -> None:
    record, found = await describe_a2a(preset(agent.url))
    assert found and record["error"] is None
    assert record["agent"]["name"] == "test agent"
    assert [skill["id"] for skill in record["skills"]] == ["echo", "fail"]
    assert record["interfaces"] == [
        {"url": f"{agent.url}/rpc", "protocol_binding": "JSONRPC", "protocol_version": "1.0"}
    ]
    assert "skills:\n  echo (Echo): Says words back." in probe_text("remote", record)


def test_probe_on_the_command_line_describes_an_a2a_preset(agent: AgentServer, tmp_path: Path) -> None:
    config = tmp_path / "agents.toml"
    config.write_text(f'[[agent]]\nname = "remote"\nprovider = "a2a"\nurl = "{agent.url}"\n')
    done = CliRunner().invoke(
        main, ["probe", "--config", str(config), "--agent", "remote", "--format", "json"]
    )
    assert done.exit_code == 0, done.output
    record = json.loads(done.stdout)
    assert (record["agent"]["name"], record["sandbox"], record["error"]) == ("test agent", "none", None)
    confined = CliRunner().invoke(main, ["probe", "--config", str(config), "--agent", "remote", "--sandbox"])
    assert confined.exit_code == 1
    assert "error: an A2A agent runs elsewhere: the sandbox cannot confine it" in confined.stdout


class GarbledAgent(BaseHTTPRequestHandler):
    """An A2A agent (no SDK of its own) whose stream turns to garbage after a first chunk."""

    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        url = f"http://127.0.0.1:{self.server.server_address[1]}/rpc"
        interface = {"url": url, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
        card = {"name": "garbled", "version": "0", "supportedInterfaces": [interface]}
        self._send("application/json", json.dumps({**card, "capabilities": {"streaming": True}}).encode())

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["content-length"]))
        artifact = {"artifactId": "a", "parts": [{"text": TEXT}]}
        chunk = {"taskId": "t1", "contextId": "c1", "artifact": artifact}
        first = json.dumps({"jsonrpc": "2.0", "id": 1, "result": {"artifactUpdate": chunk}})
        self._send("text/event-stream", f"data: {first}\n\ndata: {{not json\n\n".encode())

    def _send(self, kind: str, body: bytes) -> None:
        self.send_response(200)
        self.send_header("content-type", kind)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


TEXT = "partial \x1b[31m[red]kept as it came[/red]"


async def test_a_garbled_stream_ends_error_with_the_partial_answer_as_it_came() -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), GarbledAgent)
    thread = threading.Thread(target=server.serve_forever)
    thread.start()
    try:
        result, _ = await ask(f"http://127.0.0.1:{server.server_address[1]}", "hello")
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
    assert (result.stop_reason, result.output) == (SubagentStopReason.ERROR, TEXT)
    assert result.error and result.error.startswith("the task failed: Invalid JSON-RPC response in SSE")


async def test_the_presets_headers_go_to_its_url_s_origin_only() -> None:
    """The agent card names where the task goes: another host named there gets no credential."""
    import httpx

    from acp_tui.a2a.run import headers_for

    add = headers_for("http://127.0.0.1:8000/agent", {"Authorization": "Bearer s3cret"})
    ours, theirs = (
        httpx.Request("POST", "http://127.0.0.1:8000/rpc"),
        httpx.Request("POST", "http://evil.example/"),
    )
    other_port = httpx.Request("POST", "http://127.0.0.1:9000/rpc")
    for request in (ours, theirs, other_port):
        await add(request)
    assert ours.headers["Authorization"] == "Bearer s3cret"
    assert "Authorization" not in theirs.headers and "Authorization" not in other_port.headers
