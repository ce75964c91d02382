"""The personas of one stop reason each.

- ``slow``: ``--chunks`` (default 60) short pieces, one per ``--delay`` (default 0.3 s). ``end_turn``;
  stops within one delay step on ``session/cancel`` with ``cancelled``.
- ``stubborn``: ignores ``session/cancel``, SIGTERM and the end of stdin, and streams forever; only
  SIGKILL ends it (proves that dispose escalates). The agent does the ignoring.
- ``refusal``: a short sentence, then ``refusal``.
- ``max-tokens``: ``--chunks`` (default 20) pieces of an answer cut mid-sentence, then ``max_tokens``.
- ``max-turn-requests``: a short explanation, then ``max_turn_requests``.
- ``echo``: the prompt text back verbatim in one chunk, then ``end_turn``.
"""

from __future__ import annotations

import asyncio

from acp.schema import StopReason

from acp_tui.demo.turn import Turn, split_chunks, summarize

SLOW_PHRASES: tuple[str, ...] = (
    "Thinking it over.",
    "Weighing one option.",
    "Then another.",
    "Checking a detail.",
    "Still going.",
    "Almost a thought.",
    "Reconsidering.",
    "Taking my time.",
    "Nearly there.",
    "One more step.",
)

STUBBORN_PHRASES: tuple[str, ...] = (
    "I am still working.",
    "No, I will not stop.",
    "Cancel noted and ignored.",
    "Still streaming.",
)
# Stubborn must never spin: a zero delay would flood the client.
MIN_STUBBORN_DELAY = 0.01

MAX_TOKENS_TEXT = (
    "Here is the beginning of a long and careful answer that would cover every corner of the "
    "question in depth, starting with the history, moving on to the design, then the trade-offs, "
    "and finally a worked example that shows each step of the process from the first line to the "
    "very last one, but the token budget runs out right in the middle of"
)


def _you_asked(turn: Turn) -> str:
    return f"You asked: {summarize(turn.prompt)}\n\n"


async def slow(turn: Turn) -> StopReason:
    total = max(turn.chunks, 1)
    for i in range(total):
        if i == 0:
            chunk = _you_asked(turn)
        elif i == total - 1:
            chunk = "Done."
        else:
            chunk = SLOW_PHRASES[(i - 1) % len(SLOW_PHRASES)] + ("\n" if i % 10 == 0 else " ")
        # Pause before each chunk so a cancel is noticed within one delay step.
        if i and await turn.pause():
            return "cancelled"
        await turn.say(chunk)
    return "end_turn"


async def stubborn(turn: Turn) -> StopReason:
    await turn.say(_you_asked(turn))
    delay = max(turn.delay, MIN_STUBBORN_DELAY)
    i = 0
    while True:  # deliberately endless: only SIGKILL stops this persona
        await asyncio.sleep(delay)
        await turn.say(STUBBORN_PHRASES[i % len(STUBBORN_PHRASES)] + " ")
        i += 1


async def refusal(turn: Turn) -> StopReason:
    reply = _you_asked(turn) + "I'm sorry, but I can't help with that request."
    return "cancelled" if await turn.stream(reply) else "refusal"


async def max_tokens(turn: Turn) -> StopReason:
    if await turn.stream(_you_asked(turn)):
        return "cancelled"
    # Two words a chunk, cut after `--chunks` chunks: the answer stops mid-sentence.
    pieces = split_chunks(MAX_TOKENS_TEXT, 2)[: max(turn.chunks, 1)]
    if await turn.stream("".join(pieces).rstrip(), words=2):
        return "cancelled"
    return "max_tokens"


async def max_turn_requests(turn: Turn) -> StopReason:
    reply = _you_asked(turn) + (
        "I looked things up, then looked them up again, and "
        "ran out of model requests for this turn before reaching an answer."
    )
    return "cancelled" if await turn.stream(reply) else "max_turn_requests"


async def echo(turn: Turn) -> StopReason:
    """The prompt back verbatim, in one chunk, with no pause."""
    await turn.say(turn.prompt)
    return "end_turn"
