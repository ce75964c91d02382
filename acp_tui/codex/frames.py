"""What the Codex app-server says, read into what every acp-tui run uses: tool calls, permission
options, usage, and how a turn ended.

Codex's items (`commandExecution`, `fileChange`, `mcpToolCall`, ...) become tool calls in ACP's
wire shape (`toolCallId`, `title`, `kind`, `status`, `rawInput`, `locations`, `content`), so that
one tool-call state (`acp_tui.runs.tool_calls.ToolCalls`) merges them, and the policies, the
permission log and `acp-tui policy check` read a Codex request exactly as an ACP agent's: a
command's `rawInput.command` is the argv Codex will run (`bash -lc SCRIPT` is read as SCRIPT), a
file change's `rawInput.changes` names every path it writes.

An approval's decisions become permission options (`accept` -> allow_once, `acceptForSession` and
the lasting amendments -> allow_always, `decline` and `cancel` -> reject_once). Codex lists
`cancel` (no, and the turn ends) but takes `decline` too (no, and the agent goes on, as an ACP
agent does after a rejection): `decline` is always offered, before `cancel`, so that `reject` never
ends a turn. Everything here is pure, and reads frames that may be malformed: a field of the wrong
type is as good as absent.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from typing import Any

from acp_tui.core.model import PermissionOptionInfo, SubagentStopReason, Usage

# Item types that are the answer or the prompt, not work the agent did: never counted as hidden.
CONVERSATION_ITEMS = ("userMessage", "agentMessage")
# Items that are tool calls (the others, reasoning, plans, compactions..., are only counted).
TOOL_ITEMS = {
    "commandExecution": "execute",
    "fileChange": "edit",
    "mcpToolCall": "other",
    "dynamicToolCall": "other",
    "collabAgentToolCall": "other",
    "webSearch": "fetch",
    "imageView": "read",
    "imageGeneration": "other",
}
ITEM_STATUS = {
    "inProgress": "in_progress",
    "completed": "completed",
    "failed": "failed",
    "declined": "failed",
}

# decision -> (what a person reads, the ACP option kind)
DECISIONS = {
    "accept": ("Yes", "allow_once"),
    "acceptForSession": ("Yes, for the rest of the session", "allow_always"),
    "acceptWithExecpolicyAmendment": ("Yes, and from now on for commands starting {prefix}", "allow_always"),
    "decline": ("No, and go on", "reject_once"),
    "cancel": ("No, and end the turn", "reject_once"),
}
# Offered when a request lists none (a file change never does): the decisions its type declares.
DEFAULT_DECISIONS: tuple[Any, ...] = ("accept", "acceptForSession", "decline", "cancel")


def text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def objects(value: Any) -> list[Mapping[str, Any]]:
    return [item for item in value if isinstance(item, Mapping)] if isinstance(value, list) else []


# Permission options --------------------------------------------------------------------------------


def approval_options(params: Mapping[str, Any]) -> tuple[tuple[PermissionOptionInfo, ...], dict[str, Any]]:
    """The options an approval request offers, and the decision each option id sends back."""
    listed = params.get("availableDecisions")
    decisions = list(listed) if isinstance(listed, list) else list(DEFAULT_DECISIONS)
    if "decline" not in decisions:
        at = decisions.index("cancel") if "cancel" in decisions else len(decisions)
        decisions.insert(at, "decline")
    options: list[PermissionOptionInfo] = []
    answers: dict[str, Any] = {}
    for decision in decisions:
        option = _option(decision)
        if option is not None and option.option_id not in answers:
            options.append(option)
            answers[option.option_id] = decision
    return tuple(options), answers


def _option(decision: Any) -> PermissionOptionInfo | None:
    if isinstance(decision, str) and decision in DECISIONS:
        name, kind = DECISIONS[decision]
        return PermissionOptionInfo(decision, name, kind)
    if not isinstance(decision, Mapping) or len(decision) != 1:
        return None  # a decision this version of acp-tui does not know is not offered
    ((key, body),) = decision.items()
    if key == "acceptWithExecpolicyAmendment":
        prefix = mapping(body).get("execpolicy_amendment")
        words = [word for word in prefix if isinstance(word, str)] if isinstance(prefix, list) else []
        name, kind = DECISIONS[key]
        return PermissionOptionInfo(key, name.format(prefix=shlex.join(words) or "so"), kind)
    if key == "applyNetworkPolicyAmendment":
        amendment = mapping(mapping(body).get("network_policy_amendment"))
        action, host = text(amendment.get("action")), text(amendment.get("host")) or "this host"
        if action == "allow":
            return PermissionOptionInfo(key, f"Yes, and allow {host} from now on", "allow_always")
        if action == "deny":
            return PermissionOptionInfo(key, f"No, and deny {host} from now on", "reject_always")
    return None


# Tool calls ----------------------------------------------------------------------------------------


def command_argv(command: Any) -> list[str] | str | None:
    """The argv of an app-server `command` string (Codex joins its argv with shell quoting); the
    string itself when it does not split."""
    if not isinstance(command, str):
        return None
    try:
        return shlex.split(command)
    except ValueError:
        return command


def command_call(call_id: str, params: Mapping[str, Any]) -> dict[str, Any]:
    """The tool call a command approval asks about: what runs, where, and why."""
    network = mapping(params.get("networkApprovalContext"))
    if network and params.get("command") is None:
        host = text(network.get("host")) or "a host"
        raw = {"host": host, "protocol": network.get("protocol"), "reason": params.get("reason")}
        return {"toolCallId": call_id, "title": f"Network access to {host}", "kind": "fetch", "rawInput": raw}
    fields = command_fields(params)
    return {
        "toolCallId": call_id,
        "kind": "execute",
        **fields,
        "rawInput": {**fields["rawInput"], "reason": text(params.get("reason"))},
    }


def command_fields(source: Mapping[str, Any]) -> dict[str, Any]:
    actions = objects(source.get("commandActions"))
    shown = " && ".join(a["command"] for a in actions if isinstance(a.get("command"), str))
    raw = {
        "command": command_argv(source.get("command")),
        "cwd": text(source.get("cwd")),
        "parsed_cmd": actions,
    }
    return {"title": f"Run {shown or text(source.get('command')) or 'a command'}", "rawInput": raw}


def item_call(item: Mapping[str, Any]) -> dict[str, Any] | None:
    """A tool item (started or completed) as a tool call; None for any other item."""
    kind, call_id = text(item.get("type")), item.get("id")
    if kind not in TOOL_ITEMS or not isinstance(call_id, str):
        return None
    fields: dict[str, Any] = {"toolCallId": call_id, "kind": TOOL_ITEMS[kind]}
    status = ITEM_STATUS.get(text(item.get("status")) or "")
    if status is not None:
        fields["status"] = status
    if kind == "commandExecution":
        fields |= command_fields(item)
        output = text(item.get("aggregatedOutput"))
        if output:
            fields["content"] = [{"type": "content", "content": {"type": "text", "text": output}}]
    elif kind == "fileChange":
        changes = objects(item.get("changes"))
        paths = [change["path"] for change in changes if isinstance(change.get("path"), str)]
        fields["title"] = "Edit " + ", ".join(paths) if paths else "An edit"
        fields["locations"] = [{"path": path} for path in paths]
        fields["rawInput"] = {
            "changes": {c["path"]: dict(c) for c in changes if isinstance(c.get("path"), str)}
        }
        diffs = [f"{c['path']}\n{c.get('diff') or ''}" for c in changes if isinstance(c.get("path"), str)]
        fields["content"] = [{"type": "content", "content": {"type": "text", "text": d}} for d in diffs]
    elif kind == "mcpToolCall":
        fields["title"] = f"{text(item.get('server')) or '?'}: {text(item.get('tool')) or '?'}"
        fields["rawInput"] = item.get("arguments")
    elif kind == "webSearch":
        fields["title"] = f"Search the web for {text(item.get('query')) or '?'}"
    else:
        fields["title"] = kind
    return fields


# Usage and outcome ---------------------------------------------------------------------------------


def usage_of(params: Mapping[str, Any]) -> Usage | None:
    """`thread/tokenUsage/updated`: the last request's tokens (what the context holds now) of the
    model's context window (0: not said)."""
    usage = mapping(params.get("tokenUsage"))
    used = mapping(usage.get("last")).get("totalTokens")
    size = usage.get("modelContextWindow")
    if type(used) is not int:
        return None
    return Usage(used=used, size=size if type(size) is int else 0)


def turn_outcome(turn: Mapping[str, Any]) -> tuple[SubagentStopReason, str | None]:
    """How a `turn/completed` turn ended: completed, interrupted (aborted), or failed (its error)."""
    status = turn.get("status")
    if status == "completed":
        return SubagentStopReason.COMPLETED, None
    if status == "interrupted":
        return SubagentStopReason.ABORTED, None
    message = text(mapping(turn.get("error")).get("message"))
    if status == "failed":
        return SubagentStopReason.ERROR, message or "the turn failed"
    return SubagentStopReason.ERROR, f"codex ended the turn with status {status!r}"
