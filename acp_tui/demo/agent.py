"""A keyless, deterministic ACP agent that plays the model, so acp-tui can demo without an API key.

Run it as ``python -m acp_tui.demo.agent --persona NAME [--delay SECONDS] [--chunks N]``; it speaks ACP
over stdio (stdout carries only the protocol, logs go to stderr). Personas:

- ``pong``: the RFC's end-to-end check. Reports an edit tool call, asks permission to write
  ``proof.txt`` (options ``allow``/allow_once and ``reject``/reject_once), writes ``PONG\\n`` into the
  session cwd only when an allow-kind option was selected, then answers exactly ``PONG``. Stops with
  ``end_turn``, or ``cancelled`` if the turn was cancelled while the permission request was pending.
- ``essay``: a long Markdown answer in small chunks, interleaved with thoughts, plan updates, a read
  tool call and an edit tool call. ``end_turn``; ``cancelled`` when cancelled.
- ``slow``: ``--chunks`` (default 60) short pieces, one per ``--delay`` (default 0.3 s). ``end_turn``;
  stops within one delay step on ``session/cancel`` with ``cancelled``.
- ``stubborn``: ignores ``session/cancel``, SIGTERM and the end of stdin, and streams forever; only
  SIGKILL ends it (proves that dispose escalates).
- ``refusal``: a short sentence, then ``refusal``.
- ``max-tokens``: ``--chunks`` (default 20) pieces of an answer cut mid-sentence, then ``max_tokens``.
- ``max-turn-requests``: a short explanation, then ``max_turn_requests``.
- ``echo``: the prompt text back verbatim in one chunk, then ``end_turn``.
- ``locked``: needs a login, as real agents without credentials do. ``initialize`` advertises three
  methods (an agent one, ``env_var`` ``ACP_TUI_DEMO_KEY``, and ``terminal`` with ``--login``);
  ``session/new`` fails with -32000 "Authentication required" unless ``ACP_TUI_DEMO_KEY`` is set or a
  terminal login happened. ``--login`` is that login: run in a terminal, it asks for Enter, leaves a
  mark in the user cache dir and exits 0 (``--logout`` removes it). Logged in, it answers as ``echo``.
- ``edit``, ``create``: change files in the session cwd ("edit FILE", "create FILE"); see `editing.py`.

Every persona's session offers the config options ``mode`` (``ask``: asks before writing, the
default; ``auto``: writes without asking; ``read-only``: never writes nor asks) and ``model``
(``demo-fast``, ``demo-thorough``: cosmetic), the same as older ``modes``; takes both
``session/set_config_option`` and ``session/set_mode``; reports ``usage_update`` with a cumulative
cost at the end of each turn; and advertises ``session/close``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
import re
import signal
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from acp_tui.acp.sdk import import_acp

import_acp()  # the SDK, without the half second pydantic spends on docstrings

from acp import (
    PROTOCOL_VERSION,
    RequestError,
    plan_entry,
    run_agent,
    start_edit_tool_call,
    start_read_tool_call,
    start_tool_call,
    text_block,
    tool_content,
    tool_diff_content,
    update_agent_message_text,
    update_agent_thought_text,
    update_plan,
    update_tool_call,
)
from acp.interfaces import Client
from acp.schema import (
    AcpMcpServer,
    AgentCapabilities,
    AllowedOutcome,
    AudioContentBlock,
    AuthenticateResponse,
    AuthEnvVar,
    AuthMethodAgent,
    ClientCapabilities,
    CloseSessionResponse,
    ContentToolCallContent,
    Cost,
    CurrentModeUpdate,
    EmbeddedResourceContentBlock,
    EnvVarAuthMethod,
    FileEditToolCallContent,
    ForkSessionResponse,
    HttpMcpServer,
    ImageContentBlock,
    Implementation,
    InitializeResponse,
    ListSessionsResponse,
    LoadSessionResponse,
    McpServerStdio,
    NewSessionResponse,
    PermissionOption,
    PlanEntry,
    PlanEntryStatus,
    PromptResponse,
    RequestPermissionResponse,
    ResourceContentBlock,
    ResumeSessionResponse,
    SessionCapabilities,
    SessionCloseCapabilities,
    SessionConfigOptionBoolean,
    SessionConfigOptionSelect,
    SessionConfigSelectOption,
    SessionMode,
    SessionModeState,
    SetSessionConfigOptionResponse,
    SetSessionModeResponse,
    SseMcpServer,
    StopReason,
    TerminalAuthMethod,
    TerminalToolCallContent,
    TextContentBlock,
    ToolCallLocation,
    ToolCallUpdate,
    UsageUpdate,
)

from acp_tui.demo import editing

PERSONAS: tuple[str, ...] = (
    "pong",
    "essay",
    "slow",
    "stubborn",
    "refusal",
    "max-tokens",
    "max-turn-requests",
    "echo",
    "locked",
    *editing.PERSONAS,
)
AGENT_NAME = "acp-tui-demo"
AGENT_VERSION = "0.1.0"
PONG_TEXT = "PONG"
PROOF_FILE = "proof.txt"
PROOF_CONTENT = "PONG\n"
ALLOW_OPTION_ID = "allow"
REJECT_OPTION_ID = "reject"

# The session's config options (the first value is the default).
MODES = {"ask": "Ask before writing", "auto": "Write without asking", "read-only": "Never write"}
MODELS = {"demo-fast": "Demo fast", "demo-thorough": "Demo thorough"}
CONTEXT_SIZE = 200_000
PRICE_PER_TOKEN = 0.000002  # USD, made up: the demo of a cost display
# The `locked` persona's login: the variable, or the mark a terminal login leaves.
DEMO_KEY_VAR = "ACP_TUI_DEMO_KEY"
LOGIN_MARK = "demo-login"

# Pause between streamed chunks, per persona; `--delay` overrides it.
DEFAULT_DELAYS: dict[str, float] = {
    "pong": 0.0,
    "essay": 0.02,
    "slow": 0.3,
    "stubborn": 0.3,
    "refusal": 0.05,
    "max-tokens": 0.05,
    "max-turn-requests": 0.05,
    "echo": 0.0,
    "locked": 0.0,
    **editing.DELAYS,
}
# Number of answer chunks, for the personas where a count makes sense; `--chunks` overrides it.
DEFAULT_CHUNKS: dict[str, int] = {"slow": 60, "max-tokens": 20}
# Stubborn must never spin: a zero delay would flood the client.
MIN_STUBBORN_DELAY = 0.01

ContentBlock = (
    TextContentBlock
    | ImageContentBlock
    | AudioContentBlock
    | ResourceContentBlock
    | EmbeddedResourceContentBlock
)
ToolCallContent = ContentToolCallContent | FileEditToolCallContent | TerminalToolCallContent
McpServer = HttpMcpServer | SseMcpServer | AcpMcpServer | McpServerStdio

log = logging.getLogger("acp_tui.demo")

ESSAY_INTRO = """\
# A field guide to the demo agent

