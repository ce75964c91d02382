"""Property tests: a child replays generated frames (valid and malformed JSON-RPC, random update
payloads, random permission options) through the core over real stdio (tests/hostile/replay_agent.py).

Whatever it sends:
- `result()` never raises, and the stop reason is one of the five;
- the frames that are not valid never change the outcome: the stop reason is the one the script's
  ending calls for, and the output is exactly the concatenation of the valid `agent_message_chunk`
  text chunks for the session in play, in order (those sent before the `session/new` answer too).
  "Valid" is decided by the protocol's own schema (`acp.schema.SessionNotification`), not by us;
- under `reject`, nothing is ever approved: no permission record has an allow-kind decision, and
  no answer the agent got selects an option id that any of its allow-kind options carry;
- the child's process group is gone afterwards.
"""

from __future__ import annotations

import asyncio
import base64
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import acp_tui.acp.client  # noqa: F401  (the SDK import, once)
from acp_tui import AcpProviderConfig, AcpSubagentProvider, SubagentRequest, SubagentStopReason
from acp_tui.process.group import group_alive
from tests.helpers import our_live_processes

REPLAY_AGENT = str(Path(__file__).with_name("replay_agent.py"))
SESSION = "sess-fuzz"
OTHER_SESSIONS = ("sess-other", "", "SESS-FUZZ")
ALLOW_KINDS = ("allow_once", "allow_always")
OPTION_KINDS = (*ALLOW_KINDS, "reject_once", "reject_always")
ACP_STOP_REASONS = {
    "end_turn": SubagentStopReason.COMPLETED,
    "max_tokens": SubagentStopReason.MAX_TOKENS,
    "refusal": SubagentStopReason.REFUSAL,
    "cancelled": SubagentStopReason.ABORTED,
    "max_turn_requests": SubagentStopReason.ERROR,
}

# Building blocks ----------------------------------------------------------------------------------

json_scalars = st.one_of(st.none(), st.booleans(), st.integers(-(2**40), 2**40), st.text(max_size=12))
json_values = st.recursive(
    json_scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=6,
)
texts = st.text(max_size=30)


def encode(message: Any, ascii_only: bool = True) -> bytes:
    return json.dumps(message, ensure_ascii=ascii_only).encode()


def notification(params: Any, *, jsonrpc: bool = True) -> dict[str, Any]:
    message: dict[str, Any] = {"method": "session/update", "params": params}
    if jsonrpc:
        message["jsonrpc"] = "2.0"
    return message


@st.composite
def text_chunks(draw: st.DrawFn) -> tuple[bytes, None]:
    """An agent_message_chunk with text: for our session or another, with extra fields or not."""
    content: dict[str, Any] = {"type": "text", "text": draw(texts)}
    if draw(st.booleans()):
        content["annotations"] = {"priority": draw(st.floats(0, 1))}
    if draw(st.booleans()):
        content["_meta"] = draw(st.dictionaries(st.text(max_size=5), json_scalars, max_size=2))
    session = draw(st.sampled_from((SESSION, SESSION, SESSION, *OTHER_SESSIONS)))
    update = {"sessionUpdate": "agent_message_chunk", "content": content}
    message = notification({"sessionId": session, "update": update}, jsonrpc=draw(st.booleans()))
    return encode(message, draw(st.booleans())), None


@st.composite
def broken_chunks(draw: st.DrawFn) -> tuple[bytes, None]:
    """Chunks the schema should reject (or that carry no text), and corrupted bytes of valid ones."""
    how = draw(st.sampled_from(("text", "content", "type", "session", "id", "bytes", "image")))
    content: Any = {"type": "text", "text": draw(texts)}
    session: Any = SESSION
    message_extra: dict[str, Any] = {}
    if how == "text":
        content["text"] = draw(st.one_of(st.none(), st.integers(), st.lists(texts, max_size=2)))
    elif how == "content":
        content = draw(st.one_of(st.none(), texts, st.integers()))
    elif how == "type":
        content["type"] = draw(st.sampled_from(("hologram", "TEXT", "")))
    elif how == "session":
        session = draw(st.one_of(st.none(), st.integers(), st.lists(texts, max_size=1)))
    elif how == "id":
        message_extra["id"] = draw(st.integers(6000, 7000))  # a request, not a notification
    elif how == "image":
        content = {"type": "image", "data": "AA==", "mimeType": "image/png"}
    update = {"sessionUpdate": "agent_message_chunk", "content": content}
    message = {**notification({"sessionId": session, "update": update}), **message_extra}
    data = encode(message)
    if how == "bytes":
        cut = draw(st.integers(1, len(data) - 1))
        data = data[:cut] + draw(st.sampled_from((b"\xff", b"\xc3", b"\xed\xa0\x80"))) + data[cut:]
    return data, None


