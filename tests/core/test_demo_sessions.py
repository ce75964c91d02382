"""The demo agent's sessions outlive its process: resumed, loaded and closed over real stdio.

Every turn is a fresh demo process talking to the real SDK client; the sessions' files live under the
test's own ACP_TUI_HOME, which every process it starts inherits.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from acp import PROTOCOL_VERSION, RequestError, spawn_agent_process, text_block
from acp.client.connection import ClientSideConnection

from acp_tui import AcpSubagentProvider, SubagentRequest, SubagentStopReason
from acp_tui.core.model import SubagentResult
from acp_tui.demo.sessions import KEEP_FILES, Session, SessionStore
from acp_tui.process.group import group_alive
from acp_tui.settings import paths
from tests.helpers import demo

ID = re.compile(r"demo-chat-[0-9a-f]{8}")


@pytest.fixture
def cache() -> Path:
    """Where the demo keeps its sessions: under this test's own ACP_TUI_HOME (tests/conftest.py)."""
    return paths.cache_dir() / "demo-sessions"


class Recorder:
    """The client's side: every session update as (kind, text), in order."""

    def __init__(self) -> None:
        self.updates: list[tuple[str, str | None]] = []

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        content = getattr(update, "content", None)
        self.updates.append((update.session_update, getattr(content, "text", None)))

    def said(self) -> str:
        return "".join(text or "" for kind, text in self.updates if kind == "agent_message_chunk")

    def on_connect(self, conn: Any) -> None:
        return None


@asynccontextmanager
async def demo_process(
    persona: str, *extra: str, stderr: list[str] | None = None
) -> AsyncIterator[tuple[ClientSideConnection, Recorder]]:
    """One demo process, initialized; `stderr` gets its lines once it has exited."""
    recorder = Recorder()
    argv = ("-m", "acp_tui.demo.agent", "--persona", persona, *extra)
    async with spawn_agent_process(recorder, sys.executable, *argv, env=dict(os.environ)) as (conn, process):
        await conn.initialize(protocol_version=PROTOCOL_VERSION)
        yield conn, recorder
    assert process.returncode is not None
    if stderr is not None and process.stderr is not None:
        stderr.extend((await process.stderr.read()).decode().splitlines())


async def ask(conn: ClientSideConnection, session_id: str, prompt: str) -> str:
    response = await conn.prompt(session_id=session_id, prompt=[text_block(prompt)])
    return response.stop_reason


