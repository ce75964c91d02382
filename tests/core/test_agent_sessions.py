"""`session/list` through the session setup, over real stdio against the sessions agent: every page,
a cursor that repeats, an agent that offers no list; and what acp-tui declares in `initialize`."""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import acp
import pytest

from acp_tui.acp.session_setup import SessionSetup, SessionSetupError

TESTS = Path(__file__).resolve().parent.parent
SESSIONS_AGENT = str(TESTS / "sessions_agent.py")
FEATURES_AGENT = str(TESTS / "features_agent.py")


class Quiet:
    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        return None


@contextlib.asynccontextmanager
async def initialized(agent: str, *options: str) -> AsyncIterator[SessionSetup]:
    child = await asyncio.create_subprocess_exec(
        sys.executable, agent, *options, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE
    )
    assert child.stdin is not None and child.stdout is not None
    conn = acp.connect_to_agent(Quiet(), child.stdin, child.stdout)  # type: ignore[arg-type]
    try:
        setup = SessionSetup(conn, cwd="/", name="kept")
        await setup.initialize()
        yield setup
    finally:
        child.kill()
        await child.wait()
        with contextlib.suppress(Exception):
            await conn.close()


def keep(store: Path, session_id: str, cwd: str, prompts: list[str]) -> None:
    turns = [{"prompt": p, "answer": p} for p in prompts]
    (store / f"{session_id}.json").write_text(json.dumps({"cwd": cwd, "turns": turns}))


async def test_every_page_of_the_agent_s_sessions(tmp_path: Path) -> None:
    store = tmp_path / "store"
    store.mkdir()
    for n in range(5):
        keep(store, f"kept-{n}", f"/work/{n}", [f"task {n}"] if n else [])
    async with initialized(SESSIONS_AGENT, f"store={store}", "list=1", "page=2") as setup:
        assert setup.can_list
        listed = await setup.list_sessions()
    assert sorted(s.session_id for s in listed) == [f"kept-{n}" for n in range(5)]  # three pages
    by_id = {s.session_id: s for s in listed}
    assert (by_id["kept-3"].title, by_id["kept-3"].cwd) == ("task 3", "/work/3")
    assert by_id["kept-0"].title is None
    assert all(s.updated and s.updated.endswith("Z") for s in listed)


async def test_an_agent_without_session_list_is_never_asked(tmp_path: Path) -> None:
    async with initialized(SESSIONS_AGENT, f"store={tmp_path}") as setup:
        assert not setup.can_list
        with pytest.raises(
            SessionSetupError, match=r"^kept does not list its sessions \(it offers no session/list\)$"
        ):
            await setup.list_sessions()
        assert setup.step == "initialize"


async def test_a_cursor_given_twice_ends_the_listing(tmp_path: Path) -> None:
    for n in range(3):
        keep(tmp_path, f"kept-{n}", "/", [f"task {n}"])
    async with initialized(SESSIONS_AGENT, f"store={tmp_path}", "list=1", "page=2", "stuck=1") as setup:
        listed = await setup.list_sessions()
    assert len(listed) == 4  # the first page twice: asked again once, then the cursor is known


async def test_initialize_declares_questions_and_boolean_options_and_nothing_else(tmp_path: Path) -> None:
    record = tmp_path / "frames.jsonl"
    async with initialized(FEATURES_AGENT, f"record={record}"):
        pass
    [initialize] = [json.loads(line) for line in record.read_text().splitlines()]
    # Defaults are left out on the wire: no file system, no terminal, no terminal login.
    assert initialize["params"]["clientCapabilities"] == {
        "auth": {},
        "elicitation": {"form": {}, "url": {}},
        "session": {"configOptions": {"boolean": {}}},
    }
