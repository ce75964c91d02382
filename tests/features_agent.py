"""A stdlib ACP agent that offers what ACP 1.21 added (issue 31): slash commands, questions to the
person (`elicitation/create`, form and URL modes), usage reports with context size and cost, and
boolean config options.

    python features_agent.py key=value ...

Options (all optional):
  commands=SPEC     after session/new, an `available_commands_update`: `name:description[:hint]`
                    separated by `|` (default: `web:Search the web:query|test:Run the tests`);
                    `commands=none` sends none
  hostile=1         the commands, the form's titles and the URL carry markup and control characters
  elicit=MODES      during the prompt, before the answer: `form`, `url`, or both (`form,url`); the
                    answer then carries `[elicitation form: <the response, as JSON>]` for each, or
                    `[elicitation form: not declared]` when the client did not declare the mode
  url=URL           the URL of the URL mode (default https://auth.example.com/login?state=xyz)
  costs=A,B,...     during the prompt, one `usage_update` per amount (cumulative cost, in `currency`,
                    default USD), each followed by a chunk `<n>`; then the answer
  size=N            the context window of every usage report (default 200000); `used` grows by 1000
                    with each report
  hold=1            after the costs, report nothing more and wait until cancelled (a run that
                    can only end by a cancel, its last cost known)
  bool_options=1    session/new offers a select `model` and a boolean `fast` (current false) option,
                    the boolean only to a client that declared `session.configOptions.boolean`;
                    the answer then ends with `[options: model=..., fast=...]`
  record=PATH       append every message received to PATH, one JSON per line

The answer is `Echo: <the prompt>`: a slash command comes back as the text it was sent as.
"""

from __future__ import annotations

import json
import queue
import sys
import threading
from typing import Any

OPTS: dict[str, str] = dict(arg.split("=", 1) for arg in sys.argv[1:])
SESSION = "feat-1"
HOSTILE = "\x1b]0;pwned\x07[bold red]x[/]\x1b[2J"
_write_lock = threading.Lock()
_inbox: queue.Queue[dict[str, Any] | None] = queue.Queue()
_responses: dict[int, dict[str, Any]] = {}
_response_ready = threading.Condition()
_next_id = 1000
_client_capabilities: dict[str, Any] = {}
_options: dict[str, Any] = {}
cancelled = threading.Event()


def opt(name: str, default: str = "") -> str:
    return OPTS.get(name, default)


def send(message: dict[str, Any]) -> None:
    with _write_lock:
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", **message}) + "\n")
        sys.stdout.flush()


def notify(update: dict[str, Any]) -> None:
    send({"method": "session/update", "params": {"sessionId": SESSION, "update": update}})


def chunk(text: str) -> None:
    notify({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}})


def request(method: str, params: dict[str, Any]) -> dict[str, Any]:
    """Call the client and wait for its answer (the reader thread files responses)."""
    global _next_id
    with _response_ready:
        _next_id += 1
        rid = _next_id
    send({"id": rid, "method": method, "params": params})
    with _response_ready:
        while rid not in _responses:
            _response_ready.wait()
        return _responses.pop(rid)


def reader() -> None:
    for raw in sys.stdin:
        message = json.loads(raw)
        if opt("record"):
            with open(opt("record"), "a") as f:
                f.write(json.dumps(message) + "\n")
        if "method" not in message:
            with _response_ready:
                _responses[message["id"]] = message
                _response_ready.notify_all()
        elif message["method"] == "session/cancel":
            cancelled.set()
        else:
            _inbox.put(message)
    _inbox.put(None)


# What it offers --------------------------------------------------------------------------------------


def commands() -> list[dict[str, Any]]:
    spec = opt("commands", "web:Search the web:query|test:Run the tests")
    if spec == "none":
        return []
    found = []
    for part in spec.split("|"):
        name, _, rest = part.partition(":")
        description, _, hint = rest.partition(":")
        if opt("hostile"):
            name, description = f"{name}{HOSTILE}", f"{description} {HOSTILE}"
        command: dict[str, Any] = {"name": name, "description": description}
        if hint:
            command["input"] = {"hint": hint}
        found.append(command)
    return found