> You asked: {question}

This answer is canned, but it streams like a real one: a few words at a time, with thoughts, \
a plan and tool calls in between. Everything is deterministic, so tests can rely on it.

"""

ESSAY_BODY = """\
## What an ACP turn looks like

A turn starts when the client sends `session/prompt`. Until the agent answers that request, \
it streams `session/update` notifications:

- **Message chunks** carry the answer text you are reading now.
- **Thought chunks** show the agent's reasoning, usually dimmed.
- **Plan updates** replace the whole plan each time an entry changes.
- **Tool calls** start as `tool_call` and move on through `tool_call_update`.
- **Permission requests** pause the turn until the client picks an option.

The turn ends with a stop reason, and only then may the client send the next prompt.

## Stop reasons at a glance

| Stop reason | Meaning | Demo persona |
| --- | --- | --- |
| `end_turn` | The agent finished normally | `essay`, `echo`, `pong` |
| `cancelled` | The client sent `session/cancel` | `slow` |
| `refusal` | The agent declined to continue | `refusal` |
| `max_tokens` | The token budget ran out | `max-tokens` |
| `max_turn_requests` | Too many model requests in one turn | `max-turn-requests` |

"""

ESSAY_PERSONAS = """\
## Meet the personas

Each persona exercises one path of the client on purpose:

