"""The policy lab in the app: the ask modal, the permission log, per-preset policies, traces, export."""

from __future__ import annotations

import json
from pathlib import Path

from textual.widgets import Log

from acp_tui.core.model import SubagentStopReason
from acp_tui.reports import records as report
from acp_tui.settings import paths
from acp_tui.ui.app import SupervisorApp
from acp_tui.ui.screens.permission_log_screen import PermissionLogScreen
from acp_tui.ui.screens.permission_screen import PermissionScreen
from acp_tui.ui.screens.policy_screen import PolicyScreen
from acp_tui.ui.screens.trace_screen import TraceScreen
from acp_tui.ui.widgets.choice import Choice
from tests.ui.helpers import all_finished, panes, scripted_preset, settings, wait_until

SIZE = (150, 40)


async def test_ask_shows_the_request_and_the_human_picks_an_option() -> None:
    app = SupervisorApp(settings(scripted_preset("asker", policy="ask", permission="allow_always_first")))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("enter")
        pane = panes(app)["asker"]
        await wait_until(pilot, lambda: pane.attempt.state == "needs-you")
        assert not isinstance(app.screen, PermissionScreen)  # queued: it takes no key by itself
        await pilot.press("a")
        await wait_until(pilot, lambda: isinstance(app.screen, PermissionScreen))
        screen = app.screen
        assert isinstance(screen, PermissionScreen)
        assert screen.ask.title == "Write proof.txt"
        assert [o.kind for o in screen.ask.options][:2] == ["allow_always", "allow_once"]
        await pilot.press("2")  # allow once, not the lasting rule offered first
        await wait_until(pilot, all_finished(app))
        pane = panes(app)["asker"]
        assert pane.attempt.result is not None
        [record] = pane.attempt.result.permissions
        assert (record.decision, record.option_id, record.rule) == ("allow_once", "a1", "ask")
        assert '"optionId": "a1"' in pane.answer.text


async def test_cancelling_the_run_while_the_modal_is_open_answers_cancelled() -> None:
    app = SupervisorApp(settings(scripted_preset("asker", policy="ask", permission="normal")))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("enter")
        await wait_until(pilot, lambda: bool(app.asks))
        await pilot.press("a")
        await wait_until(pilot, lambda: isinstance(app.screen, PermissionScreen))
        pane = panes(app)["asker"]
        pane.action_cancel()  # its Cancel (the mouse's), under the dialog
        await wait_until(pilot, all_finished(app))
        await wait_until(pilot, lambda: not isinstance(app.screen, PermissionScreen))
        assert pane.attempt.result is not None
        assert pane.attempt.result.stop_reason is SubagentStopReason.ABORTED
        [record] = pane.attempt.result.permissions
        assert (record.decision, record.rule) == ("cancelled", "cancelled")
        assert app.asks == [] and "need" not in app.sub_title  # the request left the queue


async def test_the_permission_log_shows_what_was_asked_and_decided() -> None:
    app = SupervisorApp(settings(scripted_preset("agent", permission="allow_always_first")))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("enter")
        await wait_until(pilot, all_finished(app))
        panes(app)["agent"].focus()
        await pilot.press("l")
        await wait_until(pilot, lambda: isinstance(app.screen, PermissionLogScreen))
        table = app.screen.query_one("DataTable")
        row = [str(cell) for cell in table.get_row_at(0)]  # type: ignore[attr-defined]
        assert row[:2] == ["reject_once (r1)", "reject"]  # decision and rule first, then the wait
        assert row[2].endswith(" s") and row[5] == "Write proof.txt" and row[4] == "edit"
        assert "Always allow (allow_always)" in row[6]
        await pilot.press("escape")
        assert not isinstance(app.screen, PermissionLogScreen)


async def test_a_policy_picked_before_running_applies_to_the_next_run() -> None:
    app = SupervisorApp(settings(scripted_preset("agent", permission="normal")))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f2")
        await wait_until(pilot, lambda: isinstance(app.screen, PolicyScreen))
        app.screen.query_one(Choice).value = "allow"
        await pilot.click("#apply")
        await wait_until(pilot, lambda: not isinstance(app.screen, PolicyScreen))
        assert app.next_runs.policies == {"agent": "allow"}
        app.main_screen.action_focus_prompt()
        await pilot.press("enter")
        await wait_until(pilot, all_finished(app))
        pane = panes(app)["agent"]
        assert pane.attempt.result is not None
        assert [(r.decision, r.rule) for r in pane.attempt.result.permissions] == [("allow_once", "allow")]
        assert "allow" in str(pane.border_subtitle)


async def test_tracing_records_the_frames_and_the_pane_shows_them() -> None:
    app = SupervisorApp(settings(scripted_preset("agent", text="traced")))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("ctrl+t")
        await pilot.press("enter")
        await wait_until(pilot, all_finished(app))
        pane = panes(app)["agent"]
        pane.focus()
        await pilot.press("t")
        await wait_until(pilot, lambda: isinstance(app.screen, TraceScreen) and app.screen.loaded)
        lines = "\n".join(app.screen.query_one(Log).lines)
        for method in ("initialize", "session/new", "session/prompt", "session/update"):
            assert method in lines
    [trace] = paths.traces_dir().glob("agent-*.jsonl")
    frames = [json.loads(line) for line in trace.read_text().splitlines()]
    assert frames[0]["dir"] == "out"
    assert frames[0]["frame"]["method"] == "initialize"


async def test_export_writes_markdown_and_json_lines_with_the_run_schema(tmp_path: Path) -> None:
    app = SupervisorApp(
        settings(
            scripted_preset("good", text="fine answer", permission="normal"),
            scripted_preset("bad", stop="refusal", text="no"),
        )
    )
    app.export_dir = tmp_path
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("enter")
        await wait_until(pilot, all_finished(app))
        await pilot.press("ctrl+s")
        expected = [
            report.run_record(
                app.settings.preset(p.agent),
                p.attempt.result,
                prompt=p.attempt.prompt,
                policy=p.attempt.policy,
                cwd=p.attempt.cwd,
                first_chunk_s=p.attempt.record().first_chunk_s,
            )
            .numbered(1, 1)
            .model_dump(mode="json")
            for p in panes(app).values()
            if p.attempt.result is not None
        ]
    [jsonl] = tmp_path.glob("acp-tui-*.jsonl")
    [md] = tmp_path.glob("acp-tui-*[0-9].md")  # beside the comparison report, `...-compare.md`
    records = [json.loads(line) for line in jsonl.read_text().splitlines()]
    assert records == json.loads(json.dumps(expected))
    assert list(records[0]) == [*report.RECORD_KEYS, "round", "attempt"]  # the isolation keys among them
    text = md.read_text()
    assert "## good (round 1, attempt 1): completed" in text
    assert "## bad (round 1, attempt 1): refusal" in text
    assert "fine answer" in text