@st.composite
def other_updates(draw: st.DrawFn) -> tuple[bytes, None]:
    """Updates of other kinds (known and unknown) with random payloads: never part of the answer."""
    kind = draw(
        st.sampled_from(
            (
                "agent_thought_chunk",
                "user_message_chunk",
                "tool_call",
                "tool_call_update",
                "plan",
                "available_commands_update",
                "current_mode_update",
                "usage_update",
                "acp_tui_unknown",
            )
        )
    )
    update = {"sessionUpdate": kind, **draw(st.dictionaries(st.text(max_size=10), json_values, max_size=3))}
    if kind.endswith("_chunk") and draw(st.booleans()):
        update["content"] = {"type": "text", "text": draw(texts)}
    return encode(notification({"sessionId": SESSION, "update": update})), None


@st.composite
def junk_lines(draw: st.DrawFn) -> tuple[bytes, None]:
    """Lines that are no JSON-RPC message at all."""
    line = draw(
        st.one_of(
            st.binary(max_size=40),
            texts.map(str.encode),
            json_values.filter(lambda v: not isinstance(v, dict)).map(encode),
            texts.map(lambda t: ("{" + t + "}").encode()),
            st.dictionaries(st.text(max_size=8), json_values, max_size=3).map(encode),
        )
    )
    return line.replace(b"\n", b" "), None


weird_ids = st.one_of(
    st.integers(1000, 2**53),
    st.integers(-(2**53), -1),
    st.text(max_size=8),
    st.none(),
    st.booleans(),
    st.floats(allow_nan=False, allow_infinity=False).filter(lambda f: not f.is_integer()),
    st.lists(st.integers(0, 3), max_size=2),
    st.dictionaries(st.text(max_size=3), st.integers(0, 3), max_size=1),
)


@st.composite
def stray_responses(draw: st.DrawFn) -> tuple[bytes, None]:
    """Responses to requests we never made (and ids JSON-RPC does not allow)."""
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": draw(weird_ids)}
    if draw(st.booleans()):
        message["result"] = draw(json_values)
    else:
        message["error"] = draw(
            st.one_of(
                json_values,
                st.fixed_dictionaries({"code": st.integers(-33000, -32000), "message": texts}),
            )
        )
    return encode(message), None


request_ids = iter(range(5000, 10**9))


@st.composite
def agent_requests(draw: st.DrawFn) -> tuple[bytes, int]:
    """Requests to the client: files, terminals, unknown methods, notifications-as-requests."""
    method = draw(
        st.sampled_from(
            (
                "fs/read_text_file",
                "fs/write_text_file",
                "terminal/create",
                "terminal/output",
                "acp_tui/unknown",
                "_acp_tui/extension",
                "session/update",
                "initialize",
            )
        )
    )
    params = draw(
        st.one_of(
            json_values,
            st.fixed_dictionaries({"sessionId": st.just(SESSION), "path": st.just("/etc/hostname")}),
            st.fixed_dictionaries(
                {"sessionId": st.just(SESSION), "path": st.just("fuzz-written.txt"), "content": texts}
            ),
            st.fixed_dictionaries(
                {
                    "sessionId": st.just(SESSION),
                    "command": st.just("touch"),
                    "args": st.just(["fuzz-ran.txt"]),
                }
            ),
        )
    )
    rid = next(request_ids)
    return encode({"jsonrpc": "2.0", "id": rid, "method": method, "params": params}), rid


