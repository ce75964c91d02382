"""The demo's personas by name: what each plays, and its defaults for `--delay` and `--chunks`.

A persona is an async function of a `Turn` (acp_tui/demo/turn.py) returning its stop reason; it
knows nothing of the agent. Each family lives in its own module: `pong`, `essay`, `simple` (one
stop reason each, and `echo`), `editing` (`edit`, `create`), `chat`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from acp.schema import StopReason

from acp_tui.demo.personas import chat, editing, essay, pong, simple
from acp_tui.demo.turn import Turn


@dataclass(frozen=True)
class Persona:
    play: Callable[[Turn], Awaitable[StopReason]]
    delay: float = 0.0  # the pause between streamed chunks; `--delay` overrides it
    chunks: int = 0  # how many pieces, where a count makes sense; `--chunks` overrides it
    login: bool = False  # needs a login first (the agent checks it)
    stubborn: bool = False  # the agent lets it ignore cancel, SIGTERM and the end of stdin


PERSONAS: dict[str, Persona] = {
    "pong": Persona(pong.play),
    "essay": Persona(essay.play, delay=0.02),
    "slow": Persona(simple.slow, delay=0.3, chunks=60),
    "stubborn": Persona(simple.stubborn, delay=0.3, stubborn=True),
    "refusal": Persona(simple.refusal, delay=0.05),
    "max-tokens": Persona(simple.max_tokens, delay=0.05, chunks=20),
    "max-turn-requests": Persona(simple.max_turn_requests, delay=0.05),
    "echo": Persona(simple.echo),
    "locked": Persona(simple.echo, login=True),  # logged in, it answers as echo
    "edit": Persona(editing.edit, chunks=editing.DEFAULT_EDIT_LINES),
    "create": Persona(editing.create, chunks=editing.DEFAULT_CREATED_FILES),
    "chat": Persona(chat.play, delay=0.02),
}
