"""One tool-call state per session, merged by id: what every reader of a tool call reads.

ACP announces a tool call with `tool_call` and changes it with `tool_call_update`, whose omitted
fields are unchanged; a permission request's `toolCall` is an update too, and may carry nothing but
the id (Mistral Vibe's does: its kind, title, raw input and locations are those announced before).
Agents also ask before announcing, announce twice, or only ever update: every frame is
create-or-update here. The live decision (the run), the permission log, the activity view, `acp-tui
policy check` and replay all build what they decide on from this one state, so a dry run decides
as the live run did.

It works on the wire's JSON shape (camelCase keys), so that a trace read back and the SDK's models
(dumped with `by_alias`) meet in one place; nothing here imports the SDK. The SDK's own
`acp.contrib.SessionAccumulator` merges the same way, but takes only its models (a trace would
have to be validated into them first) and copies its whole state at every update.
"""

from __future__ import annotations

import difflib
import json
import time
from collections.abc import Mapping, Sequence
from typing import Any

from acp_tui.core.model import PermissionOptionInfo, ToolCallInfo
from acp_tui.policy.ask import PermissionAsk

ENDED = ("completed", "failed")
FIELDS = ("title", "kind", "status", "content", "locations", "rawInput", "rawOutput")


class ToolCalls:
    """Every tool call of one session, by id, in the order they were first heard of."""

    def __init__(self) -> None:
        self._fields: dict[str, dict[str, Any]] = {}
        self._times: dict[str, tuple[float, float | None]] = {}

    def merge(self, update: Mapping[str, Any]) -> ToolCallInfo | None:
        """Fold a `tool_call`, `tool_call_update` or a permission request's `toolCall` in; the
        call as it stands now (None: no usable id)."""
        call_id = update.get("toolCallId")
        if not isinstance(call_id, str | int) or isinstance(call_id, bool):
            return None
        key = str(call_id)
        merged = self._fields.setdefault(key, {})
        merged.update({name: update[name] for name in FIELDS if update.get(name) is not None})
        now = time.monotonic()
        started, ended = self._times.get(key, (now, None))
        if ended is None and merged.get("status") in ENDED:
            ended = now
        self._times[key] = (started, ended)
        return self.get(key)

    def get(self, call_id: str) -> ToolCallInfo | None:
        fields = self._fields.get(call_id)
        if fields is None:
            return None
        started, ended = self._times[call_id]
        status = fields.get("status")
        return ToolCallInfo(
            id=call_id,
            title=_text(fields.get("title")),
            kind=_text(fields.get("kind")),
            status=status if isinstance(status, str) else "pending",
            raw_input=fields.get("rawInput"),
            paths=paths_of(fields),
            content=content_text(fields),
            started_at=started,
            ended_at=ended,
        )

    def all(self) -> tuple[ToolCallInfo, ...]:
        return tuple(call for key in self._fields if (call := self.get(key)) is not None)

    def ask(
        self, tool_call: Mapping[str, Any], options: Sequence[PermissionOptionInfo], cwd: str | None
    ) -> PermissionAsk:
        """A permission request as a policy sees it: its `toolCall` merged into what was
        announced before it."""
        call = self.merge(tool_call)
        if call is None:  # no id: the request alone is all there is
            fields = {name: tool_call.get(name) for name in FIELDS}
            title, kind = _text(fields["title"]), _text(fields["kind"])
            return PermissionAsk(
                title=title or f"an untitled {kind or 'tool'} call",
                kind=kind,
                options=tuple(options),
                content=content_text(fields),
                raw_input=fields["rawInput"],
                locations=paths_of(fields),
                cwd=cwd,
            )
        return PermissionAsk(
            title=call.label,
            kind=call.kind,
            options=tuple(options),
            content=call.content,
            raw_input=call.raw_input,
            locations=call.paths,
            cwd=cwd,
        )


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _objects(value: Any) -> list[Mapping[str, Any]]:
    return [item for item in value if isinstance(item, Mapping)] if isinstance(value, list) else []


def paths_of(fields: Mapping[str, Any]) -> tuple[str, ...]:
    """The paths of its `locations`, then those of its `diff` content (an edit may name its file
    only there)."""
    paths = [loc["path"] for loc in _objects(fields.get("locations")) if isinstance(loc.get("path"), str)]
    paths += [
        item["path"]
        for item in _objects(fields.get("content"))
        if item.get("type") == "diff" and isinstance(item.get("path"), str)
    ]
    return tuple(dict.fromkeys(path for path in paths if path))


def content_text(fields: Mapping[str, Any]) -> str:
    """Its content as a person reads it: text as is, edits as unified diffs; else its raw input."""
    parts: list[str] = []
    for item in _objects(fields.get("content")):
        kind = item.get("type")
        if kind == "diff" and isinstance(item.get("path"), str):
            old, new = item.get("oldText"), item.get("newText")
            path = item["path"]
            diff = difflib.unified_diff(
                (old if isinstance(old, str) else "").splitlines(keepends=True),
                (new if isinstance(new, str) else "").splitlines(keepends=True),
                fromfile=f"a/{path}",
                tofile=f"b/{path}",
            )
            parts.append("".join(diff) or f"{path}: no change")
        elif kind == "content":
            block = item.get("content")
            text = block.get("text") if isinstance(block, Mapping) else None
            shown = block.get("type") if isinstance(block, Mapping) else None
            parts.append(text if isinstance(text, str) else f"[{shown or 'content'}]")
        elif kind == "terminal":
            parts.append(f"[terminal {item.get('terminalId')}]")
    raw = fields.get("rawInput")
    if raw is not None and not parts:
        try:
            parts.append(json.dumps(raw, ensure_ascii=False, indent=2))
        except (TypeError, ValueError):
            parts.append(str(raw))
    return "\n".join(parts)
