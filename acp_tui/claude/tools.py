"""Claude Code's tool calls as the rest of acp-tui sees them: in ACP's shape (`tool_call` fields,
merged by `acp_tui.runs.tool_calls.ToolCalls`), so that the activity view, the permission log, the
policy's rules and the record read a Claude tool call exactly as an ACP agent's.

A `tool_use` block is the call announced (`pending`), with its kind (what claude-agent-acp says of
each tool), a title a person reads, its raw input, the paths it touches and, for an edit, its
diff; its `tool_result` ends it (`completed`, or `failed` when it is an error, a denial included).

A permission request (`can_use_tool`) offers two options, `allow` (allow_once) and `reject`
(reject_once), so that every policy (`reject`, `allow`, rules, `ask`) decides it as it decides an
ACP agent's. Nothing is ever allowed for longer than the one call: Claude Code's own suggestions
(lasting rules it would save in its settings) are never taken.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from acp_tui.core.model import PermissionOptionInfo

ALLOW = PermissionOptionInfo("allow", "Allow", "allow_once")
REJECT = PermissionOptionInfo("reject", "Reject", "reject_once")
PERMISSION_OPTIONS = (ALLOW, REJECT)

# Claude Code's tools by ACP tool kind (what claude-agent-acp says of them); any other is `other`.
KINDS = {
    "Bash": "execute",
    "BashOutput": "execute",
    "KillShell": "execute",
    "Read": "read",
    "NotebookRead": "read",
    "Write": "edit",
    "Edit": "edit",
    "MultiEdit": "edit",
    "NotebookEdit": "edit",
    "Glob": "search",
    "Grep": "search",
    "LS": "search",
    "WebFetch": "fetch",
    "WebSearch": "fetch",
    "Task": "think",
    "TodoWrite": "think",
    "ExitPlanMode": "think",
}
PATH_FIELDS = ("file_path", "notebook_path", "path")


def tool_kind(name: str) -> str:
    return KINDS.get(name, "other")


def tool_call(
    call_id: str | None,
    name: str,
    tool_input: Mapping[str, Any],
    *,
    title: str | None = None,
    blocked_path: str | None = None,
) -> dict[str, Any]:
    """A `tool_use` (or the permission request for one: Claude Code's `title` sentence and the
    path that made it ask, when it gives them) as ACP's `tool_call` fields."""
    paths = [value for key in PATH_FIELDS if isinstance(value := tool_input.get(key), str)]
    if blocked_path and blocked_path not in paths:
        paths.append(blocked_path)
    call: dict[str, Any] = {
        "toolCallId": call_id,
        "title": title or _title(name, tool_input),
        "kind": tool_kind(name),
        "status": "pending",
        "rawInput": dict(tool_input),
        "locations": [{"path": path} for path in paths],
    }
    diff = _diff(name, tool_input)
    if diff is not None:
        call["content"] = [diff]
    return call


def tool_result(call_id: str, content: Any, is_error: bool | None, *, kind: str | None) -> dict[str, Any]:
    """A `tool_result` as ACP's `tool_call_update`: how the call ended, and what it gave back (an
    edit keeps its diff as its content)."""
    update: dict[str, Any] = {
        "toolCallId": call_id,
        "status": "failed" if is_error else "completed",
        "rawOutput": content,
    }
    if kind != "edit":
        texts = (
            [content]
            if isinstance(content, str)
            else [block.get("text") for block in content or () if isinstance(block, Mapping)]
        )
        update["content"] = [
            {"type": "content", "content": {"type": "text", "text": text}}
            for text in texts
            if isinstance(text, str)
        ]
    return update


def _title(name: str, tool_input: Mapping[str, Any]) -> str:
    """What a person reads: the tool and what it would do."""
    for field in ("command", *PATH_FIELDS, "url", "pattern"):
        value = tool_input.get(field)
        if isinstance(value, str) and value:
            return f"{name}: {value}"
    return name


def _diff(name: str, tool_input: Mapping[str, Any]) -> dict[str, Any] | None:
    """An edit's change, as ACP's `diff` content: a file written whole, or one string replaced."""
    path = tool_input.get("file_path")
    if not isinstance(path, str):
        return None
    if name == "Write":
        return {"type": "diff", "path": path, "oldText": None, "newText": tool_input.get("content")}
    if name == "Edit":
        old, new = tool_input.get("old_string"), tool_input.get("new_string")
        return {"type": "diff", "path": path, "oldText": old, "newText": new}
    return None
