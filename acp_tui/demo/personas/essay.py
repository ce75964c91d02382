"""``essay``: a long Markdown answer in small chunks, interleaved with thoughts, plan updates, a read
tool call and an edit tool call (nothing is read or written: both are shown only). ``end_turn``;
``cancelled`` when cancelled.
"""

from __future__ import annotations

from collections.abc import Sequence

from acp import plan_entry, text_block, tool_content, tool_diff_content
from acp.schema import PlanEntryStatus, StopReason, ToolCallLocation, ToolKind

from acp_tui.demo.turn import ToolCallContent, Turn, summarize

ESSAY_INTRO = """\
# A field guide to the demo agent

> You asked: {question}

This answer is canned, but it streams like a real one: a few words at a time, with thoughts, \
a plan and tool calls in between. Everything is deterministic, so tests can rely on it.

"""

ESSAY_BODY = """\
## What an ACP turn looks like

A turn starts when the client sends `session/prompt`. Until the agent answers that request, \
it streams `session/update` notifications:

- **Message chunks** carry the answer text you are reading now.
- **Thought chunks** show the agent's reasoning, usually dimmed.
- **Plan updates** replace the whole plan each time an entry changes.
- **Tool calls** start as `tool_call` and move on through `tool_call_update`.
- **Permission requests** pause the turn until the client picks an option.

The turn ends with a stop reason, and only then may the client send the next prompt.

## Stop reasons at a glance

| Stop reason | Meaning | Demo persona |
| --- | --- | --- |
| `end_turn` | The agent finished normally | `essay`, `echo`, `pong` |
| `cancelled` | The client sent `session/cancel` | `slow` |
| `refusal` | The agent declined to continue | `refusal` |
| `max_tokens` | The token budget ran out | `max-tokens` |
| `max_turn_requests` | Too many model requests in one turn | `max-turn-requests` |

"""

ESSAY_PERSONAS = """\
## Meet the personas

Each persona exercises one path of the client on purpose:

- `pong` asks permission to write `proof.txt`, then answers `PONG`.
- `essay` is this answer: long, chunky, with thoughts, a plan and tool calls.
- `slow` dribbles words for about twenty seconds and stops promptly on cancel.
- `stubborn` ignores cancel and `SIGTERM` alike; only `SIGKILL` ends it.
- `refusal`, `max-tokens` and `max-turn-requests` end with those stop reasons.
- `echo` says your prompt back, verbatim, in a single chunk.

"""

ESSAY_CODE = """\
## Driving an agent by hand

The protocol is newline-delimited JSON-RPC over stdio, so a tiny client fits in a few lines:

```python
async with spawn_agent_process(client, "python", "-m", "acp_tui.demo.agent") as (conn, proc):
    await conn.initialize(protocol_version=PROTOCOL_VERSION)
    session = await conn.new_session(cwd=os.getcwd(), mcp_servers=[])
    result = await conn.prompt(session_id=session.session_id, prompt=[text_block("hi")])
    print(result.stop_reason)
```

Every chunk arrives through the client's `session_update` callback, in order.

"""

ESSAY_OUTRO = """\
## Cancelling politely

Cancellation is cooperative. The client sends `session/cancel`; a well-behaved agent stops \
streaming, answers the pending prompt with `cancelled`, and stays alive for the next turn. \
A stubborn one keeps going, which is why a supervisor needs a harder way out:

1. Send `session/cancel` and wait a moment.
2. Close the agent's stdin and send `SIGTERM`.
3. If it is still alive after a grace period, send `SIGKILL`.

## Why a demo agent at all

- It needs no API key and no network.
- It is fast enough for tests and slow enough to watch.
- It never changes its mind: the same prompt gives the same chunks.

That is the whole tour. Ask again and you will get exactly the same answer, chunk for chunk.
"""

PLAN_STEPS = ("Read the question", "Look at the workspace", "Draft the answer", "Polish and finish")


async def play(turn: Turn) -> StopReason:
    if await turn.think("The user wants a thorough answer. Let me plan it first."):
        return "cancelled"
    await _plan(turn, ("in_progress", "pending", "pending", "pending"))
    if await turn.stream(ESSAY_INTRO.format(question=summarize(turn.prompt))):
        return "cancelled"

    # A read tool call: started, then completed with what was "read" (canned, not the real file).
    readme = str(turn.cwd / "README.md")
    read = tool_content(text_block("# acp-tui\n\nA Textual supervisor of ACP agents.\n"))
    if await _tool_call(turn, "essay-read", "Read README.md", "read", {"path": readme}, read):
        return "cancelled"
    await _plan(turn, ("completed", "completed", "in_progress", "pending"))
    if await turn.think("The workspace is small. A guided tour with a table should do."):
        return "cancelled"
    if await turn.stream(ESSAY_BODY):
        return "cancelled"

    if await turn.think("An example would help; let me note it down as I go."):
        return "cancelled"
    # An edit tool call with a diff; nothing is written, the diff is only shown.
    notes = str(turn.cwd / "NOTES.md")
    new_notes = "# Notes\n\n- Try the `slow` persona and press Cancel.\n"
    edit, diff = {"path": notes, "content": new_notes}, tool_diff_content(notes, new_notes, "# Notes\n")
    if await _tool_call(turn, "essay-edit", "Edit NOTES.md", "edit", edit, diff):
        return "cancelled"
    if await turn.stream(ESSAY_PERSONAS + ESSAY_CODE):
        return "cancelled"
    await _plan(turn, ("completed", "completed", "completed", "in_progress"))
    if await turn.stream(ESSAY_OUTRO):
        return "cancelled"
    await _plan(turn, ("completed", "completed", "completed", "completed"))
    return "end_turn"


async def _tool_call(
    turn: Turn, label: str, title: str, kind: ToolKind, raw_input: dict[str, str], content: ToolCallContent
) -> bool:
    """A tool call on the file `raw_input["path"]`: pending, then, a step later, completed with
    `content`. True when the turn was cancelled meanwhile."""
    location = ToolCallLocation(path=raw_input["path"])
    call_id = await turn.start_tool(
        label, title, kind=kind, status="pending", locations=[location], raw_input=raw_input
    )
    if await turn.pause():
        return True
    await turn.update_tool(call_id, status="completed", content=[content])
    return False


async def _plan(turn: Turn, statuses: Sequence[PlanEntryStatus]) -> None:
    await turn.plan(
        [
            plan_entry(step, priority="high" if i == 0 else "medium", status=status)
            for i, (step, status) in enumerate(zip(PLAN_STEPS, statuses, strict=True))
        ]
    )