- `pong` asks permission to write `proof.txt`, then answers `PONG`.
- `essay` is this answer: long, chunky, with thoughts, a plan and tool calls.
- `slow` dribbles words for about twenty seconds and stops promptly on cancel.
- `stubborn` ignores cancel and `SIGTERM` alike; only `SIGKILL` ends it.
- `refusal`, `max-tokens` and `max-turn-requests` end with those stop reasons.
- `echo` says your prompt back, verbatim, in a single chunk.

"""

ESSAY_CODE = """\
## Driving an agent by hand

The protocol is newline-delimited JSON-RPC over stdio, so a tiny client fits in a few lines:

```python
async with spawn_agent_process(client, "python", "-m", "acp_tui.demo.agent") as (conn, proc):
    await conn.initialize(protocol_version=PROTOCOL_VERSION)
    session = await conn.new_session(cwd=os.getcwd(), mcp_servers=[])
    result = await conn.prompt(session_id=session.session_id, prompt=[text_block("hi")])
    print(result.stop_reason)
```

Every chunk arrives through the client's `session_update` callback, in order.

"""

ESSAY_OUTRO = """\
## Cancelling politely

Cancellation is cooperative. The client sends `session/cancel`; a well-behaved agent stops \
streaming, answers the pending prompt with `cancelled`, and stays alive for the next turn. \
A stubborn one keeps going, which is why a supervisor needs a harder way out:

1. Send `session/cancel` and wait a moment.
2. Close the agent's stdin and send `SIGTERM`.
3. If it is still alive after a grace period, send `SIGKILL`.

## Why a demo agent at all

- It needs no API key and no network.
- It is fast enough for tests and slow enough to watch.
- It never changes its mind: the same prompt gives the same chunks.

That is the whole tour. Ask again and you will get exactly the same answer, chunk for chunk.
"""

SLOW_PHRASES: tuple[str, ...] = (
    "Thinking it over.",
    "Weighing one option.",
    "Then another.",
    "Checking a detail.",
    "Still going.",
    "Almost a thought.",
    "Reconsidering.",
    "Taking my time.",
    "Nearly there.",
    "One more step.",
)

STUBBORN_PHRASES: tuple[str, ...] = (
    "I am still working.",
    "No, I will not stop.",
    "Cancel noted and ignored.",
    "Still streaming.",
)

MAX_TOKENS_TEXT = (
    "Here is the beginning of a long and careful answer that would cover every corner of the "
    "question in depth, starting with the history, moving on to the design, then the trade-offs, "
    "and finally a worked example that shows each step of the process from the first line to the "
    "very last one, but the token budget runs out right in the middle of"
)


@dataclass
class Session:
    """Per-session state; `cancelled` is set by `session/cancel` and cleared when a turn starts."""

    session_id: str
    cwd: Path
    cancelled: asyncio.Event = field(default_factory=asyncio.Event)
    turns: int = 0
    mode: str = "ask"
    model: str = "demo-fast"
    used: int = 0  # tokens of the context, as a model would count them (about 4 characters each)


def prompt_text(prompt: Sequence[ContentBlock]) -> str:
    """The prompt's text blocks concatenated; other blocks carry nothing to echo."""
    return "".join(block.text for block in prompt if isinstance(block, TextContentBlock))


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


