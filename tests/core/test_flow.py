"""The prompt/output flow, stop reasons, hidden updates, the seam and the exports, over real stdio."""

from __future__ import annotations

import pytest

import acp_tui
from acp_tui import (
    AcpSubagentProvider,
    OutputDelta,
    StatusChanged,
    SubagentRequest,
    Subagents,
    SubagentStopReason,
    UnsupportedCapabilityError,
)
from acp_tui.core.model import Finished, HiddenUpdate, RunEvent
from tests.helpers import scripted


async def run_once(config: acp_tui.AcpProviderConfig, prompt: str = "hi") -> acp_tui.SubagentResult:
    run = await AcpSubagentProvider(config).start(SubagentRequest(prompt=prompt))
    return await run.result()


async def test_prompt_streams_the_answer_in_order_and_completes() -> None:
    text = "".join(f"word{i} " for i in range(200))
    run = await AcpSubagentProvider(scripted(text=text, chunks=200)).start(SubagentRequest("go"))
    events: list[RunEvent] = [event async for event in run.events()]
    result = await run.result()

    assert result.stop_reason is SubagentStopReason.COMPLETED
    assert result.output == text
    assert result.error is None
    assert result.exit_code == 0
    assert "".join(e.text for e in events if isinstance(e, OutputDelta)) == text
    statuses = [e.status for e in events if isinstance(e, StatusChanged)]
    assert statuses == ["spawning", "initializing", "prompting", "finished"]
    assert isinstance(events[-1], Finished) and events[-1].result == result


async def test_the_prompt_text_reaches_the_agent() -> None:
    result = await run_once(scripted(text="you said: {prompt}"), prompt="ping 42")
    assert result.output == "you said: ping 42"


@pytest.mark.parametrize(
    ("acp_reason", "expected"),
    [
        ("end_turn", SubagentStopReason.COMPLETED),
        ("max_tokens", SubagentStopReason.MAX_TOKENS),
        ("refusal", SubagentStopReason.REFUSAL),
        ("cancelled", SubagentStopReason.ABORTED),
        ("max_turn_requests", SubagentStopReason.ERROR),
    ],
)
async def test_every_stop_reason_maps_as_the_rfc_says(acp_reason: str, expected: SubagentStopReason) -> None:
    result = await run_once(scripted(stop=acp_reason, text="partial"))
    assert result.stop_reason is expected
    assert result.output == "partial"


async def test_an_unknown_stop_reason_is_an_error_that_names_it() -> None:
    result = await run_once(scripted(stop="out_of_coffee", text="partial"))
    assert result.stop_reason is SubagentStopReason.ERROR
    assert result.error == "agent sent an unknown stop reason: 'out_of_coffee'"
    assert result.output == "partial"


async def test_non_message_updates_are_counted_and_never_shown() -> None:
    run = await AcpSubagentProvider(scripted(text="answer", chunks=3, hidden=1)).start(SubagentRequest("go"))
    events = [event async for event in run.events()]
    result = await run.result()
    assert result.output == "answer"
    assert result.hidden == {
        "agent_thought_chunk": 3,
        "plan": 3,
        "tool_call": 3,
        "tool_call_update": 3,
        "agent_message_chunk:image": 3,
    }
    assert sum(isinstance(e, HiddenUpdate) for e in events) == 15
    shown = "".join(e.text for e in events if isinstance(e, OutputDelta))
    assert shown == "answer" and "thinking" not in shown


async def test_updates_before_the_session_new_answer_are_kept() -> None:
    result = await run_once(scripted(text="early bird", chunks=4, early=1))
    assert result.stop_reason is SubagentStopReason.COMPLETED
    assert result.output == "early bird"


async def test_updates_for_another_session_are_ignored() -> None:
    result = await run_once(scripted(text="mine", chunks=2, foreign=1))
    assert result.output == "mine"


async def test_a_missing_command_is_a_clean_error() -> None:
    config = acp_tui.AcpProviderConfig(command="definitely-not-an-acp-agent-xyz")
    subagents = Subagents()
    await subagents.register("ghost", AcpSubagentProvider(config))
    run = await subagents.start("ghost", SubagentRequest("hi"))
    result = await run.result()
    assert result.stop_reason is SubagentStopReason.ERROR
    assert result.error == "command not found: definitely-not-an-acp-agent-xyz"
    assert result.exit_code is None
    await run.dispose()  # still safe


async def test_a_missing_working_directory_is_a_clean_error(tmp_path: object) -> None:
    result = await AcpSubagentProvider(scripted()).start(
        SubagentRequest("hi", cwd="/nonexistent/dir/for/acp-tui")
    )
    outcome = await result.result()
    assert outcome.stop_reason is SubagentStopReason.ERROR
    assert outcome.error == "working directory not found: /nonexistent/dir/for/acp-tui"


@pytest.mark.parametrize("capability", ["max_depth", "tool_filter", "output_schema"])
async def test_unsupported_capabilities_are_refused_before_spawning(capability: str) -> None:
    subagents = Subagents()
    # A command that would fail loudly if it were ever spawned.
    await subagents.register("acp", AcpSubagentProvider(acp_tui.AcpProviderConfig(command="false")))
    request = SubagentRequest("hi", **{capability: 1})
    with pytest.raises(UnsupportedCapabilityError, match=capability):
        await subagents.start("acp", request)


async def test_an_unknown_provider_name_is_a_key_error() -> None:
    with pytest.raises(KeyError):
        await Subagents().start("nobody", SubagentRequest("hi"))


async def test_re_registering_a_name_reloads_and_aborts_the_old_live_runs() -> None:
    subagents = Subagents()
    await subagents.register("agent", AcpSubagentProvider(scripted(forever=1, text="old")))
    old_run = await subagents.start("agent", SubagentRequest("hi"))

    await subagents.register("agent", AcpSubagentProvider(scripted(text="new")))

    old = await old_run.result()
    assert old.stop_reason is SubagentStopReason.ABORTED
    new = await (await subagents.start("agent", SubagentRequest("hi"))).result()
    assert new.output == "new"


async def test_unregister_disposes_and_frees_the_name() -> None:
    subagents = Subagents()
    await subagents.register("agent", AcpSubagentProvider(scripted(forever=1)))
    run = await subagents.start("agent", SubagentRequest("hi"))
    await subagents.unregister("agent")
    assert (await run.result()).stop_reason is SubagentStopReason.ABORTED
    assert "agent" not in subagents


def test_the_namespace_exports_the_contract() -> None:
    for name in [
        "SubagentStopReason",
        "SubagentRequest",
        "ProviderCapabilities",
        "Subagents",
        "UnsupportedCapabilityError",
        "AcpProviderConfig",
        "AcpSubagentProvider",
        "SubagentRun",
        "SubagentResult",
    ]:
        assert hasattr(acp_tui, name), name
    assert [r.value for r in SubagentStopReason] == [
        "completed",
        "max-tokens",
        "refusal",
        "aborted",
        "error",
    ]
    caps = AcpSubagentProvider.capabilities
    assert (caps.max_depth, caps.tool_filter, caps.output_schema) == (False, False, False)
    defaults = acp_tui.AcpProviderConfig(command="x")
    assert defaults.permission_policy == "reject"
    assert (defaults.handshake_timeout, defaults.cancel_grace, defaults.term_grace) == (60, 1, 0.5)


def test_the_core_never_imports_textual() -> None:
    import subprocess
    import sys

    code = "import acp_tui, acp_tui.acp.client, sys; print('textual' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
