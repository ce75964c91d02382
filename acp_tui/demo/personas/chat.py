"""``chat``: remembers the conversation, so a follow-up's effect shows with no key.

It answers ``turn N: PROMPT``, and from the second turn on ``turn N: PROMPT (earlier: FIRST; SECOND;
...)``: each prompt on one line. The earlier prompts are the session's history, which outlives the
process (a follow-up is a fresh process that resumes or loads the session). ``end_turn``;
``cancelled`` when cancelled.
"""

from __future__ import annotations

from acp.schema import StopReason

from acp_tui.demo.turn import Turn, summarize


def reply(number: int, prompt: str, earlier: list[str]) -> str:
    text = f"turn {number}: {summarize(prompt)}"
    if earlier:
        text += " (earlier: " + "; ".join(summarize(p) for p in earlier) + ")"
    return text


async def play(turn: Turn) -> StopReason:
    earlier = [exchange.prompt for exchange in turn.session.history]
    return "cancelled" if await turn.stream(reply(turn.number, turn.prompt, earlier)) else "end_turn"