class DemoAgent:
    """The agent side of ACP; every method of `acp.Agent` is here so mypy sees the full protocol."""

    def __init__(self, persona: str, delay: float, chunks: int | None = None) -> None:
        if persona not in PERSONAS:
            raise ValueError(f"unknown persona {persona!r}")
        self.persona = persona
        self.delay = delay
        self.chunks = chunks if chunks is not None else DEFAULT_CHUNKS.get(persona, 0)
        self.sessions: dict[str, Session] = {}
        self._conn: Client | None = None
        self._next_session = 0
        self._next_tool_call = 0

    # -- connection plumbing --------------------------------------------------------------------

    def on_connect(self, conn: Client) -> None:
        self._conn = conn

    @property
    def conn(self) -> Client:
        if self._conn is None:
            raise RuntimeError("the demo agent is not connected")
        return self._conn

    def _session(self, session_id: str) -> Session:
        try:
            return self.sessions[session_id]
        except KeyError:
            raise RequestError.invalid_params(
                {"sessionId": session_id, "reason": "unknown session"}
            ) from None

    def _tool_call_id(self, label: str) -> str:
        self._next_tool_call += 1
        return f"{label}-{self._next_tool_call}"

    # -- ACP requests ---------------------------------------------------------------------------

    async def initialize(
        self,
        protocol_version: int,
        client_capabilities: ClientCapabilities | None = None,
        client_info: Implementation | None = None,
        **kwargs: Any,
    ) -> InitializeResponse:
        return InitializeResponse(
            protocol_version=PROTOCOL_VERSION,
            agent_capabilities=AgentCapabilities(
                load_session=False,
                session_capabilities=SessionCapabilities(close=SessionCloseCapabilities()),
            ),
            agent_info=Implementation(
                name=AGENT_NAME, title=f"acp-tui demo ({self.persona})", version=AGENT_VERSION
            ),
            auth_methods=list(AUTH_METHODS) if self.persona == "locked" else [],
        )

    async def new_session(
        self,
        cwd: str,
        additional_directories: list[str] | None = None,
        mcp_servers: list[McpServer] | None = None,
        **kwargs: Any,
    ) -> NewSessionResponse:
        if self.persona == "locked" and not logged_in():
            raise RequestError.auth_required({"details": f"set {DEMO_KEY_VAR} or log in with --login"})
        # Deterministic ids: tests can predict them, and one process rarely holds more than one.
        self._next_session += 1
        session_id = f"demo-{self.persona}-{self._next_session}"
        session = self.sessions[session_id] = Session(session_id=session_id, cwd=Path(cwd))
        log.info("new session %s (cwd=%s, %d MCP servers)", session_id, cwd, len(mcp_servers or ()))
        return NewSessionResponse(
            session_id=session_id, config_options=config_options(session), modes=modes(session)
        )

    async def load_session(
        self,
        cwd: str,
        session_id: str,
        mcp_servers: list[McpServer] | None = None,
        additional_directories: list[str] | None = None,
        **kwargs: Any,
    ) -> LoadSessionResponse | None:
        raise RequestError.method_not_found("session/load")

    async def list_sessions(
        self, cwd: str | None = None, cursor: str | None = None, **kwargs: Any
    ) -> ListSessionsResponse:
        raise RequestError.method_not_found("session/list")

    async def set_session_mode(
        self, session_id: str, mode_id: str, **kwargs: Any
    ) -> SetSessionModeResponse | None:
        session = self._session(session_id)
        self._set(session, "mode", mode_id)
        await self.conn.session_update(
            session_id=session_id,
            update=CurrentModeUpdate(session_update="current_mode_update", current_mode_id=mode_id),
        )
        return SetSessionModeResponse()

    async def set_config_option(
        self, config_id: str, session_id: str, value: str | bool, **kwargs: Any
    ) -> SetSessionConfigOptionResponse | None:
        session = self._session(session_id)
        self._set(session, config_id, value)
        return SetSessionConfigOptionResponse(config_options=config_options(session))

    def _set(self, session: Session, config_id: str, value: object) -> None:
        offered = {"mode": MODES, "model": MODELS}.get(config_id)
        if offered is None:
            raise RequestError.invalid_params({"configId": config_id, "reason": "no such option"})
        if not isinstance(value, str) or value not in offered:
            raise RequestError.invalid_params({"value": value, "reason": f"not a {config_id}"})
        setattr(session, config_id, value)
        log.info("%s %s -> %s", session.session_id, config_id, value)

    async def authenticate(self, method_id: str, **kwargs: Any) -> AuthenticateResponse | None:
        # No auth methods are advertised, so there is nothing to check.
        return AuthenticateResponse()

    async def fork_session(
        self,
        session_id: str,
        cwd: str,
        additional_directories: list[str] | None = None,
        mcp_servers: list[McpServer] | None = None,
        **kwargs: Any,
    ) -> ForkSessionResponse:
        raise RequestError.method_not_found("session/fork")

    async def resume_session(
        self,
        session_id: str,
        cwd: str,
        additional_directories: list[str] | None = None,
        mcp_servers: list[McpServer] | None = None,
        **kwargs: Any,
    ) -> ResumeSessionResponse:
        raise RequestError.method_not_found("session/resume")

    async def close_session(self, session_id: str, **kwargs: Any) -> CloseSessionResponse | None:
        session = self.sessions.pop(session_id, None)
        if session is not None:
            session.cancelled.set()  # a turn still running on it should stop
        return CloseSessionResponse()

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        raise RequestError.method_not_found(f"_{method}")

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        return None

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        session = self.sessions.get(session_id)
        if session is None:
            return  # a notification cannot fail; an unknown session has nothing to stop
        if self.persona == "stubborn":
            log.info("cancel for %s ignored (stubborn)", session_id)
            return
        log.info("cancel for %s", session_id)
        session.cancelled.set()

    async def prompt(self, session_id: str, prompt: list[ContentBlock], **kwargs: Any) -> PromptResponse:
        session = self._session(session_id)
        # A cancel belongs to the turn it interrupted; the next turn starts clean.
        session.cancelled.clear()
        session.turns += 1
        text = prompt_text(prompt)
        log.info("prompt %s turn %d (%d chars)", session_id, session.turns, len(text))
        stop_reason = await self._run_persona(session, text)
        log.info("prompt %s turn %d -> %s", session_id, session.turns, stop_reason)
        await self._report_usage(session, text)
        return PromptResponse(stop_reason=stop_reason)

    async def _report_usage(self, session: Session, text: str) -> None:
        """The context grows by the prompt and the answer (one token for about 4 characters); the
        cost is cumulative, as agents report it."""
        session.used = min(CONTEXT_SIZE, session.used + len(text) // 4 + 200)
        cost = Cost(amount=round(session.used * PRICE_PER_TOKEN, 6), currency="USD")
        await self.conn.session_update(
            session_id=session.session_id,
            update=UsageUpdate(
                session_update="usage_update", used=session.used, size=CONTEXT_SIZE, cost=cost
            ),
        )

    async def _run_persona(self, session: Session, text: str) -> StopReason:
        if self.persona in editing.PERSONAS:
            return await editing.PERSONAS[self.persona](self, session, text)
        if self.persona == "pong":
            return await self._pong(session)
        if self.persona == "essay":
            return await self._essay(session, text)
        if self.persona == "slow":
            return await self._slow(session, text)
        if self.persona == "stubborn":
            return await self._stubborn(session, text)
        if self.persona == "refusal":
            reply = f"You asked: {summarize(text)}\n\nI'm sorry, but I can't help with that request."
            return "cancelled" if await self._stream(session, reply) else "refusal"
        if self.persona == "max-tokens":
            return await self._max_tokens(session, text)
        if self.persona == "max-turn-requests":
            reply = (
                f"You asked: {summarize(text)}\n\nI looked things up, then looked them up again, and "
                "ran out of model requests for this turn before reaching an answer."
            )
            return "cancelled" if await self._stream(session, reply) else "max_turn_requests"
        # echo (and locked, once logged in): the prompt back verbatim, in one chunk, with no pause.
        await self._say(session, text)
        return "end_turn"

    # -- streaming helpers ----------------------------------------------------------------------

    async def _say(self, session: Session, text: str) -> None:
        await self.conn.session_update(session_id=session.session_id, update=update_agent_message_text(text))

    async def _think(self, session: Session, text: str) -> bool:
        """Stream a thought; True when the turn was cancelled meanwhile."""
        return await self._stream(session, text, thought=True)

    async def _pause(self, session: Session, delay: float | None = None) -> bool:
        """Wait one step; True as soon as the turn is cancelled (waiting on the event, not sleeping)."""
        step = self.delay if delay is None else delay
        if step <= 0:
            await asyncio.sleep(0)  # still let the cancel notification be processed
            return session.cancelled.is_set()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(session.cancelled.wait(), timeout=step)
        return session.cancelled.is_set()

    async def _stream(self, session: Session, text: str, *, thought: bool = False, words: int = 3) -> bool:
        """Stream `text` a few words at a time; True when cancelled (the rest is not sent)."""
        for chunk in split_chunks(text, words):
            if await self._pause(session):
                return True
            update = update_agent_thought_text(chunk) if thought else update_agent_message_text(chunk)
            await self.conn.session_update(session_id=session.session_id, update=update)
        return False

    async def _plan(self, session: Session, statuses: Sequence[PlanEntryStatus]) -> None:
        steps = ("Read the question", "Look at the workspace", "Draft the answer", "Polish and finish")
        entries: list[PlanEntry] = [
            plan_entry(step, priority="high" if i == 0 else "medium", status=status)
            for i, (step, status) in enumerate(zip(steps, statuses, strict=True))
        ]
        await self.conn.session_update(session_id=session.session_id, update=update_plan(entries))

    # -- personas -------------------------------------------------------------------------------

    async def _pong(self, session: Session) -> StopReason:
        if session.mode != "ask":
            return await self._pong_without_asking(session)
        target = session.cwd / PROOF_FILE
        old_text = await asyncio.to_thread(_read_if_exists, target)
        diff: list[ToolCallContent] = [tool_diff_content(str(target), PROOF_CONTENT, old_text)]
        locations = [ToolCallLocation(path=str(target))]
        tool_call_id = self._tool_call_id("pong-write")
        title = f"Write {PROOF_FILE}"
        # Announce the tool call first, as real agents do, so the client can show it while it asks.
        await self.conn.session_update(
            session_id=session.session_id,
            update=start_tool_call(
                tool_call_id, title, kind="edit", status="pending", content=diff, locations=locations
            ),
        )
        options = [
            PermissionOption(option_id=ALLOW_OPTION_ID, name="Allow once", kind="allow_once"),
            PermissionOption(option_id=REJECT_OPTION_ID, name="Reject", kind="reject_once"),
        ]
        ask = ToolCallUpdate(
            tool_call_id=tool_call_id,
            title=title,
            kind="edit",
            status="pending",
            content=diff,
            locations=locations,
        )
        response = await self._ask_permission(session, ask, options)
        cancelled = session.cancelled.is_set()
        allowed = (
            not cancelled
            and response is not None
            and isinstance(response.outcome, AllowedOutcome)
            and any(o.option_id == response.outcome.option_id and o.kind.startswith("allow") for o in options)
        )
        if allowed:
            try:
                await asyncio.to_thread(target.write_text, PROOF_CONTENT, encoding="utf-8")
            except OSError as exc:
                log.warning("could not write %s: %s", target, exc)
                allowed = False
            else:
                log.info("wrote %s", target)
        await self.conn.session_update(
            session_id=session.session_id,
            update=update_tool_call(tool_call_id, status="completed" if allowed else "failed"),
        )
        # The answer is exactly PONG whatever happened, so tests can compare it.
        await self._say(session, PONG_TEXT)
        return "cancelled" if cancelled else "end_turn"

    async def _pong_without_asking(self, session: Session) -> StopReason:
        """`auto`: the edit is made without a question; `read-only`: nothing is written, nor asked."""
        target = session.cwd / PROOF_FILE
        tool_call_id = self._tool_call_id("pong-write")
        title = f"Write {PROOF_FILE}"
        await self.conn.session_update(
            session_id=session.session_id,
            update=start_tool_call(
                tool_call_id, title, kind="edit", locations=[ToolCallLocation(path=str(target))]
            ),
        )
        written = False
        if session.mode == "auto":
            try:
                await asyncio.to_thread(target.write_text, PROOF_CONTENT, encoding="utf-8")
                written = True
            except OSError as exc:
                log.warning("could not write %s: %s", target, exc)
        await self.conn.session_update(
            session_id=session.session_id,
            update=update_tool_call(tool_call_id, status="completed" if written else "failed"),
        )
        await self._say(session, PONG_TEXT)
        return "end_turn"

    async def _ask_permission(
        self, session: Session, ask: ToolCallUpdate, options: list[PermissionOption]
    ) -> RequestPermissionResponse | None:
        """The client's answer, or None if the turn was cancelled first or the request failed."""
        request = asyncio.ensure_future(
            self.conn.request_permission(session_id=session.session_id, tool_call=ask, options=options)
        )
        # Race the answer against cancel: a client that never answers must not wedge the turn.
        cancel_wait = asyncio.ensure_future(session.cancelled.wait())
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
            return request.result()
        except (RequestError, ConnectionError) as exc:
            log.warning("permission request failed: %s", exc)
            return None

    async def _essay(self, session: Session, text: str) -> StopReason:
        sid = session.session_id
        if await self._think(session, "The user wants a thorough answer. Let me plan it first."):
            return "cancelled"
        await self._plan(session, ("in_progress", "pending", "pending", "pending"))
        if await self._stream(session, ESSAY_INTRO.format(question=summarize(text))):
            return "cancelled"

        # A read tool call: started, then completed with what was "read" (canned, not the real file).
        readme = str(session.cwd / "README.md")
        read_id = self._tool_call_id("essay-read")
        await self.conn.session_update(
            session_id=sid, update=start_read_tool_call(read_id, "Read README.md", readme)
        )
        if await self._pause(session):
            return "cancelled"
        await self.conn.session_update(
            session_id=sid,
            update=update_tool_call(
                read_id,
                status="completed",
                content=[tool_content(text_block("# acp-tui\n\nA Textual supervisor of ACP agents.\n"))],
            ),
        )
        await self._plan(session, ("completed", "completed", "in_progress", "pending"))
        if await self._think(session, "The workspace is small. A guided tour with a table should do."):
            return "cancelled"
        if await self._stream(session, ESSAY_BODY):
            return "cancelled"

        if await self._think(session, "An example would help; let me note it down as I go."):
            return "cancelled"
        # An edit tool call with a diff; nothing is written, the diff is only shown.
        notes = str(session.cwd / "NOTES.md")
        new_notes = "# Notes\n\n- Try the `slow` persona and press Cancel.\n"
        edit_id = self._tool_call_id("essay-edit")
        await self.conn.session_update(
            session_id=sid, update=start_edit_tool_call(edit_id, "Edit NOTES.md", notes, new_notes)
        )
        if await self._pause(session):
            return "cancelled"
        await self.conn.session_update(
            session_id=sid,
            update=update_tool_call(
                edit_id, status="completed", content=[tool_diff_content(notes, new_notes, "# Notes\n")]
            ),
        )
        if await self._stream(session, ESSAY_PERSONAS + ESSAY_CODE):
            return "cancelled"
        await self._plan(session, ("completed", "completed", "completed", "in_progress"))
        if await self._stream(session, ESSAY_OUTRO):
            return "cancelled"
        await self._plan(session, ("completed", "completed", "completed", "completed"))
        return "end_turn"

    async def _slow(self, session: Session, text: str) -> StopReason:
        total = max(self.chunks, 1)
        for i in range(total):
            if i == 0:
                chunk = f"You asked: {summarize(text)}\n\n"
            elif i == total - 1:
                chunk = "Done."
            else:
                chunk = SLOW_PHRASES[(i - 1) % len(SLOW_PHRASES)] + ("\n" if i % 10 == 0 else " ")
            # Pause before each chunk so a cancel is noticed within one delay step.
            if i and await self._pause(session):
                return "cancelled"
            await self._say(session, chunk)
        return "end_turn"

    async def _stubborn(self, session: Session, text: str) -> StopReason:
        await self._say(session, f"You asked: {summarize(text)}\n\n")
        delay = max(self.delay, MIN_STUBBORN_DELAY)
        i = 0
        while True:  # deliberately endless: only SIGKILL stops this persona
            await asyncio.sleep(delay)
            await self._say(session, STUBBORN_PHRASES[i % len(STUBBORN_PHRASES)] + " ")
            i += 1

    async def _max_tokens(self, session: Session, text: str) -> StopReason:
        if await self._stream(session, f"You asked: {summarize(text)}\n\n"):
            return "cancelled"
        # Two words a chunk, cut after `--chunks` chunks: the answer stops mid-sentence.
        pieces = split_chunks(MAX_TOKENS_TEXT, 2)[: max(self.chunks, 1)]
        if await self._stream(session, "".join(pieces).rstrip(), words=2):
            return "cancelled"
        return "max_tokens"


AUTH_METHODS = (
    AuthMethodAgent(id="demo-account", name="Demo account", description="Sign in to the demo service"),
    EnvVarAuthMethod(
        type="env_var",
        id="demo-key",
        name=f"Use {DEMO_KEY_VAR}",
        vars=[AuthEnvVar(name=DEMO_KEY_VAR, label="Any value will do")],
    ),
    TerminalAuthMethod(
        type="terminal",
        id="demo-terminal",
        name="Log in in a terminal",
        description="Runs the demo agent's own login: press Enter",
        args=["--login"],
    ),
)


def config_options(session: Session) -> list[SessionConfigOptionSelect | SessionConfigOptionBoolean]:
    def select(
        option_id: Literal["mode", "model"], values: dict[str, str], current: str
    ) -> SessionConfigOptionSelect:
        return SessionConfigOptionSelect(
            type="select",
            id=option_id,
            name=option_id.title(),
            category=option_id,
            current_value=current,
            options=[SessionConfigSelectOption(value=v, name=n) for v, n in values.items()],
        )

    return [select("mode", MODES, session.mode), select("model", MODELS, session.model)]


def modes(session: Session) -> SessionModeState:
    return SessionModeState(
        current_mode_id=session.mode,
        available_modes=[SessionMode(id=m, name=n) for m, n in MODES.items()],
    )


def login_mark() -> Path:
    import platformdirs

    return platformdirs.user_cache_path("acp-tui", appauthor=False) / LOGIN_MARK


def logged_in() -> bool:
    return bool(os.environ.get(DEMO_KEY_VAR)) or login_mark().exists()


def terminal_login(logout: bool = False) -> int:
    """The `locked` persona's terminal login: what a real agent's `login` command would do."""
    mark = login_mark()
    if logout:
        mark.unlink(missing_ok=True)
        print("demo agent: logged out")
        return 0
    print("demo agent: log in to the demo service (nothing is sent anywhere).")
    try:
        input("Press Enter to log in, Ctrl-C to give up: ")
    except (EOFError, KeyboardInterrupt):
        print("\ndemo agent: not logged in")
        return 1
    mark.parent.mkdir(parents=True, exist_ok=True)
    mark.write_text("logged in\n", encoding="utf-8")
    print(f"demo agent: logged in ({mark})")
    return 0


def _read_if_exists(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m acp_tui.demo.agent",
        description="A keyless, deterministic ACP agent over stdio (see the module docstring for personas).",
    )
    parser.add_argument(
        "--persona", choices=PERSONAS, default="pong", help="behaviour to play (default: pong)"
    )
    parser.add_argument(
        "--delay",
        type=float,
        default=None,
        metavar="SECONDS",
        help="pause between streamed chunks (default per persona: "
        + ", ".join(f"{name} {delay:g}" for name, delay in DEFAULT_DELAYS.items())
        + ")",
    )
    parser.add_argument(
        "--chunks",
        type=int,
        default=None,
        metavar="N",
        help="number of answer chunks for slow (default 60) and max-tokens (default 20)",
    )
    parser.add_argument("--login", action="store_true", help="log the locked persona in (in a terminal)")
    parser.add_argument("--logout", action="store_true", help="undo --login")
    args = parser.parse_args(argv)
    if args.delay is not None and args.delay < 0:
        parser.error("--delay must be >= 0")
    if args.chunks is not None and args.chunks < 1:
        parser.error("--chunks must be >= 1")
    return args


async def serve(agent: DemoAgent) -> None:
    """Speak ACP on stdio until the client closes stdin."""
    await run_agent(agent, use_unstable_protocol=True)  # session/close is "unstable" in this SDK
    if agent.persona == "stubborn":
        # Outlive the end of stdin too, so only SIGKILL can end the process.
        log.info("stdin closed; stubborn agent stays alive")
        await asyncio.Event().wait()


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if args.login or args.logout:
        return terminal_login(logout=args.logout)
    persona: str = args.persona
    delay: float = args.delay if args.delay is not None else DEFAULT_DELAYS[persona]
    # stdout belongs to the protocol: every log line goes to stderr.
    logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="demo agent: %(message)s")
    if persona == "stubborn":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    print(f"demo agent: persona={persona}", file=sys.stderr, flush=True)
    try:
        asyncio.run(serve(DemoAgent(persona, delay, args.chunks)))
    except KeyboardInterrupt:
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
