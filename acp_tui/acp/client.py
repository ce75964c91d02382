"""The ACP `Client` callbacks of one run: updates, permission requests, and refusals of fs/terminal.

This module imports the SDK (about half a second of CPU), so the run imports it only after the child
has been spawned: the child boots while we pay for it.
"""

from __future__ import annotations

import difflib
import json
from typing import Any, Protocol

import acp
from acp.schema import (
    AllowedOutcome,
    ContentToolCallContent,
    DeniedOutcome,
    FileEditToolCallContent,
    PermissionOption,
    RequestPermissionResponse,
    TerminalToolCallContent,
    ToolCallUpdate,
)

from acp_tui.core.model import PermissionOptionInfo
from acp_tui.policy.ask import PermissionAsk


class RunSink(Protocol):
    """What the client reports to: the run that owns it."""

    def on_update(self, session_id: str, update: Any) -> None: ...

    async def on_permission(self, ask: PermissionAsk) -> str | None: ...


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
        option_id = await self._sink.on_permission(permission_ask(tool_call, options))
        if option_id is None:
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return RequestPermissionResponse(outcome=AllowedOutcome(outcome="selected", option_id=option_id))

    # We declared no fs or terminal capability: the child handles its own files, and a request to
    # ours is refused. The SDK answers a missing terminal method with null, so refuse explicitly.
    async def read_text_file(self, **kwargs: Any) -> Any:
        raise acp.RequestError.method_not_found("fs/read_text_file")

    async def write_text_file(self, **kwargs: Any) -> Any:
        raise acp.RequestError.method_not_found("fs/write_text_file")

    async def create_terminal(self, **kwargs: Any) -> Any:
        raise acp.RequestError.method_not_found("terminal/create")

    async def terminal_output(self, **kwargs: Any) -> Any:
        raise acp.RequestError.method_not_found("terminal/output")

    async def release_terminal(self, **kwargs: Any) -> Any:
        raise acp.RequestError.method_not_found("terminal/release")

    async def wait_for_terminal_exit(self, **kwargs: Any) -> Any:
        raise acp.RequestError.method_not_found("terminal/wait_for_exit")

    async def kill_terminal(self, **kwargs: Any) -> Any:
        raise acp.RequestError.method_not_found("terminal/kill")

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        raise acp.RequestError.method_not_found(method)

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        return None


def permission_ask(tool_call: ToolCallUpdate, options: list[PermissionOption]) -> PermissionAsk:
    return PermissionAsk(
        title=tool_call.title or tool_call.tool_call_id,
        kind=tool_call.kind,
        options=tuple(PermissionOptionInfo(o.option_id, o.name, o.kind) for o in options),
        content=tool_call_text(tool_call),
        raw_input=_json_shaped(tool_call.raw_input),
        locations=_locations(tool_call),
    )


def _locations(tool_call: ToolCallUpdate) -> tuple[str, ...]:
    """The paths of its `locations`, then those of its `diff` content (an edit may name its file
    only there)."""
    paths = [location.path for location in tool_call.locations or ()]
    paths += [item.path for item in tool_call.content or () if isinstance(item, FileEditToolCallContent)]
    return tuple(dict.fromkeys(paths))


def _json_shaped(value: Any) -> Any:
    """Raw input as plain JSON values (the SDK may hand models or tuples), for records and rules."""
    if isinstance(value, dict):
        return {str(k): _json_shaped(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_json_shaped(v) for v in value]
    if value is None or isinstance(value, str | int | float | bool):
        return value
    dump = getattr(value, "model_dump", None)
    return _json_shaped(dump(mode="json", by_alias=True)) if dump else str(value)


def tool_call_text(tool_call: ToolCallUpdate) -> str:
    """The tool call's content as a person would read it: text as is, edits as unified diffs."""
    parts: list[str] = []
    for item in tool_call.content or ():
        if isinstance(item, FileEditToolCallContent):
            diff = difflib.unified_diff(
                (item.old_text or "").splitlines(keepends=True),
                item.new_text.splitlines(keepends=True),
                fromfile=f"a/{item.path}",
                tofile=f"b/{item.path}",
            )
            parts.append("".join(diff) or f"{item.path}: no change")
        elif isinstance(item, ContentToolCallContent):
            text = getattr(item.content, "text", None)
            parts.append(text if text is not None else f"[{item.content.type}]")
        elif isinstance(item, TerminalToolCallContent):
            parts.append(f"[terminal {item.terminal_id}]")
    if tool_call.raw_input is not None and not parts:
        parts.append(json.dumps(_json_shaped(tool_call.raw_input), ensure_ascii=False, indent=2))
    return "\n".join(parts)
