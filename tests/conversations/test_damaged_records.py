"""Damaged or hostile records and saved-session files: each bad record is one line naming its key
(`result_from`, the one check of a record's shape), skipped and counted where a session reopens,
and never a traceback. Real files in the test's folders."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from acp_tui.cli.main import main
from acp_tui.lab.records_file import read_records
from acp_tui.reports.records import json_line, preset_for, read_record, result_from
from acp_tui.session.attempts import Session
from acp_tui.session.saved import SessionError, SessionStore
from acp_tui.settings import paths
from acp_tui.settings.schema import AgentPreset, Settings

GOOD: dict[str, Any] = {
    "name": "kept",
    "command": ["kept-agent", "--fast"],
    "prompt": "remember blue",
    "stop_reason": "completed",
    "output": "turn 1: remember blue",
    "session_id": "kept-1",
    "continuation": "resume",
    "turn": 1,
    "round": 1,
    "attempt": 1,
}

# (what is wrong, the key the error names)
BAD_FIELDS = [
    ({"duration_s": 10**400}, '"duration_s" is out of range'),
    ({"command": []}, '"command" is not a command line'),
    ({"command": "kept-agent"}, '"command" is not what a record holds'),
    ({"command": [1]}, '"command" holds something that is not a string'),
    ({"name": ["kept"]}, '"name" is not what a record holds'),
    ({"usage": {"used": [1], "size": 2}}, '"usage.used" is not what a record holds'),
    ({"usage": {"used": 1, "size": 2, "cost": {}}}, '"usage.cost.amount" is missing'),
    (
        {"usage": {"used": 1, "size": 2, "cost": {"amount": 10**400, "currency": "USD"}}},
        '"usage.cost.amount"',
    ),
    ({"permissions": [{"options": 5}]}, '"permissions.options" is not what a record holds'),
    ({"permissions": [{"options": [{"name": 3}]}]}, '"permissions.options.name"'),
    ({"permissions": ["allow"]}, '"permissions" holds something that is not a permission'),
    ({"session_id": [1]}, '"session_id" is not what a record holds'),
    ({"turn": "2"}, '"turn" is not what a record holds'),
    ({"turn": 0}, '"turn" is not a number from 1'),
    ({"round": [1]}, '"round" is not what a record holds'),
    ({"hidden": {"thought": "many"}}, '"hidden" holds a value'),
    ({"options": {"mode": 1}}, '"options" holds a value'),
    ({"agent": {"title": "no name"}}, '"agent.name" is missing'),
    ({"sandbox": "off"}, '"sandbox" is not what a record holds'),
    ({"worktree": "/somewhere"}, '"worktree" has no "base"'),
    ({"continuation": "telepathy"}, '"continuation" is not what a record holds'),
    ({"stop_reason": "exploded"}, '"stop_reason" is not a stop reason'),
    ({"exit_code": 1.5}, '"exit_code" is not what a record holds'),
    ({"truncated": "yes"}, '"truncated" is not what a record holds'),
]


@pytest.mark.parametrize(("bad", "said"), BAD_FIELDS)
def test_every_bad_field_is_a_value_error_naming_its_key(bad: dict[str, Any], said: str) -> None:
    with pytest.raises(ValueError, match="^" + re.escape(said)):
        result_from({**GOOD, **bad})


def test_a_good_record_reads_back() -> None:
    result = result_from(GOOD)
    assert result.output == "turn 1: remember blue" and result.session_id == "kept-1"
    assert result.continuation == "resume"


def test_a_confined_record_is_followed_up_confined_whatever_the_settings_say() -> None:
    settings = Settings(presets=(AgentPreset("kept", "kept-agent"),))
    assert preset_for(read_record(GOOD), settings) == settings.preset("kept")
    confined = {**GOOD, "sandbox": "workspace"}
    assert preset_for(read_record(confined), settings).sandbox == "workspace"
    unknown = preset_for(read_record({**confined, "name": "other"}), settings)
    assert (unknown.command, unknown.args, unknown.sandbox) == ("kept-agent", ("--fast",), "workspace")


def test_restore_skips_and_counts_the_records_that_are_not_ours() -> None:
    records = [{**GOOD, **bad} for bad, _ in BAD_FIELDS]
    records.append({**GOOD, "turn": 2, "output": "turn 2"})
    conversations, skipped = Session().restore(
        [GOOD, *records], lambda r: preset_for(r, Settings(presets=()))
    )
    assert skipped == len(BAD_FIELDS)
    [latest] = conversations
    assert latest.turn == 2 and latest.previous is not None and latest.previous.turn == 1


# Saved sessions --------------------------------------------------------------------------------------


def saved_file(store: SessionStore, *lines: str) -> Path:
    session = store.new("/work")
    with open(session.path, "a", encoding="utf-8") as file:
        file.write("".join(lines))
    return session.path


def test_a_line_cut_short_is_skipped_counted_and_left_and_the_next_record_has_its_own_line(
    tmp_path: Path,
) -> None:
    store = SessionStore(tmp_path / "sessions")
    cut = json.dumps({**GOOD, "round": 2})[:40]
    path = saved_file(store, json.dumps(GOOD) + "\n", "not json at all\n", "[1, 2]\n", cut)
    session, records = store.open(path.stem)
    assert records == [GOOD] and session.damaged == 3
    session.append({**GOOD, "turn": 2})
    assert cut in path.read_text().splitlines()  # left as it was, on a line of its own
    again, records = store.open(path.stem)
    assert [r["turn"] for r in records] == [1, 2] and again.damaged == 3
    [summary] = store.summaries()
    assert summary.rounds == 1 and summary.first_prompt == "remember blue"


@pytest.mark.parametrize("header", ['{"acp_tui_sess', '{"acp_tui_session": 2}', "[]", '"text"'])
def test_only_a_bad_first_line_makes_a_file_no_session_of_ours(tmp_path: Path, header: str) -> None:
    folder = tmp_path / "sessions"
    folder.mkdir()
    (folder / "20240101-000000-abcdef.jsonl").write_text(header + "\n" + json.dumps(GOOD) + "\n")
    store = SessionStore(folder)
    with pytest.raises(SessionError, match=r"^session 20240101-000000-abcdef: not a session file of ours$"):
        store.open("20240101-000000-abcdef")
    assert store.summaries() == []


def test_sessions_lists_a_hostile_session_on_one_line() -> None:
    folder = paths.sessions_dir()
    folder.mkdir(parents=True)
    header = {"acp_tui_session": 1, "id": "x", "started": "\x1b]0;owned\x07\nnext", "cwd": "/"}
    records = [{**GOOD, "round": [1]}, {**GOOD, "round": {"a": 1}}, {**GOOD, "round": 2, "prompt": 3}]
    lines = [json.dumps(value) for value in (header, *records)]
    (folder / "20240101-000000-abcdef.jsonl").write_text("\n".join(lines) + '\n{"name": "ke')
    result = CliRunner().invoke(main, ["sessions"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    [line] = result.stdout.splitlines()
    assert "\x1b" not in line and "\x07" not in line
    assert line.startswith("20240101-000000-abcdef  \\x1b]0;owned\\x07\\nnext  2 rounds  kept  remember blue")
    shown = CliRunner().invoke(main, ["sessions", "--format", "json"], catch_exceptions=False)
    assert json.loads(shown.stdout)["started"] == header["started"]


def test_an_answer_with_the_line_breaks_json_leaves_unescaped_reads_back_whole(tmp_path: Path) -> None:
    record = {**GOOD, "output": "one\u2028two\u2029three\x85four\x1cfive"}
    store = SessionStore(tmp_path / "sessions")
    session = store.new("/work")
    session.append(record)
    again, records = store.open(session.id)
    assert records == [record] and again.damaged == 0
    path = tmp_path / "records.jsonl"
    path.write_text(json_line(record) + "\n" + json_line(GOOD) + "\n", encoding="utf-8")
    assert read_records(path, label=str(path)) == [read_record(record), read_record(GOOD)]
