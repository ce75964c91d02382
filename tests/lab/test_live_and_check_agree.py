"""The live decision and `acp-tui policy check` of the same policy agree, on every trace recorded
here (issue 18: with Mistral Vibe, whose request carries only the `toolCallId`, the live run
rejected by default what the dry run allowed)."""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from acp_tui import AcpSubagentProvider, SubagentRequest
from acp_tui.lab.check import check, load_requests
from acp_tui.policy.rules import FixedPolicy, Rule, RulePolicy
from tests.helpers import scripted

POLICIES = {
    "careful": RulePolicy(
        "careful",
        (
            Rule("no pushes", "reject", commands=("git push*",)),
            Rule("reads", "allow", kinds=("read",)),
            Rule("writes in src", "allow", kinds=("edit",), paths=("src/**",)),
            Rule("status", "allow", kinds=("execute",), commands=("git status", "git status *")),
        ),
        default="reject",
    ),
    "deny-first": RulePolicy(
        "deny-first",
        (Rule("allow edits", "allow", kinds=("edit",)), Rule("no env", "reject", paths=("**/.env",))),
        default="allow",
        order="deny-first",
    ),
    "allow": FixedPolicy("allow"),
}
CALLS = [
    {"permission_kind": "edit", "permission_paths": "src/a.py"},
    {"permission_kind": "edit", "permission_paths": "config/.env"},
    {"permission_kind": "execute", "permission_raw": json.dumps({"command": "git status"})},
    {"permission_kind": "execute", "permission_raw": json.dumps({"command": "git push origin main"})},
    {"permission_kind": "read", "permission_raw": json.dumps({"path": "README.md"})},
]


async def _traced_run(tmp_path: Path, policy: str, announce: str, call: dict[str, str]) -> Path:
    traces = tmp_path / f"traces-{policy}-{announce}"
    options = {**call, "announce": announce} if announce != "request" else call
    config = replace(
        scripted(permission="normal", **options),
        permission_policy=POLICIES[policy],
        trace_dir=str(traces),
        cwd=str(tmp_path),
    )
    run = await AcpSubagentProvider(config).start(SubagentRequest(prompt="go"))
    result = await asyncio.wait_for(run.result(), 20)
    assert len(result.permissions) == 1, result.error
    (trace,) = traces.iterdir()
    return trace


@pytest.mark.timeout(120)
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    policy=st.sampled_from(sorted(POLICIES)),
    announce=st.sampled_from(["request", "start", "split", "update"]),
    call=st.sampled_from(CALLS),
)
def test_the_live_decision_and_the_dry_run_of_the_same_policy_agree(
    tmp_path_factory: pytest.TempPathFactory, policy: str, announce: str, call: dict[str, str]
) -> None:
    tmp_path = tmp_path_factory.mktemp("agree")
    trace = asyncio.run(_traced_run(tmp_path, policy, announce, call))
    [row] = check(load_requests([trace]), POLICIES[policy])
    assert row.now.decision == row.was.decision, (row.was, row.now)
    assert not row.title.startswith("t1"), "a request's title is never its bare id"
