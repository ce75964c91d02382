"""`acp-tui policy check`: a folder of recorded runs decided again by a policy, without any agent.

The records are made by the product itself: `acp-tui run --format json --trace DIR` over three real
agents under `allow` (the demo's pong, and two scripted agents asking to run `git push` as Claude
Code sends it and `git status` as Codex sends it).
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import SCRIPTED_AGENT

REPO = Path(__file__).resolve().parents[2]
CLAUDE_PUSH = {"command": "git push origin main", "description": "Push the branch"}
CONFIG = """
[[agent]]
name = "unused"
command = "true"

[policy.no-push]
default = "allow"
[[policy.no-push.rule]]
name = "no pushes"
action = "reject"
command = "git push*"

[policy.no-secrets]
default = "allow"
[[policy.no-secrets.rule]]
name = "secrets stay"
action = "reject"
path = "secrets/**"

[policy.no-proof]
default = "allow"
[[policy.no-proof.rule]]
name = "no proof"
action = "reject"
path = "proof.txt"
"""


def acp_tui(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "acp_tui", *args],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        cwd=cwd,
        timeout=50,
        check=False,
    )


def scripted_spec(name: str, raw: object, title: str) -> str:
    options = [
        "permission=normal",
        "permission_kind=execute",
        f"permission_title={title}",
        f"permission_raw={json.dumps(raw)}",
    ]
    return f"{name}=" + shlex.join([sys.executable, SCRIPTED_AGENT, *options])


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder holding the JSON records of three runs and their traces."""
    root = tmp_path_factory.mktemp("runs")
    work = root / "work"
    work.mkdir()
    codex_status = {
        "call_id": "call_1",
        "command": ["bash", "-lc", "git status"],
        "cwd": str(work),
        "parsed_cmd": [{"type": "unknown", "cmd": "git status"}],
    }
    agents = [
        "demo-pong=" + shlex.join([sys.executable, "-m", "acp_tui.demo.agent", "--persona", "pong"]),
        scripted_spec("claude-like", CLAUDE_PUSH, "`git push origin main`"),
        scripted_spec("codex-like", codex_status, "git status"),
    ]
    folder = root / "records"
    done = acp_tui(
        "run",
        "--prompt",
        "ping",
        "--policy",
        "allow",
        "--format",
        "json",
        "--cwd",
        str(work),
        "--trace",
        str(folder / "traces"),
        *(arg for agent in agents for arg in ("--agent", agent)),
    )
    assert done.returncode == 0, done.stderr
    (folder / "runs.jsonl").write_text(done.stdout)
    (root / "agents.toml").write_text(CONFIG)
    return root


def check(runs: Path, *args: str, folder: Path | None = None) -> subprocess.CompletedProcess[str]:
    return acp_tui(
        "policy", "check", "--config", str(runs / "agents.toml"), *args, str(folder or runs / "records")
    )


def json_rows(done: subprocess.CompletedProcess[str]) -> dict[str, dict[str, object]]:
    rows = [json.loads(line) for line in done.stdout.splitlines()]
    for row in rows:
        assert list(row) == ["run", "agent", "kind", "title", "was", "now", "changed"]
        assert list(row["was"]) == list(row["now"]) == ["decision", "rule"]
    return {str(row["agent"]): row for row in rows}


def test_a_policy_that_flips_one_decision_exits_1_with_the_row(runs: Path) -> None:
    done = check(runs, "--policy", "no-push", "--format", "json")
    assert done.returncode == 1, done.stderr
    rows = json_rows(done)
    assert sorted(rows) == [
        "claude-like",
        "codex-like",
        "demo-pong",
    ]  # each request once: traces deduplicated
    assert rows["claude-like"].pop("run") in ("runs.jsonl:1", "runs.jsonl:2", "runs.jsonl:3")  # its record
    assert rows["claude-like"] == {
        "agent": "claude-like",
        "kind": "execute",
        "title": "`git push origin main`",
        "was": {"decision": "allow_once", "rule": "allow"},
        "now": {"decision": "reject_once", "rule": "no pushes"},
        "changed": True,
    }
    assert rows["codex-like"]["changed"] is False
    assert rows["codex-like"]["now"] == {"decision": "allow_once", "rule": "default"}
    assert rows["demo-pong"]["changed"] is False


