"""`acp-tui run --continue FILE`: every recorded run followed up in a fresh child, its session
continued, in its cwd or its worktree. Real children, real git."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from acp_tui.cli.main import main
from tests.containment.support import checkout_with_an_edit, isolated_cache, scratch_tmpdir

AGENT = str(Path(__file__).resolve().parent.parent / "sessions_agent.py")
cache_home = pytest.fixture(autouse=True)(isolated_cache)
repo = pytest.fixture(checkout_with_an_edit)
scratch = pytest.fixture(autouse=True)(scratch_tmpdir)


def agent(name: str, store: Path, **options: object) -> str:
    args = [sys.executable, AGENT, f"store={store}", *(f"{k}={v}" for k, v in options.items())]
    return f"{name}={shlex.join(args)}"


def run(*args: str) -> Result:
    return CliRunner().invoke(main, ["run", *args], catch_exceptions=False)


def records(result: Result) -> dict[str, dict[str, Any]]:
    return {r["name"]: r for r in (json.loads(line) for line in result.stdout.splitlines() if line.strip())}


def test_continue_follows_every_recorded_run_up_in_its_session(tmp_path: Path) -> None:
    store = tmp_path / "sessions"
    agents = [
        "--agent",
        agent("resumer", store, offers="resume"),
        "--agent",
        agent("loader", store, offers="load"),
    ]
    first = run("--prompt", "the first task", "--format", "json", *agents)
    assert first.exit_code == 0, first.stderr
    recorded = tmp_path / "first.jsonl"
    recorded.write_text(first.stdout)
    before = records(first)
    assert {r["turn"] for r in before.values()} == {1} and all(r["session_id"] for r in before.values())

    second = run("--continue", str(recorded), "--prompt", "and now the test", "--format", "json", *agents)
    assert second.exit_code == 0, second.stderr
    after = records(second)
    for name in ("resumer", "loader"):
        assert after[name]["turn"] == 2 and after[name]["session_id"] == before[name]["session_id"]
        assert after[name]["output"] == "turn 2: and now the test (after: the first task)"
    assert after["loader"]["hidden"] == {"history": 2} and "history" not in after["resumer"]["hidden"]

    (tmp_path / "both.jsonl").write_text(first.stdout + second.stdout)  # each session's latest turn
    third = run("--continue", str(tmp_path / "both.jsonl"), "--prompt", "third", "--format", "json", *agents)
    assert [r["turn"] for r in records(third).values()] == [3, 3]


def test_an_agent_that_offers_neither_is_not_prompted_again(tmp_path: Path) -> None:
    store = tmp_path / "sessions"
    spec = agent("plain", store, offers="none")
    first = run("--prompt", "hello", "--format", "json", "--agent", spec)
    (tmp_path / "r.jsonl").write_text(first.stdout)
    again = run(
        "--continue", str(tmp_path / "r.jsonl"), "--prompt", "again", "--format", "json", "--agent", spec
    )
    assert again.exit_code == 1
    [record] = records(again).values()
    assert record["stop_reason"] == "error" and record["output"] == ""
    assert record["error"] == "cannot continue: plain offers neither session/resume nor session/load"


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("not json\n", "line 1: not JSON"),
        ('{"a": 1}\n', "line 1: not a run record"),
        ("[" * 500 + "]" * 500 + "\n", "not JSON"),
        ('{"name": "x", "command": ["y"], "output": NaN}\n', "not JSON"),
    ],
)
def test_a_malformed_file_is_exit_2_naming_it(tmp_path: Path, text: str, said: str) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text(text)
    result = run("--continue", str(bad), "--prompt", "x")
    assert result.exit_code == 2 and str(bad) in result.stderr and said in result.stderr, result.stderr
    missing = run("--continue", str(tmp_path / "nope.jsonl"), "--prompt", "x")
    assert missing.exit_code == 2 and "nope.jsonl: no such file" in missing.stderr


def test_an_isolated_run_continues_in_its_own_kept_worktree(tmp_path: Path, repo: Path) -> None:
    store = tmp_path / "sessions"
    spec = agent("editor", store, write="notes.txt")
    first = run(
        "--prompt", "first line", "--format", "json", "--agent", spec,
        "--cwd", str(repo), "--worktree", "--keep-worktrees",
    )  # fmt: skip
    assert first.exit_code == 0, first.stderr
    [record] = records(first).values()
    assert record["diff_stat"] == {"files": 1, "insertions": 1, "deletions": 0}
    worktree = Path(record["worktree"])
    (tmp_path / "r.jsonl").write_text(first.stdout)

    second = run(
        "--continue",
        str(tmp_path / "r.jsonl"),
        "--prompt",
        "second line",
        "--format",
        "json",
        "--agent",
        spec,
    )
    assert second.exit_code == 0, second.stderr
    [follow] = records(second).values()
    assert follow["worktree"] == str(worktree) and follow["cwd"] == record["cwd"]
    assert follow["diff_stat"] == {"files": 1, "insertions": 2, "deletions": 0}  # both turns, from the base
    assert "+first line\n+second line\n" in follow["diff"]
    assert not worktree.exists()  # not kept this time: removed once followed up
    assert not (repo / "notes.txt").exists()

    again = run(
        "--continue", str(tmp_path / "r.jsonl"), "--prompt", "third", "--format", "json", "--agent", spec
    )
    [gone] = records(again).values()
    assert (
        gone["stop_reason"] == "error"
        and gone["error"] == f"cannot continue: its worktree is gone: {worktree}"
    )
