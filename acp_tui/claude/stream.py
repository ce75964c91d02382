"""What Claude Code says during a turn, read into its run.

The answer is the text Claude streams (the SDK's `StreamEvent`s with `text_delta`s, asked for with
`--include-partial-messages`), each content block a part of its own (on a new line); the whole
assistant messages that follow repeat it and are not the answer again. What a sub-agent says
(`parent_tool_use_id`) is Claude's business, not the answer. Thinking, tool calls and their
results are counted and hidden, under ACP's names for them (`agent_thought_chunk`, `tool_call`,
`tool_call_update`); each tool call is followed as ACP's are (`acp_tui.claude.tools`: announced by
its `tool_use`, asked about, ended by its `tool_result`), its kind counted. The turn's
`ResultMessage` gives the stop reason, the usage and the cost.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, get_args

from acp_tui.acp.stop_reasons import map_stop_reason
from acp_tui.claude.tools import tool_call, tool_result
from acp_tui.core.model import (
    AgentInfo,
    CommandInfo,
    CommandsOffered,
    ConfigOptionInfo,
    Cost,
    SessionStarted,
    SubagentStopReason,
    Usage,
)
from acp_tui.runs.base import RunBase
from acp_tui.runs.provider import Conversation
from acp_tui.runs.talk import Outcome

if TYPE_CHECKING:
    from claude_agent_sdk import ResultMessage

# Anthropic's stop reasons beyond the RFC's map that end a turn well.
ENDED_WELL = {"stop_sequence": "end_turn"}
# The tokens of the context a turn used, as the Messages API counts them.
CONTEXT_TOKENS = ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens", "output_tokens")


class TurnStream(Conversation):
    """The turn; its options are `model` and `mode`, as chosen."""

    def __init__(self, run: RunBase) -> None:
        super().__init__(run)
        self.offered: tuple[ConfigOptionInfo, ...] = ()
        self.commands: tuple[CommandInfo, ...] = ()  # its slash commands, as `initialize` said
        self.result: ResultMessage | None = None
        self._message: Any = None  # the id of the message being streamed

    def started(self, info: Mapping[str, Any] | None, chosen: Mapping[str, str]) -> None:
        """Claude Code's answer to `initialize`: its version, its models and permission mode, and
        what the preset chose of them (`chosen`); its slash commands."""
        from claude_agent_sdk import PermissionMode

        info = info or {}
        version = info.get("claude_code_version")
        self.agent = AgentInfo(name="Claude Code", version=version if isinstance(version, str) else None)
        models = [m.get("value") for m in info.get("models") or () if isinstance(m, dict)]
        mode = info.get("current_permission_mode")
        self.options = {"model": chosen.get("model", "default"), "mode": chosen.get("mode", str(mode))}
        self.offered = (
            ConfigOptionInfo("model", "Model", "model", self.options["model"], _strings(models)),
            ConfigOptionInfo("mode", "Mode", "mode", self.options["mode"], get_args(PermissionMode)),
        )
        guard = self.run.guard
        agent, options, offered = guard.json(self.agent), guard.json(self.options), guard.json(self.offered)
        self.run.emit(SessionStarted(agent, options, offered=offered))
        self.commands = guard.json(_commands(info.get("commands")))
        if self.commands:
            self.run.emit(CommandsOffered(self.commands))

    def read(self, message: Any) -> None:
        """One message of the SDK's."""
        from claude_agent_sdk import AssistantMessage, ResultMessage, StreamEvent, SystemMessage, UserMessage

        self.run.heard_from_agent()
        if getattr(message, "parent_tool_use_id", None):
            self.run.hide("subagent")
        elif isinstance(message, StreamEvent):
            self._event(message.event)
        elif isinstance(message, AssistantMessage):
            self._assistant(message)
        elif isinstance(message, UserMessage):
            self._user(message)
        elif isinstance(message, SystemMessage):
            self._system(message.subtype, message.data)
        elif isinstance(message, ResultMessage):
            self._result(message)
        else:
            self.run.hide(type(message).__name__.removesuffix("Message").lower() or "other")

    def outcome(self) -> Outcome:
        result = self.result
        if result is None:
            return SubagentStopReason.ERROR, "Claude Code ended the turn without a result"
        if result.is_error or result.subtype != "success":
            said = "; ".join(result.errors or []) or result.result or result.subtype
            return SubagentStopReason.ERROR, f"Claude Code: {said}"
        stop_reason = result.stop_reason or "end_turn"
        mapped = map_stop_reason(ENDED_WELL.get(stop_reason, stop_reason))
        if mapped is SubagentStopReason.ERROR:
            return mapped, f"Claude stopped with {stop_reason!r}"
        return mapped, None

    # The messages ----------------------------------------------------------------------------

    def _event(self, event: dict[str, Any]) -> None:
        delta = event.get("delta") if event.get("type") == "content_block_delta" else None
        if isinstance(delta, dict) and delta.get("type") == "text_delta":
            text = delta.get("text")
            if isinstance(text, str):
                # A block's deltas go on where they ended; the next block starts a new line.
                self.run.output.append(text, part=(self._message, event.get("index")))
            return
        if event.get("type") == "message_start":
            self._message = (event.get("message") or {}).get("id")

    def _assistant(self, message: Any) -> None:
        from claude_agent_sdk import TextBlock, ThinkingBlock, ToolUseBlock

        for block in message.content:
            if isinstance(block, TextBlock):
                continue  # streamed already, as its deltas
            if isinstance(block, ToolUseBlock):
                self.announce(tool_call(block.id, block.name, block.input))
                self.run.hide("tool_call")
            elif isinstance(block, ThinkingBlock):
                self.run.hide("agent_thought_chunk")
            else:
                self.run.hide(type(block).__name__.removesuffix("Block").lower())

    def _user(self, message: Any) -> None:
        """What Claude Code tells the model: tool results, which end their calls."""
        from claude_agent_sdk import ToolResultBlock

        blocks = message.content if isinstance(message.content, list) else ()
        results = [block for block in blocks if isinstance(block, ToolResultBlock)]
        for block in results:
            call = self.tool_calls.get(block.tool_use_id)
            kind = call.kind if call is not None else None
            self.follow(tool_result(block.tool_use_id, block.content, block.is_error, kind=kind))
            self.run.hide("tool_call_update")
        if not results:
            self.run.hide("user")

    def _system(self, subtype: str, data: dict[str, Any]) -> None:
        self.run.hide(f"system:{subtype}")
        session = data.get("session_id")
        if subtype == "init" and isinstance(session, str):
            self.session_id = session

    def _result(self, result: ResultMessage) -> None:
        self.result = result = _checked(result)
        self.session_id = result.session_id or self.session_id
        tokens = result.usage or {}
        used = sum(value for key in CONTEXT_TOKENS if isinstance(value := tokens.get(key), int))
        windows = [
            window
            for usage in (result.model_usage or {}).values()
            if isinstance(window := dict(usage).get("contextWindow"), int)
        ]
        cost = Cost(result.total_cost_usd, "USD") if result.total_cost_usd is not None else None
        self.report(Usage(used=used, size=max(windows, default=0), cost=cost))


