"""Non-finite numbers from an agent never reach what we write (issue 16): frames carrying `NaN`,
`Infinity` or `1e999` (which Python reads as inf) are dropped with a note, a cost the SDK reads as
inf from the string "Infinity" is no cost, and `acp-tui run --format json` (and its trace) stays
JSON that a strict parser reads, the run completing as usual.

The agent is a stdlib script written for the test: it must write what no JSON library would.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from tests.containment.test_readers_commands import acp_tui

AGENT = r"""
import json, sys

def send(line):
    sys.stdout.write(line + "\n")
    sys.stdout.flush()

def update(fields):  # written by hand: no JSON library writes 1e999 or NaN
    send('{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{%s}}}' % fields)

def usage(amount, used="10"):
    cost = '"cost":{"amount":%s,"currency":"USD"}' % amount
    update('"sessionUpdate":"usage_update","used":%s,"size":100,%s' % (used, cost))

for raw in sys.stdin:
    message = json.loads(raw)
    if "id" not in message or "method" not in message:
        continue
    rid, method = message["id"], message["method"]
    if method == "initialize":
        result = {"protocolVersion": 1, "agentCapabilities": {}}
    elif method == "session/new":
        result = {"sessionId": "s"}
    elif method == "session/prompt":
        for amount in ("1e999", "NaN", "-Infinity", "Infinity"):
            usage(amount)
        update('"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"answered"}')
        usage("1", used="NaN")
        usage('"Infinity"')  # a string: the SDK's float takes it, as inf
        result = {"stopReason": "end_turn"}
    else:
        send(json.dumps({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": method}}))
        continue
    send(json.dumps({"jsonrpc": "2.0", "id": rid, "result": result}))
"""


def strict(text: str) -> Any:
    """json.loads as a strict parser reads JSON: no NaN, no Infinity."""

    def refuse(name: str) -> Any:
        raise AssertionError(f"{name} in our output")

    return json.loads(text, parse_constant=refuse)


def test_nan_and_huge_numbers_from_an_agent_never_reach_the_json_output(tmp_path: Path) -> None:
    agent = tmp_path / "numbers_agent.py"
    agent.write_text(AGENT, encoding="utf-8")
    traces = tmp_path / "traces"
    run = ["run", "--agent", f"numbers={sys.executable} {agent}", "--prompt", "hi", "--format", "json"]
    done = acp_tui([*run, "--trace", str(traces)], tmp_path)
    assert done.returncode == 0, done.stderr
    [line] = done.stdout.splitlines()
    record = strict(line)
    assert record["stop_reason"] == "completed"
    assert record["output"] == "answered"
    assert record["usage"] == {"used": 10, "size": 100, "cost": None}  # the string "Infinity": no cost
    for refused in ("1e999 is out of range for a number", "NaN is not a JSON number", "Infinity is not"):
        assert refused in done.stderr  # each dropped frame noted
    [trace] = traces.iterdir()
    frames = [strict(text) for text in trace.read_text().splitlines()]
    assert frames and all(frame["dir"] in ("in", "out") for frame in frames)
