"""A keyless, deterministic ACP agent that plays the model, so acp-tui can demo without an API key.

Run it as ``python -m acp_tui.demo.agent --persona NAME [--delay SECONDS] [--chunks N]``; it speaks ACP
over stdio (stdout carries only the protocol, logs go to stderr). This module is the protocol side
(initialize, sessions, config options, usage, login); each prompt is played by a persona
(``acp_tui/demo/personas/``, one module per family) through a `Turn` (``acp_tui/demo/turn.py``).
Personas:

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
- ``edit``, ``create``: change files in the session cwd ("edit FILE", "create FILE"); see
  ``personas/editing.py``.
- ``chat``: remembers the conversation: ``turn 1: hello``, then in a follow-up ``turn 2: now the
  tests (earlier: hello)``.

Every persona's session offers the config options ``mode`` (``ask``: asks before writing, the
default; ``auto``: writes without asking; ``read-only``: never writes nor asks) and ``model``
(``demo-fast``, ``demo-thorough``: cosmetic), the same as older ``modes``; takes both
``session/set_config_option`` and ``session/set_mode``; reports ``usage_update`` with a cumulative
cost at the end of each turn.

Sessions outlive the process (every acp-tui turn is a fresh one): each is kept as a small JSON file
under acp-tui's cache folder (``demo-sessions``; see ``sessions.py``), its id ``demo-<persona>-<8
hex>``. The agent advertises ``session/resume`` (the session goes on where it was: its mode, model,
usage and history), ``session/load`` (the same, after replaying the history as
``user_message_chunk`` / ``agent_message_chunk`` updates) and ``session/close`` (the session stops
here; its file stays, to be resumed later). ``--no-resume`` advertises ``session/load`` only, so a
client's follow-up goes by replay. An unknown session id answers -32002 "Resource not found". So a
follow-up works with no key: ``chat`` shows what it remembers, ``essay`` and the others answer as
before, their usage growing.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import signal
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from acp_tui.acp.sdk import import_acp

import_acp()  # the SDK, without the half second pydantic spends on docstrings

from acp import (
    PROTOCOL_VERSION,
    RequestError,
    run_agent,
    update_agent_message_text,
    update_user_message_text,
)
from acp.interfaces import Client
from acp.schema import (
    AcpMcpServer,
    AgentCapabilities,
    AudioContentBlock,
    AuthenticateResponse,
    AuthEnvVar,
    AuthMethodAgent,
    ClientCapabilities,
    CloseSessionResponse,
    Cost,
    CurrentModeUpdate,
    EmbeddedResourceContentBlock,
    EnvVarAuthMethod,
    ForkSessionResponse,
    HttpMcpServer,
    ImageContentBlock,
    Implementation,
    InitializeResponse,
    ListSessionsResponse,
    LoadSessionResponse,
    McpServerStdio,
    NewSessionResponse,
    PromptResponse,
    ResourceContentBlock,
    ResumeSessionResponse,
    SessionCapabilities,
    SessionCloseCapabilities,
    SessionConfigOptionBoolean,
    SessionConfigOptionSelect,
    SessionConfigSelectOption,
    SessionMode,
    SessionModeState,
    SessionResumeCapabilities,
    SetSessionConfigOptionResponse,
    SetSessionModeResponse,
    SseMcpServer,
    TerminalAuthMethod,
    TextContentBlock,
    UsageUpdate,
)

from acp_tui.demo.personas import PERSONAS, Persona
from acp_tui.demo.sessions import MODELS, MODES, Exchange, Session, SessionStore, sessions_dir
from acp_tui.demo.turn import Turn

AGENT_NAME = "acp-tui-demo"
AGENT_VERSION = "0.1.0"
CONTEXT_SIZE = 200_000
PRICE_PER_TOKEN = 0.000002  # USD, made up: the demo of a cost display
# The `locked` persona's login: the variable, or the mark a terminal login leaves.
DEMO_KEY_VAR = "ACP_TUI_DEMO_KEY"
LOGIN_MARK = "demo-login"

ContentBlock = (
    TextContentBlock
    | ImageContentBlock
    | AudioContentBlock
    | ResourceContentBlock
    | EmbeddedResourceContentBlock
)
McpServer = HttpMcpServer | SseMcpServer | AcpMcpServer | McpServerStdio

log = logging.getLogger("acp_tui.demo")


def prompt_text(prompt: Sequence[ContentBlock]) -> str:
    """The prompt's text blocks concatenated; other blocks carry nothing to echo."""
    return "".join(block.text for block in prompt if isinstance(block, TextContentBlock))