options = st.lists(
    st.fixed_dictionaries(
        {
            "optionId": st.sampled_from(("a", "b", "r", "x")),  # few ids: duplicates across kinds happen
            "name": st.text(max_size=8),
            "kind": st.sampled_from((*OPTION_KINDS, "allow", "maybe")),
        }
    ),
    max_size=5,
)


@st.composite
def permission_requests(draw: st.DrawFn) -> tuple[bytes, int]:
    """session/request_permission with random options (kinds, orders, duplicate ids)."""
    call: dict[str, Any] = {"toolCallId": draw(st.sampled_from(("t1", "t2"))), "title": draw(texts)}
    if draw(st.booleans()):
        call["kind"] = draw(st.sampled_from(("edit", "execute", "read", "other")))
    params = {"sessionId": SESSION, "toolCall": call, "options": draw(options)}
    rid = next(request_ids)
    return encode(
        {"jsonrpc": "2.0", "id": rid, "method": "session/request_permission", "params": params}
    ), rid


frames = st.lists(
    st.one_of(
        text_chunks(),
        text_chunks(),
        broken_chunks(),
        other_updates(),
        junk_lines(),
        stray_responses(),
        agent_requests(),
        permission_requests(),
    ),
    max_size=8,
)
endings = st.one_of(
    st.sampled_from(tuple(ACP_STOP_REASONS)).map(lambda reason: {"stop": reason}),
    st.text(min_size=1, max_size=10).filter(lambda r: r not in ACP_STOP_REASONS).map(lambda r: {"stop": r}),
    st.tuples(st.integers(-32099, -32000), texts).map(lambda e: {"error": list(e)}),
    st.integers(1, 5).map(lambda code: {"exit": code}),
)

# The oracle ---------------------------------------------------------------------------------------


def valid_text(line: bytes) -> str | None:
    """The text this line adds to the answer, by the protocol's schema; None when it adds nothing."""
    from acp.schema import AgentMessageChunk, SessionNotification, TextContentBlock
    from pydantic import ValidationError

    try:
        message = json.loads(line.decode("utf-8"))
    except ValueError:
        return None
    if not isinstance(message, dict) or message.get("method") != "session/update" or "id" in message:
        return None
    try:
        params = SessionNotification.model_validate(message.get("params"))
    except ValidationError:
        return None
    update = params.update
    if params.session_id != SESSION or not isinstance(update, AgentMessageChunk):
        return None
    return update.content.text if isinstance(update.content, TextContentBlock) else None


def expected_stop_reason(end: dict[str, Any]) -> SubagentStopReason:
    if "stop" in end:
        return ACP_STOP_REASONS.get(end["stop"], SubagentStopReason.ERROR)
    return SubagentStopReason.ERROR


def approving_ids(request: bytes) -> set[str]:
    """Option ids of a permission request that any allow-kind option carries."""
    params = json.loads(request)["params"]
    return {o["optionId"] for o in params["options"] if o["kind"] in ALLOW_KINDS}


# The property -------------------------------------------------------------------------------------


async def replay(script: dict[str, Any], workdir: Path) -> tuple[Any, int | None, list[dict[str, Any]]]:
    path, record = workdir / "script.json", workdir / "record.jsonl"
    path.write_text(json.dumps(script))
    config = AcpProviderConfig(
        command=sys.executable,
        args=[REPLAY_AGENT, str(path), str(record)],
        permission_policy="reject",
        handshake_timeout=10,
        cancel_grace=0.5,
        term_grace=0.3,
    )
    run = await AcpSubagentProvider(config).start(SubagentRequest("fuzz", cwd=str(workdir / "cwd")))
    result = await asyncio.wait_for(run.result(), 20)  # never raises: that is the property
    received = [json.loads(line) for line in record.read_text().splitlines()] if record.exists() else []
    return result, run.pid, received


def chunk(text: str) -> bytes:
    update = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}}
    return encode(notification({"sessionId": SESSION, "update": update}))