def _commands(listed: Any) -> tuple[CommandInfo, ...]:
    """The slash commands of Claude Code's `initialize` answer (`name`, `description`,
    `argumentHint`), those that are not all strings left out."""
    commands = []
    for command in listed if isinstance(listed, list) else ():
        said = command if isinstance(command, dict) else {}
        name, description, hint = said.get("name"), said.get("description", ""), said.get("argumentHint")
        if isinstance(name, str) and isinstance(description, str) and isinstance(hint, str | None):
            commands.append(CommandInfo(name, description, hint or None))
    return tuple(commands)


def _strings(values: list[Any]) -> tuple[str, ...]:
    return tuple(value for value in values if isinstance(value, str))


def _checked(result: ResultMessage) -> ResultMessage:
    """The result with each field of the type it declares: the SDK builds it from the CLI's JSON
    unchecked, and a cost that is a string would raise where it is added up."""
    cost: Any = result.total_cost_usd
    finite = isinstance(cost, int | float) and not isinstance(cost, bool) and math.isfinite(cost)
    model_usage: Any = result.model_usage
    if isinstance(model_usage, dict):
        model_usage = {k: v for k, v in model_usage.items() if isinstance(v, dict)}
    errors: Any = result.errors
    return dataclasses.replace(
        result,
        subtype=_text(result.subtype) or "error",
        is_error=result.is_error if isinstance(result.is_error, bool) else True,
        session_id=_text(result.session_id) or "",
        stop_reason=_text(result.stop_reason),
        result=_text(result.result),
        total_cost_usd=float(cost) if finite else None,
        usage=result.usage if isinstance(result.usage, dict) else None,
        model_usage=model_usage if isinstance(model_usage, dict) else None,
        errors=[e for e in errors if isinstance(e, str)] if isinstance(errors, list) else None,
    )


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None
