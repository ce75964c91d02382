"""What a persona may do in one turn: the public API between the demo agent and its personas.

The agent makes a `Turn` for each `session/prompt` and hands it to the persona, which answers
through it (`say`, `stream`, `think`, `plan`, tool calls, `ask_permission`), paces itself with
`pause` (which notices a cancel at once), and reads what it needs: the prompt's text, the
session's state (cwd, mode, model, the earlier turns), `delay` and `chunks`. The persona returns
its stop reason; what it said becomes the turn's answer in the session's history.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from acp import (
    RequestError,
    start_tool_call,
    update_agent_message_text,
    update_agent_thought_text,
    update_plan,
    update_tool_call,
)
from acp.interfaces import Client
from acp.schema import (
    AllowedOutcome,
    ContentToolCallContent,
    FileEditToolCallContent,
    PermissionOption,
    PlanEntry,
    TerminalToolCallContent,
    ToolCallLocation,
    ToolCallStatus,
    ToolCallUpdate,
    ToolKind,
)

from acp_tui.demo.sessions import Session

ToolCallContent = ContentToolCallContent | FileEditToolCallContent | TerminalToolCallContent

log = logging.getLogger("acp_tui.demo")


class Turn:
    """One prompt of one session, as a persona sees it."""

    def __init__(self, conn: Client, session: Session, prompt: str, *, delay: float, chunks: int) -> None:
        self._conn = conn
        self._answer: list[str] = []
        self.session = session
        self.prompt = prompt  # the prompt's text blocks, concatenated
        self.delay = delay  # the pause between streamed chunks (`--delay`, else the persona's own)
        self.chunks = chunks  # how many pieces to make (`--chunks`, else the persona's own)
        self.number = len(session.history) + 1  # 1 for a session's first turn

    @property
    def cwd(self) -> Path:
        return self.session.cwd

    @property
    def cancelled(self) -> bool:
        return self.session.cancelled.is_set()

    @property
    def answer(self) -> str:
        """Everything said so far (message chunks; thoughts and tool calls aside)."""
        return "".join(self._answer)

    # Saying things ------------------------------------------------------------------------------

    async def say(self, text: str) -> None:
        """One message chunk, at once."""
        self._answer.append(text)
        await self._update(update_agent_message_text(text))

    async def stream(self, text: str, *, thought: bool = False, words: int = 3) -> bool:
        """Stream `text` a few words at a time, one `pause` before each piece; True when cancelled
        (the rest is not sent)."""
        for chunk in split_chunks(text, words):
            if await self.pause():
                return True
            if thought:
                await self._update(update_agent_thought_text(chunk))
            else:
                await self.say(chunk)
        return False

    async def think(self, text: str) -> bool:
        """Stream a thought; True when the turn was cancelled meanwhile."""
        return await self.stream(text, thought=True)

    async def pause(self, delay: float | None = None) -> bool:
        """Wait one step (`delay`, default the turn's); True as soon as the turn is cancelled
        (waiting on the cancel, not sleeping through it)."""
        step = self.delay if delay is None else delay
        if step <= 0:
            await asyncio.sleep(0)  # still let the cancel notification be processed
            return self.cancelled
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.session.cancelled.wait(), timeout=step)
        return self.cancelled

    async def plan(self, entries: Sequence[PlanEntry]) -> None:
        """The whole plan, as it stands now."""
        await self._update(update_plan(entries))

    # Tool calls ---------------------------------------------------------------------------------

    async def start_tool(
        self,
        label: str,
        title: str,
        *,
        kind: ToolKind | None = None,
        status: ToolCallStatus | None = None,
        content: Sequence[ToolCallContent] | None = None,
        locations: Sequence[ToolCallLocation] | None = None,
        raw_input: Any | None = None,
    ) -> str:
        """Announce a tool call; its id (`label-N`, unique in the session)."""
        self.session.tool_calls += 1
        tool_call_id = f"{label}-{self.session.tool_calls}"
        await self._update(
            start_tool_call(
                tool_call_id,
                title,
                kind=kind,
                status=status,
                content=content,
                locations=locations,
                raw_input=raw_input,
            )
        )
        return tool_call_id

    async def update_tool(
        self,
        tool_call_id: str,
        *,
        status: ToolCallStatus | None = None,
        content: Sequence[ToolCallContent] | None = None,
    ) -> None:
        await self._update(update_tool_call(tool_call_id, status=status, content=content))

    async def ask_permission(
        self, tool_call: ToolCallUpdate, options: Sequence[PermissionOption]
    ) -> PermissionOption | None:
        """The option the client picked, or None: the turn was cancelled first, the request
        failed, or the answer named no option offered."""
        request = asyncio.ensure_future(
            self._conn.request_permission(
                session_id=self.session.session_id, tool_call=tool_call, options=list(options)
            )
        )
        # Race the answer against cancel: a client that never answers must not wedge the turn.
        cancel_wait = asyncio.ensure_future(self.session.cancelled.wait())
        try:
            await asyncio.wait({request, cancel_wait}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            cancel_wait.cancel()
        if not request.done():
            request.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await request
            return None
        try:
            outcome = request.result().outcome
        except (RequestError, ConnectionError) as exc:
            log.warning("permission request failed: %s", exc)
            return None
        if not isinstance(outcome, AllowedOutcome):
            return None
        return next((option for option in options if option.option_id == outcome.option_id), None)

    async def _update(self, update: Any) -> None:
        await self._conn.session_update(session_id=self.session.session_id, update=update)


# Text helpers for personas ------------------------------------------------------------------------


def summarize(text: str, limit: int = 160) -> str:
    """The prompt on one line, short enough to quote inside an answer."""
    flat = " ".join(text.split())
    if not flat:
        return "(an empty prompt)"
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def split_chunks(text: str, words_per_chunk: int = 3) -> list[str]:
    """Split into pieces of a few words each; joining the pieces gives back `text` exactly."""
    if not text:
        return []
    # Cut where whitespace meets a non-space, so each piece is a word plus its trailing whitespace.
    pieces = re.split(r"(?<=\s)(?=\S)", text)
    return ["".join(pieces[i : i + words_per_chunk]) for i in range(0, len(pieces), words_per_chunk)]
