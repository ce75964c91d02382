"""The Claude Agent SDK's transport over a Claude Code child that we started.

The SDK would start the CLI itself, with our whole environment and in our own process group: its
credentials would reach the CLI whether the preset passed them or not, and a dispose could not end
all the CLI starts. The SDK takes a custom `Transport` instead, so the run starts the CLI like any
child (a carrier: a process group of its own, marked, its environment scrubbed, its stderr
drained) and the SDK speaks its control protocol over this: lines written to the CLI's stdin, and
its stdout read by the same bounded, strict reader as an ACP agent's (`StdioTransport`), each line
one JSON object with a `type`. The run ends the child; `close` only ends its input.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

from claude_agent_sdk import Transport

from acp_tui.acp.transport import StdioTransport


def stream_json_problem(message: dict[str, Any]) -> str | None:
    """What makes a line of Claude Code's stream-json no message the SDK can read, or None."""
    return None if isinstance(message.get("type"), str) else "no message type"


class ChildTransport(Transport):
    def __init__(self, lines: StdioTransport, stdin: asyncio.StreamWriter) -> None:
        self._lines = lines
        self._stdin = stdin

    async def connect(self) -> None:
        """The child runs already (the run started it)."""

    async def write(self, data: str) -> None:
        self._stdin.write(data.encode())
        await self._stdin.drain()

    def read_messages(self) -> AsyncIterator[dict[str, Any]]:
        return self._read()

    async def _read(self) -> AsyncIterator[dict[str, Any]]:
        while (message := await self._lines.receive()) is not None:
            yield message

    async def close(self) -> None:
        await self.end_input()

    def is_ready(self) -> bool:
        return not self._stdin.is_closing()

    async def end_input(self) -> None:
        self._stdin.close()
