"""One A2A run: one agent card, one message streamed, one task, one result.

The lifecycle, the events, the stop and the cleanup are every run's (`acp_tui.runs.base.RunBase`);
there is no child here: the agent runs elsewhere, behind `url`, and the run ends with its HTTP
connections. The conversation: the agent card discovered at `url` (within the handshake timeout),
a client made for the interface the card names (the SDK speaks A2A 1.0, and 0.3 through its
compatibility layer: `message/stream`, `tasks/cancel`), then the prompt as one user message,
streamed (`SendStreamingMessage`) as the turn. Told to stop, the run sends the task's cancel
(`CancelTask`) and reads on for the cancel grace, then stops reading. What the stream says is read
by `TaskStream`; its last state is the stop reason. With a `trace_dir`, the card, the request, each
event of the stream and the cancel are traced, as A2A's JSON.

The preset's `headers` go with every request, the card's included; like `env` they are secrets,
masked wherever the agent's words are shown. A follow-up sends its message in the conversation
(`contextId`) of the run it continues.
"""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable, Mapping
from functools import cached_property
from typing import TYPE_CHECKING, Any

from acp_tui.a2a.answer import TaskStream
from acp_tui.core.model import AgentInfo, SessionStarted
from acp_tui.runs.extras import missing_extra
from acp_tui.runs.phase import Phase
from acp_tui.runs.provider import ProviderRun
from acp_tui.runs.talk import Outcome

if TYPE_CHECKING:
    import httpx
    from a2a.client import Client
    from a2a.types import AgentCard
    from google.protobuf.message import Message as ProtoMessage


class A2aSubagentRun(ProviderRun):
    card: AgentCard | None = None  # the agent card, once discovered
    agent: AgentInfo | None = None
    step = "the agent card"

    @cached_property
    def task(self) -> TaskStream:
        return TaskStream(self)

    def refusal(self) -> str | None:
        if not self.config.url:
            return 'an A2A agent needs a "url"'
        if self.config.sandbox != "none":  # never unconfined instead: nothing is sent
            return "an A2A agent runs elsewhere: the sandbox cannot confine it"
        return missing_extra("a2a", "a2a")

    async def converse(self) -> Outcome:
        import httpx

        self.start_trace()
        self.advance(Phase.INITIALIZING)
        # No read timeout: a silent agent is the idle timeout's business, and a slow one is none.
        timeout = httpx.Timeout(None, connect=self.config.handshake_timeout)
        hooks = {"request": [headers_for(self.config.url or "", self.config.headers)]}
        async with httpx.AsyncClient(timeout=timeout, follow_redirects=False, event_hooks=hooks) as http:
            return await self._card_and_task(http)

    async def _card_and_task(self, http: httpx.AsyncClient) -> Outcome:
        from a2a.client import A2ACardResolver, ClientConfig, ClientFactory

        assert self.config.url is not None
        with self.deadlines.handshake_step():
            self.card = card = await A2ACardResolver(http, self.config.url).get_agent_card()
        self._traced("in", card)
        self.heard_from_agent()
        self.agent = AgentInfo(name=card.name, version=card.version or None)
        client = ClientFactory(ClientConfig(httpx_client=http, streaming=True)).create(card)
        self.emit(SessionStarted(self.guard.json(self.agent), {}))
        self.advance(Phase.PROMPTING)
        self.step = "the task"
        return await self.prompt(client)

    async def prompt(self, client: Client) -> Outcome:
        """The turn: the prompt's task streamed (`CancelTask` when told to stop), to how it ended."""
        return await self.talk.turn_outcome(
            lambda: self._stream(client), lambda: self._cancel(client), self.task.outcome
        )

    async def _stream(self, client: Client) -> None:
        from a2a.types import Message, Part, Role, SendMessageRequest

        # The SDK's messages default to the agent's role: this one is the user's.
        message = Message(
            role=Role.ROLE_USER,
            message_id=str(uuid.uuid4()),
            parts=[Part(text=self.request.prompt)],
            context_id=self.request.session_id or "",
        )
        request = SendMessageRequest(message=message)
        self._traced("out", request)
        async for event in client.send_message(request):
            self._traced("in", event)
            self.task.read(event)

    async def _cancel(self, client: Client) -> None:
        from a2a.types import CancelTaskRequest

        await self.task.task_known.wait()  # the cancel grace bounds this wait too
        assert self.task.task_id is not None
        request = CancelTaskRequest(id=self.task.task_id)
        self._traced("out", request)
        self._traced("in", await client.cancel_task(request))

    def _traced(self, direction: str, message: ProtoMessage) -> None:
        """An A2A object in the run's trace (when it has one), as A2A's JSON spells it."""
        if self.trace is not None:
            from google.protobuf.json_format import MessageToDict

            self.trace.write(direction, MessageToDict(message))

    async def explain(self, exc: Exception) -> str | None:
        import httpx
        from a2a.utils.errors import A2AError
        from google.protobuf.json_format import ParseError

        if isinstance(exc, TimeoutError):  # the handshake's deadline (an OSError too)
            return await super().explain(exc)
        # ValueError: a card whose interfaces the SDK cannot speak; ParseError: a malformed frame.
        if isinstance(exc, A2AError | ParseError | ValueError | httpx.HTTPError | OSError):
            return f"{self.step} failed: {exc}"
        return None

    def result_fields(self) -> dict[str, Any]:
        context = self.task.context_id
        return {
            "agent": self.guard.json(self.agent),
            "session_id": context,
            "continuation": "resume" if context else None,
        }


def headers_for(url: str, headers: Mapping[str, str]) -> Callable[[httpx.Request], Awaitable[None]]:
    """A request hook giving the preset's `headers` (its credentials) to requests for `url`'s
    origin only: the agent card names where the task goes, and it may name another host."""
    import httpx

    ours = httpx.URL(url)

    async def add(request: httpx.Request) -> None:
        there = request.url
        if (there.scheme, there.host, there.port) == (ours.scheme, ours.host, ours.port):
            request.headers.update(headers)

    return add
