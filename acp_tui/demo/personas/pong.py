"""``pong``: the RFC's end-to-end check.

Reports an edit tool call, asks permission to write ``proof.txt`` (options ``allow``/allow_once and
``reject``/reject_once), writes ``PONG\\n`` into the session cwd only when an allow-kind option was
selected, then answers exactly ``PONG``. Stops with ``end_turn``, or ``cancelled`` if the turn was
cancelled while the permission request was pending. In mode ``auto`` it writes without asking; in
``read-only`` it neither writes nor asks.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

from acp import tool_diff_content
from acp.schema import PermissionOption, StopReason, ToolCallLocation, ToolCallUpdate

from acp_tui.demo.turn import ToolCallContent, Turn

PONG_TEXT = "PONG"
PROOF_FILE = "proof.txt"
PROOF_CONTENT = "PONG\n"
ALLOW_OPTION_ID = "allow"
REJECT_OPTION_ID = "reject"
TITLE = f"Write {PROOF_FILE}"

log = logging.getLogger("acp_tui.demo")


async def play(turn: Turn) -> StopReason:
    if turn.session.mode != "ask":
        return await _without_asking(turn)
    target = turn.cwd / PROOF_FILE
    old_text = await asyncio.to_thread(_read_if_exists, target)
    diff: list[ToolCallContent] = [tool_diff_content(str(target), PROOF_CONTENT, old_text)]
    locations = [ToolCallLocation(path=str(target))]
    # Announce the tool call first, as real agents do, so the client can show it while it asks.
    tool_call_id = await turn.start_tool(
        "pong-write", TITLE, kind="edit", status="pending", content=diff, locations=locations
    )
    options = [
        PermissionOption(option_id=ALLOW_OPTION_ID, name="Allow once", kind="allow_once"),
        PermissionOption(option_id=REJECT_OPTION_ID, name="Reject", kind="reject_once"),
    ]
    ask = ToolCallUpdate(
        tool_call_id=tool_call_id,
        title=TITLE,
        kind="edit",
        status="pending",
        content=diff,
        locations=locations,
    )
    chosen = await turn.ask_permission(ask, options)
    cancelled = turn.cancelled
    allowed = not cancelled and chosen is not None and chosen.kind.startswith("allow")
    if allowed:
        allowed = await asyncio.to_thread(_write_proof, target)
    await turn.update_tool(tool_call_id, status="completed" if allowed else "failed")
    # The answer is exactly PONG whatever happened, so tests can compare it.
    await turn.say(PONG_TEXT)
    return "cancelled" if cancelled else "end_turn"


async def _without_asking(turn: Turn) -> StopReason:
    """`auto`: the edit is made without a question; `read-only`: nothing is written, nor asked."""
    target = turn.cwd / PROOF_FILE
    tool_call_id = await turn.start_tool(
        "pong-write", TITLE, kind="edit", locations=[ToolCallLocation(path=str(target))]
    )
    written = turn.session.mode == "auto" and await asyncio.to_thread(_write_proof, target)
    await turn.update_tool(tool_call_id, status="completed" if written else "failed")
    await turn.say(PONG_TEXT)
    return "end_turn"


def _write_proof(target: Path) -> bool:
    try:
        target.write_text(PROOF_CONTENT, encoding="utf-8")
    except OSError as exc:
        log.warning("could not write %s: %s", target, exc)
        return False
    log.info("wrote %s", target)
    return True


def _read_if_exists(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
