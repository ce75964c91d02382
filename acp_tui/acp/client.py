"""The ACP `Client` callbacks of one run: updates, permission requests, questions to the person
(`elicitation/create`), and refusals of fs/terminal.

This module imports the SDK (about half a second of CPU), so the run imports it only after the child
has been spawned: the child boots while we pay for it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Protocol

import acp
from acp.schema import (
    AcceptElicitationResponse,
    AllowedOutcome,
    CancelElicitationResponse,
    DeclineElicitationResponse,
    DeniedOutcome,
    ElicitationFormRequestMode,
    ElicitationFormSessionMode,
    ElicitationUrlRequestMode,
    ElicitationUrlSessionMode,
    PermissionOption,
    RequestPermissionResponse,
    ToolCallUpdate,
)

from acp_tui.core.elicitation import ElicitationAnswer, ElicitationAsk, ElicitationForm
from acp_tui.core.model import PermissionOptionInfo

FormMode = ElicitationFormSessionMode | ElicitationFormRequestMode
UrlMode = ElicitationUrlSessionMode | ElicitationUrlRequestMode

# The client methods of capabilities we never declared, and the JSON-RPC method each answers.
REFUSED = {
    "read_text_file": "fs/read_text_file",
    "write_text_file": "fs/write_text_file",
    "create_terminal": "terminal/create",
    "terminal_output": "terminal/output",
    "release_terminal": "terminal/release",
    "wait_for_terminal_exit": "terminal/wait_for_exit",
    "kill_terminal": "terminal/kill",
}


class RunSink(Protocol):
    """What the client reports to: the handshake object that holds the connection (it hands both on
    to the run it serves)."""

    def on_update(self, session_id: str, update: Any) -> None: ...

    async def on_permission(
        self, tool_call: dict[str, Any], options: tuple[PermissionOptionInfo, ...]
    ) -> str | None: ...

    async def on_question(self, ask: ElicitationAsk) -> ElicitationAnswer: ...


class RunClient:
    """Duck-typed `acp.Client`. Every handler takes `**kwargs`: the SDK spreads `_meta` into them."""

    def __init__(self, sink: RunSink) -> None:
        self._sink = sink

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        # The SDK runs each notification as its own task: any await here could reorder chunks.
        self._sink.on_update(session_id, update)

    async def request_permission(
        self,
        session_id: str,
        tool_call: ToolCallUpdate,
        options: list[PermissionOption],
        **kwargs: Any,
    ) -> RequestPermissionResponse:
        fields = tool_call.model_dump(mode="json", by_alias=True, exclude_unset=True)
        offered = tuple(PermissionOptionInfo(o.option_id, o.name, o.kind) for o in options)
        option_id = await self._sink.on_permission(fields, offered)
        if option_id is None:
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return RequestPermissionResponse(outcome=AllowedOutcome(outcome="selected", option_id=option_id))

    async def create_elicitation(self, message: str, mode: FormMode | UrlMode, **kwargs: Any) -> Any:
        """A question for the person (`elicitation/create`): a form to fill, or a URL to open.
        (The SDK itself refuses a mode it does not know.)"""
        if isinstance(mode, FormMode):
            schema = mode.requested_schema.model_dump(mode="json", by_alias=True, exclude_none=True)
            ask = ElicitationAsk("form", message, ElicitationForm.from_schema(schema), schema=schema)
        else:
            ask = ElicitationAsk("url", message, url=str(mode.url))
        answer = await self._sink.on_question(ask)
        if answer.action == "accept":
            return AcceptElicitationResponse(action="accept", content=answer.content)
        if answer.action == "decline":
            return DeclineElicitationResponse(action="decline")
        return CancelElicitationResponse(action="cancel")

    async def complete_elicitation(self, elicitation_id: str, **kwargs: Any) -> None:
        """The agent says a URL's interaction is over: nothing here waits for it."""
        return None

    def __getattr__(self, name: str) -> Callable[..., Awaitable[Any]]:
        """We declared no fs or terminal capability: the child handles its own files, and a request
        to ours is refused. The SDK answers a missing terminal method with null, so each is here."""
        method = REFUSED.get(name)
        if method is None:
            raise AttributeError(name)

        async def refuse(*args: Any, **kwargs: Any) -> Any:
            raise acp.RequestError.method_not_found(method)

        return refuse

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        raise acp.RequestError.method_not_found(method)

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        return None