def config_options() -> list[dict[str, Any]]:
    model = {
        "id": "model",
        "name": "Model",
        "category": "model",
        "type": "select",
        "currentValue": _options.get("model", "small"),
        "options": [{"value": "small", "name": "Small"}, {"value": "large", "name": "Large"}],
    }
    fast = {"id": "fast", "name": "Fast mode", "type": "boolean", "currentValue": _options.get("fast", False)}
    declared = ((_client_capabilities.get("session") or {}).get("configOptions") or {}).get("boolean")
    return [model, fast] if declared is not None else [model]


def form_schema() -> dict[str, Any]:
    title = (lambda text: f"{text} {HOSTILE}") if opt("hostile") else (lambda text: text)
    return {
        "type": "object",
        "title": title("Deployment"),
        "properties": {
            "name": {"type": "string", "title": title("Name"), "minLength": 2, "maxLength": 20},
            "email": {"type": "string", "title": "Email", "format": "email"},
            "replicas": {"type": "integer", "title": "Replicas", "minimum": 1, "maximum": 5, "default": 2},
            "ratio": {"type": "number", "title": "Ratio", "minimum": 0, "maximum": 1},
            "confirm": {"type": "boolean", "title": "Confirm", "default": False},
            "region": {"type": "string", "title": "Region", "enum": ["eu", "us"]},
            "tier": {
                "type": "string",
                "title": "Tier",
                "oneOf": [{"const": "free", "title": "Free"}, {"const": "pro", "title": title("Pro")}],
                "default": "free",
            },
        },
        "required": ["name", "region"],
    }


def elicit(mode: str) -> str:
    declared = _client_capabilities.get("elicitation") or {}
    if declared.get(mode) is None:
        return "not declared"
    params: dict[str, Any] = {"sessionId": SESSION, "mode": mode}
    if mode == "form":
        params.update(message="Where should this go?", requestedSchema=form_schema())
    else:
        url = opt("url", "https://auth.example.com/login?state=xyz")
        params.update(
            message="Sign in to continue." + (f" {HOSTILE}" if opt("hostile") else ""),
            elicitationId="login-1",
            url=url,
        )
    reply = request("elicitation/create", params)
    return json.dumps(reply.get("result", reply.get("error")), sort_keys=True)


# The turn -----------------------------------------------------------------------------------------


def report_usage(report: int, amount: float) -> None:
    cost = {"amount": round(amount, 6), "currency": opt("currency", "USD")}
    size = int(opt("size", "200000"))
    notify({"sessionUpdate": "usage_update", "used": min(size, 1000 * report), "size": size, "cost": cost})
    chunk(f"<{report}>")


def answer_prompt(rid: Any, text: str) -> None:
    for mode in filter(None, opt("elicit").split(",")):
        chunk(f"[elicitation {mode}: {elicit(mode)}]")
    amounts = [float(a) for a in filter(None, opt("costs").split(","))]
    for report, amount in enumerate(amounts, start=1):
        if cancelled.is_set():
            break
        report_usage(report, amount)
    if opt("hold"):
        cancelled.wait()
    if not cancelled.is_set():
        chunk(f"Echo: {text}")
        if opt("bool_options"):
            chunk(f" [options: model={_options.get('model', 'small')}, fast={_options.get('fast', False)}]")
    send({"id": rid, "result": {"stopReason": "cancelled" if cancelled.is_set() else "end_turn"}})


def serve() -> None:
    threading.Thread(target=reader, daemon=True).start()
    while (message := _inbox.get()) is not None:
        method, rid, params = message["method"], message.get("id"), message.get("params") or {}
        if method == "initialize":
            _client_capabilities.update(params.get("clientCapabilities") or {})
            send({"id": rid, "result": {"protocolVersion": 1, "agentCapabilities": {}}})
        elif method == "session/new":
            offer = {"configOptions": config_options()} if opt("bool_options") else {}
            send({"id": rid, "result": {"sessionId": SESSION, **offer}})
            if offered := commands():
                notify({"sessionUpdate": "available_commands_update", "availableCommands": offered})
        elif method == "session/set_config_option":
            _options[params["configId"]] = params["value"]
            send({"id": rid, "result": {"configOptions": config_options()}})
        elif method == "session/prompt":
            text = "".join(b.get("text", "") for b in params.get("prompt", []))
            threading.Thread(target=answer_prompt, args=(rid, text), daemon=True).start()
        elif rid is not None:
            send({"id": rid, "error": {"code": -32601, "message": f"Method not found: {method}"}})


if __name__ == "__main__":
    serve()