def test_a_policy_that_flips_none_exits_0(runs: Path) -> None:
    for policy in ("no-secrets", "allow", "allow-once"):
        done = check(runs, "--policy", policy)
        assert done.returncode == 0, (policy, done.stdout, done.stderr)
        assert done.stdout.splitlines()[-1] == "0 of 3 decisions changed"


def test_the_text_table_marks_the_changed_row(runs: Path) -> None:
    done = check(runs, "--policy", "reject")
    assert done.returncode == 1
    header, *rows, summary = done.stdout.splitlines()
    assert header.split() == ["run", "agent", "kind", "title", "was", "by", "reject", "by", "changed"]
    assert summary == "3 of 3 decisions changed"
    pong = next(row for row in rows if "demo-pong" in row)
    assert pong.startswith("runs.jsonl:")  # which run asked: its record's file and line
    assert "allow_once  allow" in pong and "reject_once  reject" in pong and pong.endswith("*")


def test_against_compares_two_policies_instead_of_the_records(runs: Path) -> None:
    done = check(runs, "--policy", "no-push", "--against", "reject", "--format", "json")
    assert done.returncode == 1
    rows = json_rows(done)
    assert rows["claude-like"]["was"] == {"decision": "reject_once", "rule": "no pushes"}
    assert rows["claude-like"]["changed"] is False
    assert rows["demo-pong"]["was"] == {"decision": "allow_once", "rule": "default"}
    assert rows["demo-pong"]["now"] == {"decision": "reject_once", "rule": "reject"}

    asked = json_rows(check(runs, "--policy", "allow", "--against", "ask", "--format", "json"))
    assert {row["now"]["decision"] for row in asked.values()} == {"ask"}  # type: ignore[index]


def test_path_rules_read_the_traces_cwd(runs: Path, tmp_path: Path) -> None:
    """Traces alone (no records): the recorded rule is unknown, the cwd comes from session/new."""
    done = check(runs, "--policy", "no-proof", "--format", "json", folder=runs / "records" / "traces")
    assert done.returncode == 1, done.stderr
    rows = json_rows(done)
    assert rows["demo-pong"]["was"] == {"decision": "allow_once", "rule": None}
    assert rows["demo-pong"]["now"] == {"decision": "reject_once", "rule": "no proof"}
    assert not rows["claude-like"]["changed"]


def test_old_records_without_raw_input_still_read(runs: Path, tmp_path: Path) -> None:
    old = tmp_path / "old.jsonl"
    lines = []
    for line in (runs / "records" / "runs.jsonl").read_text().splitlines():
        record = json.loads(line)
        record["trace"] = None
        for permission in record["permissions"]:
            permission.pop("raw_input", None)
            permission.pop("locations", None)
        lines.append(json.dumps(record))
    old.write_text("\n".join(lines) + "\n")
    done = check(runs, "--policy", "no-push", "--format", "json", folder=old)
    assert done.returncode == 0, done.stderr  # nothing left for a command rule to match
    assert len(json_rows(done)) == 3


@pytest.mark.parametrize(
    ("content", "says"),
    [
        ("not json\n", "line 1: not JSON"),
        ('{"name": "x"}\n', 'line 1: neither a run record (with "permissions") nor a trace line'),
        ('{"name": "x", "permissions": [{"title": 3}]}\n', '"title" and "decision" must be strings'),
        ('{"t": 0, "dir": "up", "frame": {}}\n', 'line 1: "dir" must be "in" or "out"'),
    ],
)
def test_malformed_records_exit_2_naming_the_file(
    runs: Path, tmp_path: Path, content: str, says: str
) -> None:
    folder = tmp_path / "records"
    shutil.copytree(runs / "records", folder)
    bad = folder / "zz-bad.jsonl"
    bad.write_text(content)
    done = check(runs, "--policy", "allow", folder=folder)
    assert done.returncode == 2
    assert done.stdout == ""
    [line] = done.stderr.splitlines()
    assert str(bad) in line and says in line, line


