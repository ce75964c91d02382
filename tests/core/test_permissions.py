"""Permission policies: `reject`, `allow`, rules and a human's answer, over real stdio and as pure code.

The scripted agent asks for permission (tests/scripted_agent.py `permission=SET`) and streams back the
outcome it got as `[permission: <json>]` before its answer, so each test sees both sides: what the run
recorded and what the agent actually received.
"""

from __future__ import annotations

import asyncio
import dataclasses
import fnmatch
import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from acp_tui import AcpProviderConfig, AcpSubagentProvider, SubagentRequest, SubagentStopReason
from acp_tui.core.model import PermissionDecided, PermissionOptionInfo, RunEvent, SubagentResult
from acp_tui.policy.ask import TOOL_KINDS, PermissionAsk, PermissionPolicy, choose
from acp_tui.policy.rules import AskPolicy, FixedPolicy, Rule, RulePolicy
from acp_tui.process.group import group_alive
from tests.helpers import read_trace, scripted, unhurried

ANSWER = "the answer"

# What tests/scripted_agent.py offers for each `permission=SET`, in its order.
OFFERED: dict[str, tuple[PermissionOptionInfo, ...]] = {
    name: tuple(PermissionOptionInfo(*option) for option in options)
    for name, options in {
        "normal": [("a1", "Allow", "allow_once"), ("r1", "Reject", "reject_once")],
        "allow_always_first": [
            ("aa", "Always allow", "allow_always"),
            ("a1", "Allow once", "allow_once"),
            ("r1", "Reject", "reject_once"),
            ("ra", "Always reject", "reject_always"),
        ],
        "no_allow": [("r1", "Reject", "reject_once"), ("ra", "Always reject", "reject_always")],
        "none": [],
        "reject_always_first": [
            ("a1", "Allow once", "allow_once"),
            ("ra", "Always reject", "reject_always"),
            ("r1", "Reject", "reject_once"),
        ],
        "allow_only": [("aa", "Always allow", "allow_always"), ("a1", "Allow once", "allow_once")],
    }.items()
}


def with_policy(config: AcpProviderConfig, policy: str | PermissionPolicy) -> AcpProviderConfig:
    return dataclasses.replace(config, permission_policy=policy)


async def run_to_end(
    config: AcpProviderConfig, cwd: Path | None = None
) -> tuple[SubagentResult, list[RunEvent]]:
    run = await AcpSubagentProvider(config).start(SubagentRequest("go", cwd=str(cwd) if cwd else None))
    events = [event async for event in run.events()]
    return await run.result(), events


def outcome_the_agent_got(output: str) -> dict[str, Any]:
    """The scripted agent's `[permission: {...}]` prefix, decoded."""
    assert output.startswith("[permission: ") and output.endswith("]" + ANSWER), output
    return json.loads(output.removeprefix("[permission: ").removesuffix("]" + ANSWER))  # type: ignore[no-any-return]


def frames_received(record: Path) -> list[dict[str, Any]]:
    if not record.exists():
        return []
    return [json.loads(line) for line in record.read_text().splitlines()]


# The RFC's two policies, end to end ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("policy", "offered", "decision", "option_id"),
    [
        # reject: the first reject_* option in the order offered; none offered: cancelled.
        ("reject", "normal", "reject_once", "r1"),
        ("reject", "allow_always_first", "reject_once", "r1"),
        ("reject", "reject_always_first", "reject_always", "ra"),
        ("reject", "no_allow", "reject_once", "r1"),
        ("reject", "allow_only", "cancelled", None),  # never approves, even with nothing else offered
        ("reject", "none", "cancelled", None),
        # allow: the first allow-shaped option; none offered: behaves as reject.
        ("allow", "normal", "allow_once", "a1"),
        ("allow", "allow_always_first", "allow_always", "aa"),  # the record must say allow_always
        ("allow", "reject_always_first", "allow_once", "a1"),
        ("allow", "allow_only", "allow_always", "aa"),
        ("allow", "no_allow", "reject_once", "r1"),
        ("allow", "none", "cancelled", None),
    ],
)
async def test_fixed_policies_pick_as_the_rfc_says_and_record_it(
    policy: str, offered: str, decision: str, option_id: str | None
) -> None:
    result, events = await run_to_end(scripted(policy=policy, permission=offered, text=ANSWER))

    assert result.stop_reason is SubagentStopReason.COMPLETED, result.error
    [record] = result.permissions
    assert record.title == "Write proof.txt"
    assert record.kind == "edit"
    assert record.options == OFFERED[offered]
    assert record.decision == decision
    assert record.option_id == option_id
    assert record.rule == policy
    assert 0 < record.at <= result.duration_s
    # The same record went out as an event, before the run finished.
    decided = [e.record for e in events if isinstance(e, PermissionDecided)]
    assert decided == [record]
    # And the agent received exactly that answer.
    if option_id is None:
        assert outcome_the_agent_got(result.output) == {"outcome": {"outcome": "cancelled"}}
    else:
        assert outcome_the_agent_got(result.output) == {
            "outcome": {"outcome": "selected", "optionId": option_id}
        }


