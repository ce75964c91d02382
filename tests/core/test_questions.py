"""An agent's questions to the person (`elicitation/create`) and its slash commands, over real
stdio with the real SDK against the features agent: declined at once when nobody can answer (never
a hang), answered by whoever can, cancelled when the run stops, every one recorded."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from typing import Any

from acp_tui import AcpProviderConfig, AcpSubagentProvider, SubagentRequest, SubagentStopReason
from acp_tui.core.elicitation import ElicitationAnswer, ElicitationAsk
from acp_tui.core.model import CommandInfo, CommandsOffered, QuestionAnswered, RunEvent, SubagentResult
from tests.helpers import featured


async def run_to_end(config: AcpProviderConfig, prompt: str = "go") -> tuple[SubagentResult, list[RunEvent]]:
    run = await AcpSubagentProvider(config).start(SubagentRequest(prompt))
    events = [event async for event in run.events()]
    return await run.result(), events


def said(result: SubagentResult, mode: str) -> Any:
    """What the agent got back for its question in `mode`, as it reports it in its answer."""
    marker = f"[elicitation {mode}: "
    start = result.output.index(marker) + len(marker)
    return json.loads(result.output[start : result.output.index("]", start)])


async def test_without_anyone_to_ask_every_question_is_declined_at_once() -> None:
    result, events = await run_to_end(featured(elicit="form,url", commands="none"))
    assert result.stop_reason is SubagentStopReason.COMPLETED, result.error
    assert said(result, "form") == {"action": "decline"} and said(result, "url") == {"action": "decline"}
    form, url = result.elicitations
    assert (form.mode, form.message, form.action, form.by, form.content) == (
        "form",
        "Where should this go?",
        "decline",
        "no one",
        None,
    )
    assert form.form["required"] == ["name", "region"] and form.url is None
    assert (url.mode, url.url, url.action) == ("url", "https://auth.example.com/login?state=xyz", "decline")
    assert [e.record for e in events if isinstance(e, QuestionAnswered)] == [form, url]


async def test_a_person_s_answer_goes_back_to_the_agent_and_into_the_record() -> None:
    asked: list[ElicitationAsk] = []

    async def person(ask: ElicitationAsk) -> ElicitationAnswer:
        asked.append(ask)
        if ask.mode == "url":
            return ElicitationAnswer("cancel")
        content, errors = ask.form.validate({"name": "web", "region": "eu"}) if ask.form else ({}, {})
        assert errors == {}
        return ElicitationAnswer.accept(content)

    config = dataclasses.replace(featured(elicit="form,url"), question_handler=person)
    result, _ = await run_to_end(config)
    assert [a.mode for a in asked] == ["form", "url"]
    assert asked[1].host == "auth.example.com"
    content = {"name": "web", "replicas": 2, "confirm": False, "region": "eu", "tier": "free"}
    assert said(result, "form") == {"action": "accept", "content": content}
    assert said(result, "url") == {"action": "cancel"}
    assert [(e.action, e.content, e.by) for e in result.elicitations] == [
        ("accept", content, "person"),
        ("cancel", None, "person"),
    ]


async def test_a_question_waiting_when_the_run_stops_is_cancelled_and_recorded() -> None:
    waiting = asyncio.Event()

    async def nobody_answers(ask: ElicitationAsk) -> ElicitationAnswer:
        waiting.set()
        await asyncio.Event().wait()
        raise AssertionError("never answered")

    config = dataclasses.replace(featured(elicit="form"), question_handler=nobody_answers)
    run = await AcpSubagentProvider(config).start(SubagentRequest("go"))
    await waiting.wait()
    await run.dispose("cancelled by the test")
    result = await run.result()
    assert result.stop_reason is SubagentStopReason.ABORTED
    [record] = result.elicitations
    assert (record.action, record.by) == ("cancel", "cancelled")


async def test_the_commands_the_agent_offers_reach_the_run_s_events() -> None:
    result, events = await run_to_end(featured())
    assert result.stop_reason is SubagentStopReason.COMPLETED, result.error
    [offered] = [e for e in events if isinstance(e, CommandsOffered)]
    assert offered.commands == (
        CommandInfo("web", "Search the web", "query"),
        CommandInfo("test", "Run the tests"),
    )
    assert result.hidden.get("available_commands_update") == 1


async def test_a_slash_command_goes_to_the_agent_as_the_text_typed() -> None:
    result, _ = await run_to_end(featured(commands="none"), prompt="/web acp elicitation")
    assert result.output == "Echo: /web acp elicitation"


async def test_boolean_options_are_offered_to_us_and_set_as_booleans() -> None:
    config = dataclasses.replace(featured(bool_options=1, commands="none"), options={"fast": "true"})
    result, _ = await run_to_end(config)
    assert result.stop_reason is SubagentStopReason.COMPLETED, result.error
    assert result.output.endswith("[options: model=small, fast=True]")
    assert result.options == {"model": "small", "fast": "true"}


async def test_the_record_keeps_each_question_and_its_answer_and_reads_it_back() -> None:
    from acp_tui.reports.records import read_record, run_record
    from acp_tui.settings.schema import AgentPreset

    result, _ = await run_to_end(featured(elicit="url", commands="none"))
    record = run_record(AgentPreset("feat", "python3"), result, prompt="go").model_dump(mode="json")
    [question] = record["elicitations"]
    assert question["asked"] == {
        "mode": "url",
        "message": "Sign in to continue.",
        "form": None,
        "url": "https://auth.example.com/login?state=xyz",
    }
    assert question["answered"] == {"action": "decline", "content": None, "by": "no one"}
    [back] = read_record(json.loads(json.dumps(record))).result().elicitations
    assert dataclasses.replace(back, at=0, waited_s=0) == dataclasses.replace(
        result.elicitations[0], at=0, waited_s=0
    )
