"""One session's `session/update`s as a run takes them.

The answer's text goes to the run's output buffer; every other kind is counted and hidden; tool
calls are merged by id (`ToolCalls`) and followed as events; usage and option changes reach the
session's setup. The history `session/load` replays is consumed, counted as `history`, never taken
for the answer.

Updates are kept, in order, while their session is not known yet (some agents stream before their
`session/new` answer arrives; a spare hears its agent before any run takes it) and replayed once it
is. What is kept is bounded: at most `MAX_EARLY_UPDATES`, their text charged to the answer's cap as
it comes, so an early flood cannot grow memory.

The SDK runs each notification as a task of its own: nothing here awaits, or chunks could reorder.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any

from acp_tui.core.model import CommandsOffered, PermissionOptionInfo, Usage, UsageReported
from acp_tui.policy.ask import PermissionAsk
from acp_tui.runs.tool_calls import ToolCalls

if TYPE_CHECKING:
    from acp_tui.acp.session_setup import SessionSetup
    from acp_tui.runs.base import RunBase

MAX_EARLY_UPDATES = 10_000
TOOL_CALL_KINDS = ("tool_call", "tool_call_update")


class SessionUpdates:
    def __init__(self, cap: int) -> None:
        self.session_id: str | None = None
        self.replaying = False  # `session/load` is replaying the session's history
        self.tool_calls = ToolCalls()
        self.tool_kinds: Counter[str] = Counter()
        self.usage: Usage | None = None
        self.lost = False  # kept early, or arriving later: the answer misses a part
        self._cap = cap
        self._early: list[tuple[str, str, str | None, Any]] = []  # (session id, kind, text, update)
        self._early_chars = 0
        self.setup: SessionSetup | None = None  # follows the session's options and usage
        self._run: RunBase | None = None

    def attach(self, run: RunBase) -> None:
        """The run that takes these updates from now on."""
        self._run = run
        if self.lost:
            run.output.lost()

    def opened(self, session_id: str) -> None:
        """The run's session is known: the updates kept for it are its own now. (A spare's session,
        opened before any run took it, is its run's to declare.)"""
        if self._run is None:
            return
        self.session_id = session_id
        early, self._early = self._early, []
        for kept_for, kind, text, update in early:
            if kept_for == session_id:
                self._take(kind, text, update)

    def on_update(self, session_id: str, update: Any) -> None:
        if self._run is not None and self._run.done():
            return
        kind = str(getattr(update, "session_update", "unknown"))
        text = None
        if kind == "agent_message_chunk":
            content_type = getattr(update.content, "type", "unknown")
            if content_type == "text":
                text = update.content.text
            else:
                kind = f"agent_message_chunk:{content_type}"  # counted, never shown
        if self.session_id is None:
            self._keep(session_id, kind, text, update)
        elif session_id == self.session_id:
            self._take(kind, text, update)

    def lose(self) -> None:
        """A message too large to read was dropped: the answer may miss a part, and says so."""
        self.lost = True
        if self._run is not None:
            self._run.output.lost()

    def ask(
        self, tool_call: dict[str, Any], options: tuple[PermissionOptionInfo, ...], cwd: str
    ) -> PermissionAsk:
        """What a policy decides on: the request's tool call merged into what was announced."""
        ask = self.tool_calls.ask(tool_call, options, cwd)
        self._tool_call_changed(tool_call.get("toolCallId"))
        return ask

    def _keep(self, session_id: str, kind: str, text: str | None, update: Any) -> None:
        if len(self._early) >= MAX_EARLY_UPDATES:
            if text is not None:
                self.lose()
            return
        if text is not None:
            room = self._cap - self._early_chars
            if len(text) > room:
                text = text[: max(0, room)]
                self.lose()
            if not text:
                return
            self._early_chars += len(text)
        self._early.append((session_id, kind, text, update))

    def _take(self, kind: str, text: str | None, update: Any) -> None:
        run = self._run
        assert run is not None
        if self.replaying:  # the history `session/load` replays: consumed, never the answer
            run.hide("history")
            return
        if text is not None:
            run.output.append(text)
            return
        if kind in TOOL_CALL_KINDS:
            fields = update.model_dump(mode="json", by_alias=True, exclude_unset=True)
            if kind == "tool_call":
                self.tool_kinds[str(fields.get("kind") or "other")] += 1
            self.tool_calls.merge(fields)
            self._tool_call_changed(fields.get("toolCallId"))
        usage = self.setup.on_update(update) if self.setup is not None else None
        if usage is not None:  # still counted below, as a hidden kind
            self.usage = usage
            run.emit(UsageReported(usage))
        elif kind == "available_commands_update" and self.setup is not None:
            run.emit(CommandsOffered(run.guard.json(self.setup.commands)))
        run.hide(kind)

    def _tool_call_changed(self, call_id: Any) -> None:
        if self._run is not None:
            self._run.tool_call_changed(self.tool_calls.get(str(call_id)))