class DemoAgent:
    """The agent side of ACP; every method of `acp.Agent` is here so mypy sees the full protocol."""

    def __init__(
        self,
        persona: str,
        delay: float | None = None,
        chunks: int | None = None,
        *,
        store: SessionStore | None = None,
        resume: bool = True,
    ) -> None:
        if persona not in PERSONAS:
            raise ValueError(f"unknown persona {persona!r}")
        self.name = persona
        self.persona: Persona = PERSONAS[persona]
        self.delay = self.persona.delay if delay is None else delay
        self.chunks = self.persona.chunks if chunks is None else chunks
        self.store = store or SessionStore(sessions_dir())
        self.resume = resume  # advertise session/resume (else session/load only)
        self.sessions: dict[str, Session] = {}  # the sessions this process serves
        self._conn: Client | None = None

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

    def _check_login(self) -> None:
        if self.persona.login and not logged_in():
            raise RequestError.auth_required({"details": f"set {DEMO_KEY_VAR} or log in with --login"})

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
                load_session=True,
                session_capabilities=SessionCapabilities(
                    close=SessionCloseCapabilities(),
                    resume=SessionResumeCapabilities() if self.resume else None,
                ),
            ),
            agent_info=Implementation(
                name=AGENT_NAME, title=f"acp-tui demo ({self.name})", version=AGENT_VERSION
            ),
            auth_methods=list(AUTH_METHODS) if self.persona.login else [],
        )

    async def new_session(
        self,
        cwd: str,
        additional_directories: list[str] | None = None,
        mcp_servers: list[McpServer] | None = None,
        **kwargs: Any,
    ) -> NewSessionResponse:
        self._check_login()
        session = self.store.create(self.name, Path(cwd))
        self.sessions[session.session_id] = session
        log.info("new session %s (cwd=%s, %d MCP servers)", session.session_id, cwd, len(mcp_servers or ()))
        return NewSessionResponse(
            session_id=session.session_id, config_options=config_options(session), modes=modes(session)
        )

    def _reopen(self, session_id: str, cwd: str, how: str) -> Session:
        """A session served before (by this process or an earlier one), now working in `cwd`."""
        self._check_login()
        session = self.sessions.get(session_id) or self.store.load(session_id)
        if session is None:
            raise RequestError.resource_not_found(session_id)
        session.cwd = Path(cwd)
        self.sessions[session_id] = session
        self.store.save(session)
        log.info("%s session %s (cwd=%s, %d turns)", how, session_id, cwd, len(session.history))
        return session

    async def load_session(
        self,
        cwd: str,
        session_id: str,
        mcp_servers: list[McpServer] | None = None,
        additional_directories: list[str] | None = None,
        **kwargs: Any,
    ) -> LoadSessionResponse | None:
        session = self._reopen(session_id, cwd, "load")
        # The whole conversation first, as `session/prompt` would stream it; only then the answer.
        for exchange in session.history:
            for text, update in (
                (exchange.prompt, update_user_message_text),
                (exchange.answer, update_agent_message_text),
            ):
                if text:
                    await self.conn.session_update(session_id=session_id, update=update(text))
        return LoadSessionResponse(config_options=config_options(session), modes=modes(session))

    async def resume_session(
        self,
        session_id: str,
        cwd: str,
        additional_directories: list[str] | None = None,
        mcp_servers: list[McpServer] | None = None,
        **kwargs: Any,
    ) -> ResumeSessionResponse:
        if not self.resume:
            raise RequestError.method_not_found("session/resume")
        session = self._reopen(session_id, cwd, "resume")
        # An object, never None: the SDK's client cannot read a null answer to session/resume.
        return ResumeSessionResponse(config_options=config_options(session), modes=modes(session))

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
        self.store.save(session)
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

    async def close_session(self, session_id: str, **kwargs: Any) -> CloseSessionResponse | None:
        session = self.sessions.pop(session_id, None)
        if session is not None:
            session.cancelled.set()  # a turn still running on it should stop
        return CloseSessionResponse()  # its file stays: a later process may resume it

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        raise RequestError.method_not_found(f"_{method}")

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        return None

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        session = self.sessions.get(session_id)
        if session is None:
            return  # a notification cannot fail; an unknown session has nothing to stop
        if self.persona.stubborn:
            log.info("cancel for %s ignored (stubborn)", session_id)
            return
        log.info("cancel for %s", session_id)
        session.cancelled.set()

    async def prompt(self, session_id: str, prompt: list[ContentBlock], **kwargs: Any) -> PromptResponse:
        session = self._session(session_id)
        # A cancel belongs to the turn it interrupted; the next turn starts clean.
        session.cancelled.clear()
        text = prompt_text(prompt)
        turn = Turn(self.conn, session, text, delay=self.delay, chunks=self.chunks)
        log.info("prompt %s turn %d (%d chars)", session_id, turn.number, len(text))
        stop_reason = await self.persona.play(turn)
        log.info("prompt %s turn %d -> %s", session_id, turn.number, stop_reason)
        session.history.append(Exchange(text, turn.answer))
        await self._report_usage(session, text)
        self.store.save(session)
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
    from acp_tui.settings import paths

    return paths.cache_dir() / LOGIN_MARK


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
        + ", ".join(f"{name} {persona.delay:g}" for name, persona in PERSONAS.items())
        + ")",
    )
    parser.add_argument(
        "--chunks",
        type=int,
        default=None,
        metavar="N",
        help="number of answer chunks (default per persona: "
        + ", ".join(f"{name} {persona.chunks}" for name, persona in PERSONAS.items() if persona.chunks)
        + ")",
    )
    parser.add_argument("--login", action="store_true", help="log the locked persona in (in a terminal)")
    parser.add_argument("--logout", action="store_true", help="undo --login")
    parser.add_argument(
        "--no-resume",
        action="store_true",
        help="advertise session/load but not session/resume (a follow-up replays the history)",
    )
    args = parser.parse_args(argv)
    if args.delay is not None and args.delay < 0:
        parser.error("--delay must be >= 0")
    if args.chunks is not None and args.chunks < 1:
        parser.error("--chunks must be >= 1")
    return args


async def serve(agent: DemoAgent) -> None:
    """Speak ACP on stdio until the client closes stdin."""
    # The SDK counts session/resume and session/close as unstable: without this it refuses both.
    await run_agent(agent, use_unstable_protocol=True)
    if agent.persona.stubborn:
        # Outlive the end of stdin too, so only SIGKILL can end the process.
        log.info("stdin closed; stubborn agent stays alive")
        await asyncio.Event().wait()


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if args.login or args.logout:
        return terminal_login(logout=args.logout)
    agent = DemoAgent(args.persona, args.delay, args.chunks, resume=not args.no_resume)
    # stdout belongs to the protocol: every log line goes to stderr.
    logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="demo agent: %(message)s")
    if agent.persona.stubborn:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    print(f"demo agent: persona={agent.name}", file=sys.stderr, flush=True)
    try:
        asyncio.run(serve(agent))
    except KeyboardInterrupt:
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
