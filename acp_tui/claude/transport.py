"""The Claude Agent SDK's transport over a Claude Code child that we started.

The SDK would start the CLI itself, with our whole environment and in our own process group: its
credentials would reach the CLI whether the preset passed them or not, and a dispose could not end
all the CLI starts. The SDK takes a custom `Transport` instead, so the run starts the CLI like any
child (a carrier: a process group of its own, marked, its environment scrubbed, its stderr
drained, confined when the preset says so) and the SDK speaks its control protocol over this: its
lines written to the CLI's stdin and the CLI's stdout read by the same bounded, strict reader and
writer as an ACP agent's (`StdioTransport`: each line read one JSON object with a `type`, every
line both ways traced when the run is). The run ends the child; `close` only ends its input.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

from claude_agent_sdk import Transport

from acp_tui.acp.transport import StdioTransport


def stream_json_problem(message: dict[str, Any]) -> str | None:
    """What makes a line of Claude Code's stream-json no message the SDK can read, or None."""
    return None if isinstance(message.get("type"), str) else "no message type"


class ChildTransport(Transport):
    def __init__(self, lines: StdioTransport) -> None:
        self._lines = lines

    async def connect(self) -> None:
        """The child runs already (the run started it)."""

    async def write(self, data: str) -> None:
        """What the SDK writes: JSON lines of its own making."""
        for line in data.splitlines():
            if line.strip():
                await self._lines.send(json.loads(line))

    def read_messages(self) -> AsyncIterator[dict[str, Any]]:
        return self._read()

    async def _read(self) -> AsyncIterator[dict[str, Any]]:
        while (message := await self._lines.receive()) is not None:
            yield message

    async def close(self) -> None:
        await self.end_input()

    def is_ready(self) -> bool:
        return not self._lines.eof.is_set()

    async def end_input(self) -> None:
        await self._lines.close()