async def test_the_permission_record_serialises_its_fields() -> None:
    result, _ = await run_to_end(scripted(policy="allow", permission="allow_always_first", text=ANSWER))
    from acp_tui.reports.records import run_record
    from acp_tui.settings.schema import AgentPreset

    [as_json] = run_record(AgentPreset("a", "a"), result, prompt="go").model_dump(mode="json")["permissions"]
    assert as_json["title"] == "Write proof.txt"
    assert as_json["kind"] == "edit"
    assert as_json["decision"] == "allow_always"
    assert as_json["option_id"] == "aa"
    assert as_json["rule"] == "allow"
    assert as_json["options"][0] == {"option_id": "aa", "name": "Always allow", "kind": "allow_always"}
    assert isinstance(as_json["at"], float)
    json.dumps(as_json)  # plain JSON all the way down


# A human's answer (AskPolicy) -------------------------------------------------------------------


def answering(option_id: str | None) -> Callable[[PermissionAsk], Awaitable[str | None]]:
    async def handler(ask: PermissionAsk) -> str | None:
        return option_id

    return handler


@pytest.mark.parametrize(
    ("answer", "decision", "option_id"),
    [
        ("r1", "reject_once", "r1"),
        ("a1", "allow_once", "a1"),
        (None, "cancelled", None),
        ("not-an-offered-option", "cancelled", None),  # never forwarded to the agent as is
    ],
)
async def test_ask_policy_forwards_the_humans_choice(
    answer: str | None, decision: str, option_id: str | None
) -> None:
    config = with_policy(scripted(permission="normal", text=ANSWER), AskPolicy(answering(answer)))
    result, _ = await run_to_end(config)
    [record] = result.permissions
    assert (record.decision, record.option_id, record.rule) == (decision, option_id, "ask")
    expected = (
        {"outcome": {"outcome": "cancelled"}}
        if option_id is None
        else {"outcome": {"outcome": "selected", "optionId": option_id}}
    )
    assert outcome_the_agent_got(result.output) == expected


async def test_an_ask_handler_that_raises_answers_cancelled_and_the_run_goes_on() -> None:
    async def broken(ask: PermissionAsk) -> str | None:
        raise RuntimeError("the modal fell over")

    result, _ = await run_to_end(with_policy(scripted(permission="normal", text=ANSWER), AskPolicy(broken)))
    assert result.stop_reason is SubagentStopReason.COMPLETED
    [record] = result.permissions
    assert (record.decision, record.option_id) == ("cancelled", None)
    assert outcome_the_agent_got(result.output) == {"outcome": {"outcome": "cancelled"}}


class NeverAnswers:
    """An AskPolicy handler that never returns; notes when it was asked and when it was withdrawn."""

    def __init__(self) -> None:
        self.asked = asyncio.Event()
        self.withdrawn = asyncio.Event()

    async def __call__(self, ask: PermissionAsk) -> str | None:
        self.asked.set()
        try:
            await asyncio.get_running_loop().create_future()  # never resolved
        finally:
            self.withdrawn.set()
        raise AssertionError("unreachable")