def test_usage_errors_exit_2(runs: Path, tmp_path: Path) -> None:
    done = check(runs, "--policy", "nope")
    assert done.returncode == 2
    assert '--policy "nope": unknown policy' in done.stderr
    done = acp_tui("policy", "check", "--policy", "allow", str(tmp_path / "missing"))
    assert done.returncode == 2 and "no such file or folder" in done.stderr
    bad_config = tmp_path / "bad.toml"
    bad_config.write_text('[[agent]]\nname="a"\ncommand="x"\n[policy.p]\norder = "random"\n')
    done = acp_tui("policy", "check", "--config", str(bad_config), "--policy", "p", str(runs / "records"))
    assert done.returncode == 2 and '"order" must be "first-match" or "deny-first"' in done.stderr


def test_a_pretty_printed_record_or_a_list_of_them_reads_too(runs: Path, tmp_path: Path) -> None:
    records = [json.loads(line) for line in (runs / "records" / "runs.jsonl").read_text().splitlines()]
    for record in records:
        record["trace"] = None
    (tmp_path / "one.json").write_text(json.dumps(records[0], indent=2))
    (tmp_path / "all.json").write_text(json.dumps(records[1:], indent=2))
    done = check(runs, "--policy", "allow", "--format", "json", folder=tmp_path)
    assert done.returncode == 0, done.stderr
    assert len(done.stdout.splitlines()) == 3


def test_a_policy_imported_from_claude_checks_the_records_as_it_is(runs: Path, tmp_path: Path) -> None:
    """`policy import claude` writes policies alone (no [[agent]]): `policy check --config` takes
    that file as it is, and the imported rules decide the recorded requests."""
    claude = tmp_path / "settings.json"
    claude.write_text(
        json.dumps(
            {
                "permissions": {
                    "deny": ["Bash(git push:*)"],
                    "allow": ["Bash(git status:*)", "Write(proof.txt)"],
                }
            }
        )
    )
    imported = acp_tui("policy", "import", "claude", str(claude))
    assert imported.returncode == 0, imported.stderr
    assert "[[agent]]" not in imported.stdout
    policies = tmp_path / "claude.toml"
    policies.write_text(imported.stdout)

    done = acp_tui(
        "policy",
        "check",
        "--config",
        str(policies),
        "--policy",
        "claude",
        "--format",
        "json",
        str(runs / "records"),
    )
    assert done.returncode == 1, done.stderr  # the push is rejected now
    rows = json_rows(done)
    assert rows["claude-like"]["now"] == {"decision": "reject_once", "rule": "deny Bash(git push:*)"}
    assert rows["codex-like"]["now"] == {"decision": "allow_once", "rule": "allow Bash(git status:*)"}
    assert rows["demo-pong"]["now"] == {"decision": "allow_once", "rule": "allow Write(proof.txt)"}
    assert [name for name, row in rows.items() if row["changed"]] == ["claude-like"]


def test_a_policies_only_file_runs_an_agent_given_inline(tmp_path: Path) -> None:
    """What `policy import claude` writes has no [[agent]]: `--agent 'NAME=COMMAND'` is the agent."""
    claude = tmp_path / "settings.json"
    claude.write_text(json.dumps({"permissions": {"allow": ["Write(proof.txt)"]}}))
    imported = acp_tui("policy", "import", "claude", str(claude))
    assert imported.returncode == 0, imported.stderr
    policies = tmp_path / "claude.toml"
    policies.write_text(imported.stdout)
    agent = shlex.join([sys.executable, SCRIPTED_AGENT, "text=done"])
    config = ("--config", str(policies))
    done = acp_tui("run", *config, "--agent", f"n={agent}", "--prompt", "hi", "--format", "json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["output"] == "done"
    alone = acp_tui("run", *config, "--prompt", "hi")  # no agent anywhere: said
    assert alone.returncode == 2 and "no agents" in alone.stderr
