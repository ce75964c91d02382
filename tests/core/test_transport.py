"""The transport: the one reader of a child's frames. It parses each line once, passes on only valid
JSON-RPC 2.0, fails a request whose answer is malformed at once, and joins runs of plain text chunks
(nothing else) before the SDK sees them."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any, cast

import pytest

from acp_tui import AcpProviderConfig, AcpSubagentProvider, OutputDelta, SubagentRequest, SubagentStopReason
from acp_tui.acp import transport as transport_module
from acp_tui.acp.transport import MALFORMED, StdioTransport
from tests.helpers import SCRIPTED_AGENT, read_trace


def chunk(text: str, session: str = "s1", **extra: Any) -> bytes:
    content = {"type": "text", "text": text, **extra}
    update = {"sessionUpdate": "agent_message_chunk", "content": content}
    return json.dumps(
        {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": session, "update": update}}
    ).encode()


class _Sink:
    """Where the transport writes our frames: a list."""

    def __init__(self) -> None:
        self.lines: list[bytes] = []

    def write(self, data: bytes) -> None:
        self.lines.append(data)

    async def drain(self) -> None:
        return None

    def close(self) -> None:
        return None


async def received(
    *lines: bytes, asked: dict[int, str] | None = None
) -> tuple[list[dict[str, Any]], list[str]]:
    """What the SDK would receive from a child writing `lines`, after we sent the requests `asked`
    (id -> method); and the notes the transport made."""
    import asyncio

    stdout = asyncio.StreamReader()
    stdout.feed_data(b"\n".join(lines) + b"\n")
    stdout.feed_eof()
    notes: list[str] = []
    transport = StdioTransport(
        stdout,
        cast(Any, _Sink()),
        max_line_bytes=1 << 20,
        on_note=lambda what, line: notes.append(what),
        on_lost=lambda: None,
    )
    for rid, method in (asked or {}).items():
        await transport.send({"jsonrpc": "2.0", "id": rid, "method": method, "params": {}})
    messages = []
    while (message := await transport.receive()) is not None:
        messages.append(message)
    return messages, notes


async def joined(*lines: bytes) -> list[dict[str, Any]]:
    messages, notes = await received(*lines)
    assert notes == []
    return messages


def texts(messages: list[dict[str, Any]]) -> list[tuple[str, str]]:
    return [
        (m["params"]["sessionId"], m["params"]["update"]["content"].get("text", "?"))
        if m.get("method") == "session/update"
        else ("-", m.get("method") or "response")
        for m in messages
    ]


async def test_consecutive_text_chunks_of_one_session_become_one() -> None:
    assert texts(await joined(chunk("a"), chunk("b"), chunk("c"))) == [("s1", "abc")]


async def test_a_lone_chunk_is_passed_on_as_it_came() -> None:
    assert await joined(chunk("only")) == [json.loads(chunk("only"))]


async def test_other_messages_and_other_sessions_break_a_run_and_keep_their_place() -> None:
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
    messages, notes = await received(
        chunk("a"),
        chunk("b"),
        chunk("x", "s2"),
        chunk("c"),
        response,
        chunk("d"),
        thought,
        chunk("e"),
        asked={3: "session/prompt"},
    )
    assert notes == []
    assert texts(messages) == [
        ("s1", "ab"),
        ("s2", "x"),
        ("s1", "c"),
        ("-", "response"),
        ("s1", "d"),
        ("s1", "hm"),
        ("s1", "e"),
    ]


async def test_chunks_with_anything_more_or_else_than_plain_text_are_left_alone() -> None:
    annotated = chunk("b", annotations={"priority": 1})
    with_meta = chunk("c", _meta={"k": 1})
    assert texts(await joined(chunk("a"), annotated, with_meta, chunk("e"))) == [
        ("s1", "a"),
        ("s1", "b"),
        ("s1", "c"),
        ("s1", "e"),
    ]


async def test_frames_that_are_no_json_rpc_2_are_dropped_and_noted() -> None:
    deep = b"[" * 10_000 + b"]" * 10_000
    nested = json.dumps(
        {"jsonrpc": "2.0", "method": "x", "params": {"a": json.loads(b"[" * 200 + b"]" * 200)}}
    )
    messages, notes = await received(
        b"not json",
        b"42",
        b"\xff\xfe{}",
        chunk("d").replace(b'"2.0"', b'"1.0"'),
        b'{"jsonrpc": "2.0", "method": 7}',
        b'{"jsonrpc": "2.0", "id": true, "method": "m"}',
        b'{"jsonrpc": "2.0", "id": 99, "result": {}}',
        b'{"jsonrpc": "2.0"}',
        deep,
        nested.encode(),
        chunk("survived"),
    )
    assert texts(messages) == [("s1", "survived")]
    assert len(notes) == 10
    assert sum("nested deeper" in note for note in notes) == 2


async def test_a_malformed_answer_to_our_request_fails_that_request_at_once() -> None:
    answers = [
        b'{"jsonrpc": "2.0", "id": 0, "error": "boom"}',
        b'{"jsonrpc": "2.0", "id": 1, "result": {}, "error": {"code": 1, "message": "m"}}',
        b'{"jsonrpc": "2.0", "id": 2, "error": {"code": "x", "message": "m"}}',
        b'{"jsonrpc": "2.0", "id": 3, "error": {"code": 1}}',
        b'{"jsonrpc": "1.0", "id": 4, "result": {}}',
    ]
    asked = {0: "session/prompt", 1: "initialize", 2: "session/new", 3: "session/prompt", 4: "initialize"}
    messages, notes = await received(*answers, asked=asked)
    assert notes == []
    assert [m["id"] for m in messages] == [0, 1, 2, 3, 4]
    assert all(m["error"]["data"] == MALFORMED for m in messages)
    assert messages[0]["error"]["message"] == (
        'the agent sent a malformed response to session/prompt: error is not an object ("boom")'
    )


async def test_a_duplicate_answer_goes_quietly() -> None:
    answer = b'{"jsonrpc": "2.0", "id": 0, "result": {}}'
    messages, notes = await received(answer, answer, asked={0: "initialize"})
    assert (len(messages), notes) == (1, [])


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


async def test_each_frame_is_parsed_with_no_decoder_made_for_it_and_looked_at_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Per frame: one parse by a decoder made once, one look at whether it is a plain text chunk."""
    made: list[object] = []
    looked: list[object] = []
    make, look = json.JSONDecoder.__init__, transport_module.text_chunk

    def counted_make(decoder: json.JSONDecoder, *args: Any, **kwargs: Any) -> None:
        made.append(decoder)
        make(decoder, *args, **kwargs)

    def counted_look(message: dict[str, Any]) -> tuple[str, str] | None:
        looked.append(message)
        return look(message)

    monkeypatch.setattr(json.JSONDecoder, "__init__", counted_make)
    monkeypatch.setattr(transport_module, "text_chunk", counted_look)
    response = json.dumps({"jsonrpc": "2.0", "id": 3, "result": {}}).encode()
    chunks = [chunk(str(i), f"s{i // 10}") for i in range(100)]  # runs of ten: joined
    messages, notes = await received(*chunks, response, asked={3: "session/prompt"})
    assert (len(messages), notes, made, len(looked)) == (11, [], [], 101)