@pytest.mark.parametrize("how", ["dispose", "abort"])
async def test_a_question_pending_when_the_run_is_stopped_is_answered_cancelled(
    tmp_path: Path, how: str
) -> None:
    record = tmp_path / "frames.jsonl"
    human = NeverAnswers()
    config = dataclasses.replace(
        unhurried(scripted(permission="normal", record=record, text=ANSWER)),
        permission_policy=AskPolicy(human),
        trace_dir=str(tmp_path / "traces"),
    )
    abort = asyncio.Event()
    run = await AcpSubagentProvider(config).start(SubagentRequest("go"), abort=abort)
    await human.asked.wait()

    if how == "dispose":
        await run.dispose("closed by the user")
    else:
        abort.set()
    result = await run.result()

    assert result.stop_reason is SubagentStopReason.ABORTED
    if how == "dispose":
        assert result.error == "closed by the user"
    # The question was withdrawn from the human, and answered `cancelled` to the agent.
    await asyncio.wait_for(human.withdrawn.wait(), 1.0)
    [decided] = result.permissions
    assert (decided.decision, decided.option_id) == ("cancelled", None)
    answers = [f for f in frames_received(record) if "method" not in f and "outcome" in f.get("result", {})]
    assert [a["result"] for a in answers] == [{"outcome": {"outcome": "cancelled"}}]
    # The turn was cancelled too (seen in our trace: the agent may be gone before it reads it).
    sent = [f["frame"].get("method") for f in read_trace(run.trace_path or "") if f["dir"] == "out"]
    assert "session/cancel" in sent
    # The agent then ends its turn by itself: no grace period runs out, nothing is signalled.
    assert result.ended_by == "exit"
    assert not group_alive(run.pid or 0)


async def test_a_question_pending_when_the_child_dies_is_withdrawn_from_the_human() -> None:
    """The agent asks, then is killed before anyone answers: the question must not stay open."""
    human = NeverAnswers()
    config = with_policy(
        scripted(permission="normal", kill="SIGKILL", exit_at="permission"), AskPolicy(human)
    )
    run = await AcpSubagentProvider(config).start(SubagentRequest("go"))
    result = await run.result()
    assert result.stop_reason is SubagentStopReason.ERROR
    assert "SIGKILL" in (result.error or "")
    assert human.asked.is_set()
    # A modal left open for a run that is over would wait for ever: it must be withdrawn.
    await asyncio.wait_for(human.withdrawn.wait(), 2.0)


async def test_a_question_pending_when_the_child_dies_is_recorded_as_cancelled() -> None:
    human = NeverAnswers()
    config = with_policy(
        scripted(permission="normal", kill="SIGKILL", exit_at="permission"), AskPolicy(human)
    )
    run = await AcpSubagentProvider(config).start(SubagentRequest("go"))
    events = [event async for event in run.events()]
    result = await run.result()
    assert human.asked.is_set()
    # Every request the agent made is in the permission log, answered or not.
    assert [(r.title, r.decision, r.option_id) for r in result.permissions] == [
        ("Write proof.txt", "cancelled", None)
    ]
    assert [e.record for e in events if isinstance(e, PermissionDecided)] == result.permissions


# RulePolicy, end to end -------------------------------------------------------------------------

READS = Rule("reads", "allow", kinds=("read",))
PROOF_WRITES = Rule("proof writes", "allow", title="write proof*")  # title globs ignore case
ALL_EDITS = Rule("all edits", "reject", kinds=("edit",))


@pytest.mark.parametrize(
    ("rules", "default", "rule", "option_id"),
    [
        ((READS, PROOF_WRITES, ALL_EDITS), "reject", "proof writes", "a1"),
        ((READS, ALL_EDITS, PROOF_WRITES), "allow", "all edits", "r1"),
        ((READS,), "allow", "default", "a1"),
        ((READS,), "reject", "default", "r1"),
        ((), "reject", "default", "r1"),
    ],
)
async def test_rule_policy_first_matching_rule_decides(
    rules: tuple[Rule, ...], default: str, rule: str, option_id: str
) -> None:
    policy = RulePolicy("lab", rules, default=default)  # type: ignore[arg-type]
    result, events = await run_to_end(with_policy(scripted(permission="normal", text=ANSWER), policy))
    [record] = result.permissions
    assert record.rule == rule
    assert record.option_id == option_id
    assert record.decision == {"a1": "allow_once", "r1": "reject_once"}[option_id]
    assert [e.record for e in events if isinstance(e, PermissionDecided)] == [record]
    assert outcome_the_agent_got(result.output) == {"outcome": {"outcome": "selected", "optionId": option_id}}


# Properties of the pure decision functions --------------------------------------------------------

