"""One Codex thread as a run follows it: what the app-server says about it, read into the run.

- `item/agentMessage/delta` is the answer. A turn may hold several agent messages (one before a
  tool call, one after): each starts on a new line. A message that came whole, with no delta, is
  taken from its `item/completed`;
- every other item (reasoning, commands, file changes, MCP and web calls...) is hidden and counted
  by its type when it starts, and followed as a tool call (see `frames`);
- `thread/tokenUsage/updated` is the usage; `error` and `warning` go with the child's stderr;
- `turn/completed` ends the turn;
- the approval requests (`item/commandExecution/requestApproval`, `item/fileChange/requestApproval`)
  are decided by the run's permission broker, as an ACP agent's are, and answered with the decision
  of the option chosen (`cancel` when none was: the run stopped, or the question was cancelled).
  The server's other requests are not taken.

Notifications about other threads (a sub-agent's) are not this run's.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import anyio

from acp_tui.codex import frames
from acp_tui.codex.peer import Unanswered
from acp_tui.core.model import AgentInfo
from acp_tui.runs.provider import Conversation

if TYPE_CHECKING:
    from acp_tui.runs.base import RunBase
    from acp_tui.runs.talk import Outcome

APPROVALS = ("item/commandExecution/requestApproval", "item/fileChange/requestApproval")


class MalformedAnswer(Exception):
    """An answer of the server's that lacks what the run needs from it."""


class CodexThread(Conversation):
    """The thread (its id the run's `session_id`), and its one turn. Its options are what it runs
    with: model, sandbox, approvalPolicy, effort."""

    def __init__(self, run: RunBase) -> None:
        super().__init__(run)
        self.turn_id: str | None = None
        self.turn_known = anyio.Event()  # the turn's id is known (an interrupt needs it)
        self.ended: Mapping[str, Any] | None = None  # the turn of `turn/completed`
        self.turn_over = anyio.Event()
        self._streamed: dict[str, int] = {}  # agent message item id -> how much of it was streamed

    # Answers to our requests -------------------------------------------------------------------

    def opened(self, method: str, answer: Any) -> None:
        """`thread/start` or `thread/resume` answered: the thread, and what it runs with."""
        result = frames.mapping(answer)
        thread = frames.mapping(result.get("thread"))
        thread_id = frames.text(thread.get("id"))
        if not thread_id:
            raise MalformedAnswer(f"the app-server sent a malformed response to {method}: no thread id")
        self.session_id = thread_id
        self.agent = AgentInfo("codex", "Codex", frames.text(thread.get("cliVersion")))
        sandbox = frames.text(frames.mapping(result.get("sandbox")).get("type"))
        current = {
            "model": frames.text(result.get("model")),
            "approvalPolicy": frames.text(result.get("approvalPolicy")),
            "sandbox": re.sub(r"(?<!^)([A-Z])", r"-\1", sandbox).lower() if sandbox else None,
            "effort": frames.text(result.get("reasoningEffort")),
        }
        self.options = {key: value for key, value in current.items() if value}

    def started(self, answer: Any) -> None:
        """`turn/start` answered: the turn's id."""
        turn_id = frames.text(frames.mapping(frames.mapping(answer).get("turn")).get("id"))
        if not turn_id:
            raise MalformedAnswer("the app-server sent a malformed response to turn/start: no turn id")
        self._know_turn(turn_id)

    def outcome(self) -> Outcome:
        """How the turn ended, once `turn/completed` said it."""
        assert self.ended is not None
        return frames.turn_outcome(self.ended)

    def _know_turn(self, turn_id: str) -> None:
        if self.turn_id is None:
            self.turn_id = turn_id
            self.turn_known.set()

    # Notifications -----------------------------------------------------------------------------

    def on_notification(self, method: str, params: Mapping[str, Any]) -> None:
        if self.session_id is None or params.get("threadId", self.session_id) != self.session_id:
            return
        if method == "item/agentMessage/delta":
            self._delta(params)
        elif method in ("item/started", "item/completed"):
            self._item(frames.mapping(params.get("item")), started=method == "item/started")
        elif method == "thread/tokenUsage/updated":
            self._usage(params)
        elif method == "turn/started":
            turn_id = frames.text(frames.mapping(params.get("turn")).get("id"))
            if turn_id:
                self._know_turn(turn_id)
        elif method == "turn/completed":
            self._completed(frames.mapping(params.get("turn")))
        elif method in ("error", "warning"):
            self._said(method, params)

    def _completed(self, turn: Mapping[str, Any]) -> None:
        """The turn ended: ours, unless it is known to be another."""
        if self.ended is None and (self.turn_id is None or turn.get("id") in (self.turn_id, None)):
            self.ended = turn
            self.turn_over.set()

    def _delta(self, params: Mapping[str, Any]) -> None:
        item_id, delta = frames.text(params.get("itemId")), frames.text(params.get("delta"))
        if item_id is None or not delta:
            return
        self._message_text(item_id, delta)

    def _message_text(self, item_id: str, text: str) -> None:
        self._streamed[item_id] = self._streamed.get(item_id, 0) + len(text)
        self.run.output.append(text, part=item_id)

    def _item(self, item: Mapping[str, Any], *, started: bool) -> None:
        kind, item_id = frames.text(item.get("type")), frames.text(item.get("id"))
        if kind == "agentMessage" and item_id is not None and not started:
            # Its text in full: what no delta brought is added (a message sent whole has none).
            whole, streamed = frames.text(item.get("text")) or "", self._streamed.get(item_id, 0)
            if len(whole) > streamed:
                self._message_text(item_id, whole[streamed:])
            return
        if started and kind not in (None, *frames.CONVERSATION_ITEMS):
            self.run.hide(kind)
        call = frames.item_call(item)
        if call is not None:
            self.announce(call)

    def _usage(self, params: Mapping[str, Any]) -> None:
        usage = frames.usage_of(params)
        if usage is not None:
            self.report(usage)

    def _said(self, method: str, params: Mapping[str, Any]) -> None:
        """The server's own words about the turn, shown with its stderr."""
        message = frames.text(frames.mapping(params.get("error")).get("message")) or frames.text(
            params.get("message")
        )
        if message:
            retry = " (it retries)" if params.get("willRetry") is True else ""
            self.run.stderr.line(f"codex {method}: {message}{retry}")

    # The server's requests ---------------------------------------------------------------------

    async def on_request(self, method: str, params: Mapping[str, Any]) -> Any:
        if method not in APPROVALS:
            raise Unanswered(method)
        options, decisions = frames.approval_options(params)
        item_id = frames.text(params.get("itemId")) or "?"
        if method == APPROVALS[0]:
            call = frames.command_call(frames.text(params.get("approvalId")) or item_id, params)
        else:
            call = {"toolCallId": item_id, "kind": "edit"}
        chosen = await self.run.permissions.decide(self.ask(call, options))
        return {"decision": decisions[chosen] if chosen is not None else "cancel"}
