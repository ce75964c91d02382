"""Claude Code's tools as the rest of acp-tui sees them: their ACP tool kinds, and a permission
request (`can_use_tool`) as a `PermissionAsk` the preset's policy decides.

A request offers two options, `allow` (allow_once) and `reject` (reject_once), so that every policy
(`reject`, `allow`, rules, `ask`) decides it as it decides an ACP agent's. Nothing is ever allowed
for longer than the one call: Claude Code's own suggestions (lasting rules it would save in its
settings) are never taken. Rules read the command line from the raw input's `command` (Bash) and the
paths from its file fields and from the path Claude Code says the call touches.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from acp_tui.core.model import PermissionOptionInfo
from acp_tui.policy.ask import PermissionAsk

ALLOW = PermissionOptionInfo("allow", "Allow", "allow_once")
REJECT = PermissionOptionInfo("reject", "Reject", "reject_once")

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


def permission_ask(name: str, tool_input: Mapping[str, Any], context: Any, cwd: str) -> PermissionAsk:
    """The ask for one `can_use_tool` call (`context`: the SDK's ToolPermissionContext)."""
    paths = [value for key in PATH_FIELDS if isinstance(value := tool_input.get(key), str)]
    blocked = getattr(context, "blocked_path", None)
    if isinstance(blocked, str) and blocked not in paths:
        paths.append(blocked)
    return PermissionAsk(
        title=_title(name, tool_input, context),
        kind=tool_kind(name),
        options=(ALLOW, REJECT),
        content=str(tool_input.get("content") or tool_input.get("new_string") or ""),
        raw_input=dict(tool_input),
        locations=tuple(paths),
        cwd=cwd,
    )


def _title(name: str, tool_input: Mapping[str, Any], context: Any) -> str:
    """What a person reads: the tool and what it would do."""
    title = getattr(context, "title", None)
    if isinstance(title, str) and title:
        return title
    for field in ("command", *PATH_FIELDS, "url", "pattern"):
        value = tool_input.get(field)
        if isinstance(value, str) and value:
            return f"{name}: {value}"
    return name
