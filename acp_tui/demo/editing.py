"""The demo personas that change files, for isolation and comparison (each run in its own worktree).

- ``edit``: "edit FILE [FILE ...]" (default ``NOTES.md``): appends ``--chunks`` lines (default 5) to
  each file, creating it when missing, one line per ``--delay`` step, each line on disk before the
  chunk that reports it (so a run cancelled mid-edit leaves a partial change). ``end_turn``;
  ``cancelled`` when cancelled.
- ``create``: "create FILE [FILE ...]" (default ``created-1.txt`` .. ``created-N.txt``, ``--chunks``
  of them, default 3): writes each file new, one per step. ``end_turn``; ``cancelled``.

Both write inside the session's cwd only, without asking permission (as agents in an auto mode do):
a path that leaves the cwd is refused in the answer. Each reports one `edit` tool call.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING

from acp import start_edit_tool_call, update_tool_call

if TYPE_CHECKING:
    from acp.schema import StopReason

    from acp_tui.demo.agent import DemoAgent, Session

DEFAULT_EDIT_LINES = 5
DEFAULT_CREATED_FILES = 3
DELAYS: dict[str, float] = {"edit": 0.0, "create": 0.0}


def targets(text: str, verb: str) -> list[str]:
    """The file names after `verb` in the prompt, up to the next verb of ours:
    "edit a.txt, b.txt and create c.txt" -> a.txt, b.txt for `edit`."""
    match = re.search(rf"\b{verb}\b(.*)", text, re.IGNORECASE | re.DOTALL)
    names: list[str] = []
    for word in match.group(1).replace(",", " ").split() if match else ():
        if word.lower() in PERSONAS:
            break
        name = word.rstrip(".;:!?")
        if name and name.lower() != "and":
            names.append(name)
    return names


def _inside(cwd: Path, name: str) -> Path | None:
    root = cwd.resolve()
    target = (root / name).resolve()
    return target if target != root and target.is_relative_to(root) else None


def _append(path: Path, line: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as f:
        f.write(line)


def _create(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


async def edit(agent: DemoAgent, session: Session, text: str) -> StopReason:
    names = targets(text, "edit") or ["NOTES.md"]
    steps = agent.chunks or DEFAULT_EDIT_LINES
    return await _write_files(agent, session, names, steps, append=True)


async def create(agent: DemoAgent, session: Session, text: str) -> StopReason:
    names = targets(text, "create") or [
        f"created-{i}.txt" for i in range(1, (agent.chunks or DEFAULT_CREATED_FILES) + 1)
    ]
    return await _write_files(agent, session, names, 1, append=False)


async def _write_files(
    agent: DemoAgent, session: Session, names: list[str], steps: int, *, append: bool
) -> StopReason:
    sid = session.session_id
    tool_call_id = agent._tool_call_id("edit" if append else "create")
    title = ("Edit " if append else "Create ") + ", ".join(names)
    await agent.conn.session_update(
        session_id=sid, update=start_edit_tool_call(tool_call_id, title, str(session.cwd), "")
    )
    for name in names:
        path = _inside(session.cwd, name)
        if path is None:
            await agent._say(session, f"Refused {name}: it is outside the working directory.\n")
            continue
        for step in range(1, steps + 1):
            if await agent._pause(session):
                await agent.conn.session_update(
                    session_id=sid, update=update_tool_call(tool_call_id, status="failed")
                )
                return "cancelled"
            if append:
                await asyncio.to_thread(_append, path, f"edited by acp-tui demo: step {step}\n")
                await agent._say(session, f"Edited {name} (step {step} of {steps}).\n")
            else:
                await asyncio.to_thread(_create, path, f"created by acp-tui demo: {name}\n")
                await agent._say(session, f"Created {name}.\n")
    await agent.conn.session_update(session_id=sid, update=update_tool_call(tool_call_id, status="completed"))
    return "end_turn"


PERSONAS: dict[str, Callable[[DemoAgent, Session, str], Awaitable[StopReason]]] = {
    "edit": edit,
    "create": create,
}