async def piped() -> tuple[StdioTransport, asyncio.ReadTransport, int]:
    """A transport reading a real pipe (paused while it holds text); the pipe's end to write."""
    read_end, write_end = os.pipe()
    stdout = asyncio.StreamReader()
    pipe, _ = await asyncio.get_running_loop().connect_read_pipe(
        lambda: asyncio.StreamReaderProtocol(stdout), os.fdopen(read_end, "rb", 0)
    )
    assert isinstance(pipe, asyncio.ReadTransport)
    transport = StdioTransport(
        stdout,
        cast(Any, _Sink()),
        max_line_bytes=1 << 20,
        on_note=lambda what, line: None,
        on_lost=lambda: None,
        stdout_pipe=pipe,
    )
    return transport, pipe, write_end


async def test_a_stream_a_few_words_at_a_time_reaches_the_sdk_a_few_chunks_at_a_time() -> None:
    """While text streams (a short read of text alone, after another), the pipe is left unread a
    moment after each read (TEXT_HOLD): the chunks written meanwhile reach the SDK as one
    notification, not one each."""
    transport, pipe, write_end = await piped()
    messages = []
    for word in ("one ", "two "):
        os.write(write_end, chunk(word) + b"\n")
        messages.append(await transport.receive())
    receiving = asyncio.ensure_future(transport.receive())
    await asyncio.sleep(0)  # its first step: the text is held, the pipe not read
    assert not pipe.is_reading()
    for word in ("three ", "four ", "five "):
        os.write(write_end, chunk(word) + b"\n")
    messages.append(await receiving)
    # 5 chunks, 3 handed on
    assert texts(cast(Any, messages)) == [("s1", "one "), ("s1", "two "), ("s1", "three four five ")]
    assert pipe.is_reading()
    pipe.close()
    os.close(write_end)


async def test_only_text_is_held_what_we_send_ends_the_hold_and_a_cancel_ends_holding(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Only text that streams is held: not after a request from the agent, nor after a first read
    of text (an answer in one chunk: its end follows); an answer to what we just sent is not held;
    and once we asked the agent to stop, nothing is (its end is awaited). The hold is an hour
    here: only our message can end it."""
    monkeypatch.setattr(transport_module, "TEXT_HOLD", 3600.0)
    transport, pipe, write_end = await piped()
    cancel = {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "s1"}}

    async def next_message(written: bytes, *, held: bool) -> dict[str, Any] | None:
        receiving = asyncio.ensure_future(transport.receive())
        await asyncio.sleep(0)  # its first step: held, or reading
        assert pipe.is_reading() is not held
        if held:
            await transport.send(cancel)
        os.write(write_end, written + b"\n")
        return await receiving

    await transport.send({"jsonrpc": "2.0", "id": 0, "method": "session/prompt", "params": {}})
    asking = {"jsonrpc": "2.0", "id": 7, "method": "session/request_permission", "params": {}}
    assert await next_message(json.dumps(asking).encode(), held=False) == asking
    await next_message(chunk("text"), held=False)  # after a request: not held
    await next_message(chunk("streams"), held=False)  # after a first read of text: not held
    answer = {"jsonrpc": "2.0", "id": 0, "result": {"stopReason": "cancelled"}}
    assert await next_message(json.dumps(answer).encode(), held=True) == answer  # text streams: held
    await next_message(chunk("more"), held=False)
    await next_message(chunk("and more"), held=False)
    await next_message(chunk("and more"), held=False)  # text streams, but the agent was asked to stop
    pipe.close()
    os.close(write_end)


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
