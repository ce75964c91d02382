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
from pathlib import Path

from acp.schema import StopReason, ToolCallLocation

from acp_tui.demo.turn import Turn

DEFAULT_EDIT_LINES = 5
DEFAULT_CREATED_FILES = 3
VERBS = ("edit", "create")


def targets(text: str, verb: str) -> list[str]:
    """The file names after `verb` in the prompt, up to the next verb of ours:
    "edit a.txt, b.txt and create c.txt" -> a.txt, b.txt for `edit`."""
    match = re.search(rf"\b{verb}\b(.*)", text, re.IGNORECASE | re.DOTALL)
    names: list[str] = []
    for word in match.group(1).replace(",", " ").split() if match else ():
        if word.lower() in VERBS:
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


async def edit(turn: Turn) -> StopReason:
    names = targets(turn.prompt, "edit") or ["NOTES.md"]
    return await _write_files(turn, names, turn.chunks, append=True)


async def create(turn: Turn) -> StopReason:
    names = targets(turn.prompt, "create") or [f"created-{i}.txt" for i in range(1, turn.chunks + 1)]
    return await _write_files(turn, names, 1, append=False)


async def _write_files(turn: Turn, names: list[str], steps: int, *, append: bool) -> StopReason:
    cwd = str(turn.cwd)
    tool_call_id = await turn.start_tool(
        "edit" if append else "create",
        ("Edit " if append else "Create ") + ", ".join(names),
        kind="edit",
        status="pending",
        locations=[ToolCallLocation(path=cwd)],
        raw_input={"path": cwd, "content": ""},
    )
    for name in names:
        path = _inside(turn.cwd, name)
        if path is None:
            await turn.say(f"Refused {name}: it is outside the working directory.\n")
            continue
        for step in range(1, steps + 1):
            if await turn.pause():
                await turn.update_tool(tool_call_id, status="failed")
                return "cancelled"
            if append:
                await asyncio.to_thread(_append, path, f"edited by acp-tui demo: step {step}\n")
                await turn.say(f"Edited {name} (step {step} of {steps}).\n")
            else:
                await asyncio.to_thread(_create, path, f"created by acp-tui demo: {name}\n")
                await turn.say(f"Created {name}.\n")
    await turn.update_tool(tool_call_id, status="completed")
    return "end_turn"