def permission(rid: int, *kinds: str, option_id: str = "a") -> tuple[bytes, int]:
    opts = [{"optionId": option_id, "name": kind, "kind": kind} for kind in kinds]
    call = {"toolCallId": "t1", "title": "write"}
    params = {"sessionId": SESSION, "toolCall": call, "options": opts}
    return encode(
        {"jsonrpc": "2.0", "id": rid, "method": "session/request_permission", "params": params}
    ), rid


END_TURN = {"stop": "end_turn"}


# What the fuzzer found once, kept as examples so they run every time:
@example(  # an option id shared by a reject and an allow option: `reject` must not approve it
    early=[], after_new=[], prompt=[permission(5001, "reject_once", "allow_once")], end=END_TURN
)
@example(early=[], after_new=[], prompt=[permission(5002, "allow_once", "reject_once")], end=END_TURN)
@example(  # a response whose id is no JSON-RPC id (an array, an object) kills the SDK's receive loop
    early=[],
    after_new=[],
    prompt=[(b'{"jsonrpc": "2.0", "id": [], "error": null}', None), (chunk("kept"), None)],
    end=END_TURN,
)
@example(early=[], after_new=[], prompt=[(b'{"jsonrpc": "2.0", "id": {}, "result": {}}', None)], end=END_TURN)
@example(  # `true` == 1 in Python: a response with id true "answers" session/new (id 1)
    early=[(b'{"jsonrpc": "2.0", "id": true, "result": {"sessionId": "hijacked"}}', None)],
    after_new=[],
    prompt=[(chunk("kept"), None)],
    end=END_TURN,
)
@example(  # bytes that are no UTF-8 (an encoded surrogate) inside an otherwise valid chunk
    early=[],
    after_new=[],
    prompt=[(chunk("a"), None), (chunk("b").replace(b'"b"', b'"\xed\xa0\x80"'), None)],
    end=END_TURN,
)
@settings(
    max_examples=35,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(early=frames, after_new=frames, prompt=frames, end=endings)
def test_generated_frames_never_change_the_outcome(
    early: list[tuple[bytes, int | None]],
    after_new: list[tuple[bytes, int | None]],
    prompt: list[tuple[bytes, int | None]],
    end: dict[str, Any],
) -> None:
    phases = {"early": early, "after_new": after_new, "prompt": prompt}
    script = {
        "session": SESSION,
        "phases": {
            name: [
                {"b64": base64.b64encode(line).decode(), **({"wait": rid} if rid else {})}
                for line, rid in lines
            ]
            for name, lines in phases.items()
        },
        "end": end,
    }
    with tempfile.TemporaryDirectory(prefix="acp-tui-fuzz-") as tmp:
        workdir = Path(tmp)
        (workdir / "cwd").mkdir()
        result, pid, received = asyncio.run(replay(script, workdir))
        written = sorted(p.name for p in (workdir / "cwd").iterdir())

    assert isinstance(result.stop_reason, SubagentStopReason)
    assert result.stop_reason.value in {"completed", "max-tokens", "refusal", "aborted", "error"}
    assert pid is None or not group_alive(pid)
    assert our_live_processes() == []
    assert written == []  # no fs/terminal request of the agent touched its cwd

    lines = [line for name in ("early", "after_new", "prompt") for line, _ in phases[name]]
    expected_output = "".join(t for line in lines if (t := valid_text(line)) is not None)
    assert result.stop_reason is expected_stop_reason(end), (result.stop_reason, result.error)
    assert result.output == expected_output

    # `reject` never approves: in our records, and in what the agent was told.
    assert not [r for r in result.permissions if r.decision in ALLOW_KINDS]
    requests = {
        json.loads(line)["id"]: line
        for line, rid in (pair for name in phases for pair in phases[name])
        if rid is not None and b"session/request_permission" in line
    }
    for answer in received:
        if answer.get("id") in requests and "method" not in answer:
            outcome = (answer.get("result") or {}).get("outcome") or {}
            if outcome.get("outcome") == "selected":
                assert outcome.get("optionId") not in approving_ids(requests[answer["id"]]), answer
