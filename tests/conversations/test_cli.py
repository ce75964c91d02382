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


@pytest.mark.parametrize(
    ("bad", "said"),
    [
        ({"usage": {"used": [1], "size": 2}}, '"usage.used" is not what a record holds'),
        ({"usage": {"used": 1, "size": 2, "cost": {}}}, '"usage.cost.amount" is missing'),
        ({"permissions": [{"options": 5}]}, '"permissions.options" is not what a record holds'),
        ({"session_id": ["a", "list"]}, '"session_id" is not what a record holds'),
        ({"turn": "2"}, '"turn" is not what a record holds'),
        ({"duration_s": 10**400}, '"duration_s" is out of range'),
        ({"command": []}, '"command" is not a command line'),
    ],
)
def test_a_record_of_the_wrong_shape_is_exit_2_naming_the_file_and_its_line(
    tmp_path: Path, bad: dict[str, Any], said: str
) -> None:
    good = {"name": "a", "command": ["agent"], "stop_reason": "completed", "session_id": "s1"}
    path = tmp_path / "records.jsonl"
    path.write_text(json.dumps(good) + "\n" + json.dumps({**good, **bad}) + "\n")
    result = run("--continue", str(path), "--prompt", "again")
    assert result.exit_code == 2, result.output
    assert f"--continue {path} line 2: not a run record ({said}" in result.stderr, result.stderr
    assert "Traceback" not in result.output


def test_a_confined_run_is_continued_confined_without_sandbox(tmp_path: Path) -> None:
    work, outside = tmp_path / "work", tmp_path / "outside.txt"
    work.mkdir()
    spec = agent("confined", work / "sessions", write=outside)  # each prompt also written out there
    first = run("--prompt", "the first task", "--format", "json", "--agent", spec, "--cwd", str(work))
    [record] = records(first).values()
    assert record["sandbox"] == "none" and outside.read_text() == "the first task\n"
    recorded = tmp_path / "r.jsonl"
    recorded.write_text(json.dumps({**record, "sandbox": "workspace"}) + "\n")  # as a confined run's
    for named in (["--agent", spec], []):  # the preset of the settings, or one made of the record
        again = run("--continue", str(recorded), "--prompt", "next", "--format", "json", *named)
        [follow] = records(again).values()
        assert follow["sandbox"] == "workspace" and follow["turn"] == 2, again.stderr
        assert outside.read_text() == "the first task\n"  # confined (or not run at all without bwrap)


def test_a_recorded_cwd_outside_its_worktree_runs_nothing(tmp_path: Path, repo: Path) -> None:
    store = tmp_path / "sessions"
    spec = agent("editor", store, write="notes.txt")
    first = run(
        "--prompt", "first line", "--format", "json", "--agent", spec,
        "--cwd", str(repo), "--worktree", "--keep-worktrees",
    )  # fmt: skip
    [record] = records(first).values()
    worktree = Path(record["worktree"])
    (worktree / "out").symlink_to(tmp_path)
    outside, up, link = str(tmp_path), f"{worktree}/../..", f"{worktree}/out"
    for cwd, said in [
        (outside, f"its cwd {outside} is not inside its worktree {worktree}"),
        (up, f"its cwd {up} is not inside its worktree {worktree}"),
        (link, f"its cwd {link} leads out of its worktree {worktree} (through a link)"),
    ]:
        (tmp_path / "r.jsonl").write_text(json.dumps({**record, "cwd": cwd}) + "\n")
        again = run(
            "--continue", str(tmp_path / "r.jsonl"), "--prompt", "x", "--format", "json", "--agent", spec
        )
        assert again.exit_code == 1, again.stderr
        [refused] = records(again).values()
        assert refused["stop_reason"] == "error" and refused["output"] == ""
        assert refused["error"] == f"cannot continue: {said}"
        assert refused["ended_by"] is None and refused["worktree"] is None  # nothing was started there
    assert worktree.is_dir() and (worktree / "notes.txt").read_text() == "first line\n"


@pytest.mark.parametrize("offers", ["resume", "load"])
def test_load_continues_a_session_the_agent_keeps(tmp_path: Path, offers: str) -> None:
    store = tmp_path / "sessions"
    spec = agent("kept", store, offers=offers)
    first = run("--prompt", "remember blue", "--format", "json", "--agent", spec)
    [record] = records(first).values()
    loaded = run(
        "--agent", spec, "--load", record["session_id"], "--prompt", "which colour?", "--format", "json"
    )
    assert loaded.exit_code == 0, loaded.stderr
    [again] = records(loaded).values()
    assert again["output"] == "turn 2: which colour? (after: remember blue)"
    assert again["session_id"] == record["session_id"] and again["continuation"] == offers
    assert ("history" in again["hidden"]) is (offers == "load")  # replayed, consumed, never the answer


def test_load_says_in_one_line_when_it_cannot(tmp_path: Path) -> None:
    store = tmp_path / "sessions"
    plain = run(
        "--agent",
        agent("plain", store, offers="none"),
        "--load",
        "kept-x",
        "--prompt",
        "p",
        "--format",
        "json",
    )
    assert plain.exit_code == 1
    [record] = records(plain).values()
    assert record["error"] == "cannot continue: plain offers neither session/resume nor session/load"
    unknown = run("--agent", agent("kept", store), "--load", "kept-nope", "--prompt", "p", "--format", "json")
    [record] = records(unknown).values()
    assert record["stop_reason"] == "error" and "Resource not found" in record["error"]
    both = run(
        "--agent", agent("a", store), "--agent", agent("b", store), "--load", "kept-x", "--prompt", "p"
    )
    assert both.exit_code == 2
    assert "--load continues one session of one agent: exactly one --agent" in both.stderr
