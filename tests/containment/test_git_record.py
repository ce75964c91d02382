"""Recording is bounded and masked; applying says what it did: a 4 GiB sparse file, a recording
that outlives the run's time, a preset's secret written into a file, a renamed file."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from acp_tui.cli.main import main
from acp_tui.reports.records import RECORD_KEYS
from tests.containment.support import GIT_AGENT, attacker, objects_of, records, run, worktree_paths
from tests.helpers import git

SPARSE_4GIB = "python3 -c \"open('big.bin', 'wb').truncate(4 << 30)\"; echo small > small.txt"
# No machine hashes a terabyte within the test's timeout: only the run's own deadline ends it.
SPARSE_1TIB = "python3 -c \"open('big.bin', 'wb').truncate(1 << 40)\"; echo small > small.txt"
TOKEN = "tok-3f9a7c21-do-not-show"


def preset_file(tmp_path: Path, script: str, **extra: object) -> Path:
    """An agents.toml with one preset `agent` running the attacking agent, plus `extra` keys."""
    lines = [
        "[[agent]]",
        'name = "agent"',
        f"command = {json.dumps(sys.executable)}",
        f"args = {json.dumps([GIT_AGENT, script])}",
        'isolation = "worktree"',
    ]
    for key, value in extra.items():
        if isinstance(value, dict):
            lines.append(
                f"{key} = {{ " + ", ".join(f"{k} = {json.dumps(v)}" for k, v in value.items()) + " }"
            )
        else:
            lines.append(f"{key} = {json.dumps(value)}")
    config = tmp_path / "agents.toml"
    config.write_text("\n".join(lines) + "\n")
    return config


@pytest.mark.timeout(40)
def test_a_4_gib_sparse_file_is_skipped_and_the_run_ends_within_its_timeout(repo: Path) -> None:
    store = objects_of(repo)
    result = run("--worktree", "--timeout", "5", "--format", "json", "--cwd", str(repo),
                 "--prompt", "go", "--agent", attacker("agent", SPARSE_4GIB))  # fmt: skip
    assert result.exit_code == 0, result.stderr  # completed: not a run whose time ran out
    record = records(result)["agent"]
    assert record["stop_reason"] == "completed" and record["error"] is None
    assert record["skipped"] == ["big.bin"]
    assert "+small" in record["diff"] and "big.bin" not in record["diff"]
    assert record["diff_stat"] == {"files": 1, "insertions": 1, "deletions": 0}
    assert objects_of(repo) == store  # nothing added to the repository's object store
    assert worktree_paths(repo) == [str(repo)]


@pytest.mark.timeout(40)
def test_recording_counts_against_the_runs_timeout(repo: Path, tmp_path: Path) -> None:
    """With the size limit out of the way, hashing 1 TiB would take far longer than the run may: the
    test's timeout, not a clock of ours, is what a recording that ignored the run's time would hit."""
    config = preset_file(tmp_path, SPARSE_1TIB, max_file_bytes=1 << 50)
    store = objects_of(repo)
    result = run("--config", str(config), "--timeout", "3", "--format", "json", "--prompt", "go",
                 "--cwd", str(repo))  # fmt: skip
    assert result.exit_code == 0, result.stderr
    record = records(result)["agent"]
    assert record["diff"] is None and record["skipped"] == []
    assert "could not record the change: the run's time ran out" in result.stderr
    assert objects_of(repo) == store
    assert worktree_paths(repo) == [str(repo)]


@pytest.mark.parametrize(
    ("value", "words"),
    [
        (0, "must be a positive whole number of bytes"),
        (-5, "positive"),
        ("10MB", "positive"),
        (True, "positive"),
    ],
)
def test_max_file_bytes_is_validated(tmp_path: Path, value: object, words: str) -> None:
    result = run("--config", str(preset_file(tmp_path, "true", max_file_bytes=value)), "--prompt", "x")
    assert result.exit_code == 2
    [line] = result.stderr.splitlines()
    assert '"max_file_bytes"' in line and words in line


def test_a_small_max_file_bytes_skips_what_is_over_it(repo: Path, tmp_path: Path) -> None:
    script = "head -c 2000 /dev/zero | tr '\\0' x > medium.txt; echo s > small.txt"
    config = preset_file(tmp_path, script, max_file_bytes=1000, cwd=str(repo))
    result = run("--config", str(config), "--format", "json", "--prompt", "go")
    assert result.exit_code == 0, result.stderr
    record = records(result)["agent"]
    assert record["skipped"] == ["medium.txt"] and "+s" in record["diff"]


def test_the_new_keys_stand_in_every_record(repo: Path) -> None:
    keys = list(RECORD_KEYS)
    assert keys[keys.index("diff_truncated") + 1 : keys.index("diff_truncated") + 3] == [
        "skipped",
        "diff_masked",
    ]
    plain = run("--format", "json", "--prompt", "x", "--agent", attacker("plain", "true"))
    isolated = run("--worktree", "--format", "json", "--cwd", str(repo), "--prompt", "x",
                   "--agent", attacker("isolated", "true"))  # fmt: skip
    for result, name in ((plain, "plain"), (isolated, "isolated")):
        record = records(result)[name]
        assert list(record) == keys
        assert record["skipped"] == [] and record["diff_masked"] is False


def test_a_secret_the_agent_wrote_into_a_file_is_masked_and_such_a_record_is_not_applied(
    repo: Path, tmp_path: Path
) -> None:
    script = 'echo "token = $SERVICE_TOKEN" > settings.ini; echo plain > plain.txt'
    config = preset_file(tmp_path, script, cwd=str(repo), env={"SERVICE_TOKEN": TOKEN})
    result = run("--config", str(config), "--format", "json", "--prompt", "go")
    assert result.exit_code == 0, result.stderr
    record = records(result)["agent"]
    assert TOKEN not in result.stdout and TOKEN not in result.stderr
    assert "+token = ***" in record["diff"] and "+plain" in record["diff"]
    assert record["diff_masked"] is True

    report = run("--config", str(config), "--format", "markdown", "--prompt", "go")
    assert report.exit_code == 0, report.stderr
    assert TOKEN not in report.stdout and "token = ***" in report.stdout

    saved = tmp_path / "record.json"
    saved.write_text(json.dumps(record))
    git(repo, "stash", "-q")
    refused = CliRunner().invoke(main, ["apply", str(saved), "--cwd", str(repo)])
    assert refused.exit_code == 2
    [line] = refused.stderr.splitlines()
    assert 'the diff of run "agent" had secrets masked; apply it from the app or by hand' in line
    assert not (repo / "settings.ini").exists() and not (repo / "plain.txt").exists()


def test_apply_names_renamed_files(repo: Path, tmp_path: Path) -> None:
    result = run("--worktree", "--format", "json", "--cwd", str(repo), "--prompt", "go",
                 "--agent", attacker("mover", "mv src/app.py src/main.py; echo new > new.txt"))  # fmt: skip
    assert result.exit_code == 0, result.stderr
    saved = tmp_path / "record.json"
    saved.write_text(json.dumps(records(result)["mover"]))
    git(repo, "stash", "-q")
    applied = CliRunner().invoke(main, ["apply", str(saved), "--cwd", str(repo)])
    assert applied.exit_code == 0, applied.stderr
    assert (
        applied.stdout == 'applied the change of run "mover": 2 files: new.txt, src/app.py => src/main.py\n'
    )
    assert (repo / "src" / "main.py").is_file() and not (repo / "src" / "app.py").exists()


def test_the_size_limit_has_one_default() -> None:
    from acp_tui.settings import schema
    from acp_tui.workspace import worktrees

    assert schema.MAX_FILE_BYTES == worktrees.MAX_FILE_BYTES == 10_000_000
    assert schema.AgentPreset("a", "b").max_file_bytes == worktrees.MAX_FILE_BYTES
