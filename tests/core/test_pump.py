"""The stdout pump joins runs of plain text chunks before the SDK sees them, and nothing else."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from acp_tui import AcpProviderConfig, AcpSubagentProvider, OutputDelta, SubagentRequest, SubagentStopReason
from acp_tui.subagents.acp.process import coalesce, parse_rpc_message
from acp_tui.subagents.acp.trace import read_trace
from tests.helpers import SCRIPTED_AGENT


def chunk(text: str, session: str = "s1", **extra: Any) -> bytes:
    content = {"type": "text", "text": text, **extra}
    update = {"sessionUpdate": "agent_message_chunk", "content": content}
    return json.dumps(
        {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": session, "update": update}}
    ).encode()


def joined(*lines: bytes) -> list[dict[str, Any]]:
    parsed = [(line, parse_rpc_message(line)) for line in lines]
    assert all(message is not None for _, message in parsed)
    return [json.loads(line) for line in coalesce(parsed)]


def texts(messages: list[dict[str, Any]]) -> list[tuple[str, str]]:
    return [
        (m["params"]["sessionId"], m["params"]["update"]["content"].get("text", "?"))
        if m.get("method") == "session/update"
        else ("-", m.get("method") or "response")
        for m in messages
    ]


def test_consecutive_text_chunks_of_one_session_become_one() -> None:
    assert texts(joined(chunk("a"), chunk("b"), chunk("c"))) == [("s1", "abc")]


def test_a_lone_chunk_is_passed_on_byte_for_byte() -> None:
    line = chunk("only")
    assert coalesce([(line, parse_rpc_message(line))]) == [line]


def test_other_messages_and_other_sessions_break_a_run_and_keep_their_place() -> None:
    response = json.dumps({"jsonrpc": "2.0", "id": 3, "result": {}}).encode()
    thought = json.dumps(
        {
            "jsonrpc": "2.0",
            "method": "session/update",
            "params": {
                "sessionId": "s1",
                "update": {"sessionUpdate": "agent_thought_chunk", "content": {"type": "text", "text": "hm"}},
            },
        }
    ).encode()
    messages = joined(
        chunk("a"), chunk("b"), chunk("x", "s2"), chunk("c"), response, chunk("d"), thought, chunk("e")
    )
    assert texts(messages) == [
        ("s1", "ab"),
        ("s2", "x"),
        ("s1", "c"),
        ("-", "response"),
        ("s1", "d"),
        ("s1", "hm"),
        ("s1", "e"),
    ]


def test_chunks_with_anything_more_or_else_than_plain_text_are_left_alone() -> None:
    annotated = chunk("b", annotations={"priority": 1})
    with_meta = chunk("c", _meta={"k": 1})
    old_version = chunk("d").replace(b'"2.0"', b'"1.0"')
    assert texts(joined(chunk("a"), annotated, with_meta, old_version, chunk("e"))) == [
        ("s1", "a"),
        ("s1", "b"),
        ("s1", "c"),
        ("s1", "d"),
        ("s1", "e"),
    ]


async def test_a_fast_stream_arrives_whole_and_in_order_in_fewer_pieces() -> None:
    text = "".join(f"piece {i}; " for i in range(3000))
    args = [SCRIPTED_AGENT, f"text={text}", "chunks=3000"]
    run = await AcpSubagentProvider(AcpProviderConfig(command=sys.executable, args=args)).start(
        SubagentRequest("go")
    )
    deltas = [event.text async for event in run.events() if isinstance(event, OutputDelta)]
    result = await run.result()
    assert (result.stop_reason, result.output) == (SubagentStopReason.COMPLETED, text)
    assert "".join(deltas) == text
    assert len(deltas) < 3000  # joined: the SDK did not pay for every one of them


async def test_a_traced_run_records_the_frames_as_the_child_sent_them(tmp_path: Path) -> None:
    text = "".join(f"piece {i}; " for i in range(300))
    args = [SCRIPTED_AGENT, f"text={text}", "chunks=300"]
    config = AcpProviderConfig(command=sys.executable, args=args, trace_dir=str(tmp_path))
    run = await AcpSubagentProvider(config).start(SubagentRequest("go"))
    result = await run.result()
    assert result.output == text
    [trace] = tmp_path.glob("*.jsonl")
    chunks = [
        frame["frame"]
        for frame in read_trace(trace)
        if frame["dir"] == "in" and frame["frame"].get("method") == "session/update"
    ]
    assert len(chunks) == 300