ALLOW_SHAPED = ("allow_once", "allow_always")
KINDS = ("allow_once", "allow_always", "reject_once", "reject_always", "allow_sometimes", "other")

option_lists = st.lists(st.tuples(st.sampled_from(KINDS), st.text(max_size=8)), max_size=8).map(
    lambda pairs: tuple(PermissionOptionInfo(f"o{i}", name, kind) for i, (kind, name) in enumerate(pairs))
)


def first(options: tuple[PermissionOptionInfo, ...], kinds: tuple[str, ...]) -> str | None:
    return next((o.option_id for o in options if o.kind in kinds), None)


def kind_of(options: tuple[PermissionOptionInfo, ...], option_id: str | None) -> str | None:
    return next((o.kind for o in options if o.option_id == option_id), None)


def decide(policy: PermissionPolicy, ask: PermissionAsk) -> Any:
    return asyncio.run(policy.decide(ask))


@settings(max_examples=200, deadline=None)
@given(option_lists)
def test_reject_takes_the_first_reject_option_and_never_approves(
    options: tuple[PermissionOptionInfo, ...],
) -> None:
    chosen = choose(options, "reject")
    assert chosen == first(options, ("reject_once", "reject_always"))
    assert kind_of(options, chosen) not in (*ALLOW_SHAPED, "allow_sometimes", "other")


@settings(max_examples=200, deadline=None)
@given(option_lists)
def test_allow_takes_the_first_allow_shaped_option_else_behaves_as_reject(
    options: tuple[PermissionOptionInfo, ...],
) -> None:
    chosen = choose(options, "allow")
    if any(o.kind in ALLOW_SHAPED for o in options):
        assert chosen == first(options, ALLOW_SHAPED)
        assert kind_of(options, chosen) in ALLOW_SHAPED
    else:
        assert chosen == choose(options, "reject")
        assert kind_of(options, chosen) not in ALLOW_SHAPED


@settings(max_examples=200, deadline=None)
@given(option_lists, st.sampled_from(["allow", "reject"]))
def test_fixed_policy_is_choose_with_its_name_as_the_rule(
    options: tuple[PermissionOptionInfo, ...], action: str
) -> None:
    choice = decide(FixedPolicy(action), PermissionAsk("t", "edit", options))  # type: ignore[arg-type]
    assert choice.option_id == choose(options, action)  # type: ignore[arg-type]
    assert choice.rule == action


TITLES = ("Write proof.txt", "WRITE PROOF", "Read README.md", "delete me", "deleteXme", "")
GLOBS = (None, "*", "write*", "read *", "*proof*", "delete?me", "Delete Me")
rules_strategy = st.lists(
    st.tuples(
        st.sampled_from(["allow", "reject"]),
        st.lists(st.sampled_from(TOOL_KINDS), unique=True, max_size=3).map(tuple),
        st.sampled_from(GLOBS),
    ),
    max_size=6,
).map(lambda specs: tuple(Rule(f"rule {i}", *spec) for i, spec in enumerate(specs)))  # type: ignore[arg-type]


def expected_match(rule: Rule, ask: PermissionAsk) -> bool:
    """The rule's meaning, written independently: every given criterion holds, case-insensitively."""
    kind_ok = not rule.kinds or (ask.kind or "other") in rule.kinds
    title_ok = rule.title is None or fnmatch.fnmatchcase(ask.title.lower(), rule.title.lower())
    return kind_ok and title_ok


@settings(max_examples=200, deadline=None)
@given(
    rules_strategy,
    st.sampled_from(["allow", "reject"]),
    st.sampled_from(TITLES),
    st.sampled_from((*TOOL_KINDS, None)),
    option_lists,
)
def test_rule_policy_respects_rule_order_and_falls_back_to_its_default(
    rules: tuple[Rule, ...],
    default: str,
    title: str,
    kind: str | None,
    options: tuple[PermissionOptionInfo, ...],
) -> None:
    ask = PermissionAsk(title, kind, options)
    choice = decide(RulePolicy("lab", rules, default=default), ask)  # type: ignore[arg-type]
    matching = [rule for rule in rules if expected_match(rule, ask)]
    if matching:
        assert choice.rule == matching[0].name
        assert choice.option_id == choose(options, matching[0].action)
    else:
        assert choice.rule == "default"
        assert choice.option_id == choose(options, default)  # type: ignore[arg-type]
