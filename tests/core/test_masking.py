"""Values passed in a preset's `env` never reach the answer, stderr, errors or traces in clear."""

from __future__ import annotations

import itertools
import sys
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from acp_tui import AcpProviderConfig, AcpSubagentProvider, SubagentRequest
from acp_tui.core.masking import MASK, SecretMask
from tests.helpers import SCRIPTED_AGENT

SECRET = "sk-live-0123456789abcdef"


@settings(max_examples=300, deadline=None)
@given(
    before=st.text(max_size=30),
    after=st.text(max_size=30),
    cuts=st.lists(st.integers(min_value=0, max_value=90), max_size=8),
)
def test_a_streamed_secret_is_masked_wherever_the_pieces_split_it(
    before: str, after: str, cuts: list[int]
) -> None:
    text = before + SECRET + after
    mask = SecretMask([SECRET])
    bounds = sorted({min(c, len(text)) for c in cuts} | {0, len(text)})
    pieces = [text[a:b] for a, b in itertools.pairwise(bounds)]
    shown = [mask.feed(piece) for piece in pieces] + [mask.flush()]
    assert "".join(shown) == mask(text)
    assert SECRET not in "".join(shown)
    assert MASK in "".join(shown)


def test_short_values_are_not_masked() -> None:
    assert SecretMask(["1", "on"])("version 1 is on") == "version 1 is on"


async def test_an_agent_echoing_its_credential_shows_it_masked_everywhere(tmp_path: Path) -> None:
    config = AcpProviderConfig(
        command=sys.executable,
        args=[SCRIPTED_AGENT, "echo_env=DEMO_API_KEY", f"stderr=my key is {SECRET}", "chunks=3"],
        env={"DEMO_API_KEY": SECRET},
        trace_dir=str(tmp_path),
    )
    run = await AcpSubagentProvider(config).start(SubagentRequest("hi"))
    result = await run.result()
    assert result.output == MASK
    assert result.stderr_tail == [f"my key is {MASK}"]
    [trace] = tmp_path.glob("*.jsonl")
    assert SECRET not in trace.read_text()


@given(
    base=st.text("ab", min_size=4, max_size=8),
    tail=st.text("abc", min_size=1, max_size=8),
    filler=st.text("abc ", max_size=30),
    cuts=st.lists(st.integers(min_value=0, max_value=80), max_size=6),
)
@settings(max_examples=300, deadline=None)
def test_a_value_that_starts_with_another_value_is_masked_whole_wherever_a_chunk_ends(
    base: str, tail: str, filler: str, cuts: list[int]
) -> None:
    """`abcd1234` and `abcd1234TAIL...` both secrets: a chunk ending after the shorter one must not
    let the longer one's tail through (it showed as `***TAIL...`)."""
    longer = base + tail
    text = f"{filler}{longer}{filler}{base}!"
    whole = SecretMask([base, longer])(text)
    mask = SecretMask([base, longer])
    shown, start = [], 0
    for cut in sorted({min(cut, len(text)) for cut in cuts}):
        shown.append(mask.feed(text[start:cut]))
        start = cut
    shown.append(mask.feed(text[start:]))
    shown.append(mask.flush())
    assert "".join(shown) == whole


def test_the_tail_of_a_value_that_starts_with_another_never_shows() -> None:
    mask = SecretMask(["abcd1234", "abcd1234TAILeb2a9999"])
    shown = mask.feed("value: abcd1234") + mask.feed("TAILeb2a9999 end") + mask.flush()
    assert shown == "value: *** end"