def kept(cache: Path, session_id: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((cache / f"{session_id}.json").read_text(encoding="utf-8"))
    return data


async def test_a_follow_up_in_a_fresh_process_resumes_the_session_and_remembers(
    tmp_path: Path, cache: Path
) -> None:
    async with demo_process("chat") as (conn, first):
        session = await conn.new_session(cwd=str(tmp_path), mcp_servers=[])
        await conn.set_config_option(config_id="model", session_id=session.session_id, value="demo-thorough")
        assert await ask(conn, session.session_id, "hello") == "end_turn"
        await conn.close_session(session_id=session.session_id)
    session_id = session.session_id
    assert ID.fullmatch(session_id)
    assert first.said() == "turn 1: hello"

    (tmp_path / "later").mkdir()
    async with demo_process("chat") as (conn, second):
        resumed = await conn.resume_session(session_id=session_id, cwd=str(tmp_path / "later"))
        assert second.updates == []  # resume replays nothing
        assert [o.current_value for o in resumed.config_options or ()] == ["ask", "demo-thorough"]
        assert await ask(conn, session_id, "now fix the test") == "end_turn"
    assert second.said() == "turn 2: now fix the test (earlier: hello)"
    assert [kind for kind, _ in second.updates][-1] == "usage_update"

    assert kept(cache, session_id) == {
        "session_id": session_id,
        "cwd": str(tmp_path / "later"),
        "mode": "ask",
        "model": "demo-thorough",
        "used": 201 + 204,  # cumulative: 200 a turn, and a token for about 4 characters of prompt
        "tool_calls": 0,
        "history": [
            {"prompt": "hello", "answer": "turn 1: hello"},
            {"prompt": "now fix the test", "answer": "turn 2: now fix the test (earlier: hello)"},
        ],
    }


async def test_load_replays_the_history_before_it_answers(tmp_path: Path, cache: Path) -> None:
    async with demo_process("chat") as (conn, _):
        session_id = (await conn.new_session(cwd=str(tmp_path), mcp_servers=[])).session_id
        await ask(conn, session_id, "one")
        await ask(conn, session_id, "two")  # the same process goes on too

    async with demo_process("chat", "--no-resume") as (conn, later):
        init = await conn.initialize(protocol_version=PROTOCOL_VERSION)
        capabilities = init.agent_capabilities
        assert capabilities is not None and capabilities.load_session is True
        assert capabilities.session_capabilities is not None
        assert capabilities.session_capabilities.resume is None
        with pytest.raises(RequestError) as refused:
            await conn.resume_session(session_id=session_id, cwd=str(tmp_path))
        assert refused.value.code == -32601

        await conn.load_session(session_id=session_id, cwd=str(tmp_path), mcp_servers=[])
        assert later.updates == [
            ("user_message_chunk", "one"),
            ("agent_message_chunk", "turn 1: one"),
            ("user_message_chunk", "two"),
            ("agent_message_chunk", "turn 2: two (earlier: one)"),
        ]
        later.updates.clear()
        await ask(conn, session_id, "three")
    assert later.said() == "turn 3: three (earlier: one; two)"
    assert len(kept(cache, session_id)["history"]) == 3


async def test_an_unknown_session_is_resource_not_found(tmp_path: Path, cache: Path) -> None:
    cache.mkdir(parents=True)
    (cache / "demo-chat-0badf00d.json").write_text("{not json", encoding="utf-8")
    (tmp_path / "demo-chat-12345678.json").write_text("{}", encoding="utf-8")
    unknown = ("demo-chat-00000000", "demo-chat-0badf00d", "../../demo-chat-12345678", "")
    async with demo_process("chat") as (conn, _):
        for session_id in unknown:
            for reopen in (conn.resume_session, conn.load_session):
                with pytest.raises(RequestError) as error:
                    await reopen(session_id=session_id, cwd=str(tmp_path))
                assert (error.value.code, str(error.value)) == (-32002, "Resource not found")


async def test_session_close_is_served_and_nothing_warns(tmp_path: Path, cache: Path) -> None:
    stderr: list[str] = []
    async with demo_process("echo", stderr=stderr) as (conn, _):
        session_id = (await conn.new_session(cwd=str(tmp_path), mcp_servers=[])).session_id
        await ask(conn, session_id, "ping")
        await conn.close_session(session_id=session_id)  # an error (-32601 before) would raise
        with pytest.raises(RequestError) as error:  # closed: no longer served by this process
            await ask(conn, session_id, "again")
        assert error.value.code == -32602
    assert stderr[0] == "demo agent: persona=echo"
    assert not [line for line in stderr if "Warning" in line or "unstable" in line], stderr
    assert kept(cache, session_id)["history"] == [{"prompt": "ping", "answer": "ping"}]  # kept to resume


async def test_two_processes_at_once_never_share_an_id(tmp_path: Path, cache: Path) -> None:
    async def one_session() -> str:
        async with demo_process("chat") as (conn, _):
            return (await conn.new_session(cwd=str(tmp_path), mcp_servers=[])).session_id

    ids = await asyncio.gather(*(one_session() for _ in range(3)))
    assert len(set(ids)) == 3 and all(ID.fullmatch(i) for i in ids)
    assert sorted(p.name for p in cache.iterdir()) == sorted(f"{i}.json" for i in ids)
    assert {oct(p.stat().st_mode & 0o777) for p in [cache, *cache.iterdir()]} == {"0o700", "0o600"}


# The store itself: pruning, and files that are not ours ------------------------------------------


def test_a_new_session_prunes_files_older_than_a_week_and_beyond_the_newest_200(tmp_path: Path) -> None:
    store = SessionStore(tmp_path / "sessions")
    now = time.time()
    made = [Session(f"demo-chat-{n:08x}", tmp_path) for n in range(KEEP_FILES + 5)]
    for age, session in enumerate(made):  # made[0] the newest, then ten minutes older each
        store.save(session)
        path = store.root / f"{session.session_id}.json"
        os.utime(path, (now - 600 * age,) * 2)
    stale = made[1]
    os.utime(store.root / f"{stale.session_id}.json", (now - 8 * 24 * 3600,) * 2)
    foreign = store.root / "notes.json"
    foreign.write_text("{}", encoding="utf-8")

    newest = store.create("chat", tmp_path)

    left = {p.name for p in store.root.iterdir()}
    assert f"{newest.session_id}.json" in left and "notes.json" in left
    assert f"{stale.session_id}.json" not in left
    assert len(left) == KEEP_FILES + 1  # the newest 200 of ours, and the file that is not ours
    assert f"{made[0].session_id}.json" in left and f"{made[-1].session_id}.json" not in left


def test_a_store_that_cannot_write_still_makes_sessions(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("", encoding="utf-8")
    store = SessionStore(tmp_path / "file" / "sessions")  # under a file: never a folder
    session = store.create("chat", tmp_path)
    store.save(session)
    assert re.fullmatch(r"demo-chat-[0-9a-f]{8}", session.session_id)
    assert store.load(session.session_id) is None


def test_a_session_file_round_trips(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    session = store.create("essay", tmp_path / "work")
    session.mode, session.used, session.tool_calls = "auto", 1234, 2
    store.save(session)
    loaded = store.load(session.session_id)
    assert loaded == session
    assert loaded is not None and loaded.cwd == tmp_path / "work"
    assert Session.from_json(json.loads(session.to_json())) == session
    for broken, reason in (
        ({"mode": "yolo"}, "no cwd, mode or model"),
        ({"used": -1}, "a count that is not one"),
        ({"history": [{"prompt": 1}]}, "a turn without its prompt and answer"),
        ({"session_id": "x"}, "no session id"),
    ):
        with pytest.raises(ValueError, match=reason):
            Session.from_json({**json.loads(session.to_json()), **broken})


# Through acp-tui's own core: a follow-up is a fresh child that continues the session -------------


async def follow_up(persona: str, *extra: str, cwd: Path, prompts: tuple[str, ...]) -> list[SubagentResult]:
    """One turn per prompt, each in a fresh child, each continuing the first turn's session."""
    config = demo(persona, *extra, policy="allow")
    results: list[SubagentResult] = []
    for prompt in prompts:
        session_id = results[0].session_id if results else None
        request = SubagentRequest(prompt=prompt, cwd=str(cwd), session_id=session_id)
        run = await AcpSubagentProvider(config).start(request)
        results.append(await asyncio.wait_for(run.result(), 30))
        assert not group_alive(run.pid or 0)
    return results


async def test_a_follow_up_through_the_core_resumes_and_the_answer_shows_it(
    tmp_path: Path, cache: Path
) -> None:
    first, second = await follow_up("chat", cwd=tmp_path, prompts=("hello", "now fix the test"))
    assert (first.stop_reason, second.stop_reason) == (SubagentStopReason.COMPLETED,) * 2, second.error
    assert (first.output, second.output) == ("turn 1: hello", "turn 2: now fix the test (earlier: hello)")
    assert first.continuation == second.continuation == "resume"
    assert second.session_id == first.session_id and ID.fullmatch(first.session_id or "")
    assert "history" not in second.hidden
    assert second.usage is not None and first.usage is not None and second.usage.used > first.usage.used
    assert [e["prompt"] for e in kept(cache, first.session_id or "")["history"]] == [
        "hello",
        "now fix the test",
    ]


async def test_a_follow_up_through_the_core_by_load_counts_the_replay_as_hidden_history(
    tmp_path: Path, cache: Path
) -> None:
    results = await follow_up("chat", "--no-resume", cwd=tmp_path, prompts=("one", "two", "three"))
    assert [r.output for r in results] == [
        "turn 1: one",
        "turn 2: two (earlier: one)",
        "turn 3: three (earlier: one; two)",
    ]
    assert {r.continuation for r in results} == {"load"}
    assert [r.hidden.get("history") for r in results] == [None, 2, 4]  # each turn's prompt and answer


async def test_every_persona_goes_on_in_a_follow_up(tmp_path: Path, cache: Path) -> None:
    first, second = await follow_up("pong", cwd=tmp_path, prompts=("ping", "ping again"))
    assert (first.output, second.output) == ("PONG", "PONG")
    assert [p.decision for p in second.permissions] == ["allow_once"]
    assert kept(cache, first.session_id or "")["tool_calls"] == 2  # ids stay unique in the session


async def test_following_up_an_unknown_session_ends_error(tmp_path: Path, cache: Path) -> None:
    config = demo("chat")
    run = await AcpSubagentProvider(config).start(SubagentRequest("again", session_id="demo-chat-00000000"))
    result = await asyncio.wait_for(run.result(), 30)
    assert result.stop_reason is SubagentStopReason.ERROR and "Resource not found" in (result.error or "")
    assert result.output == ""
