"""Conversations in the app: `f` follows up in the same pane, spares start agents ahead of Enter,
saved sessions reopen with their panes, ctrl+c asks once. Pilot, a stdlib agent over real stdio."""

from __future__ import annotations

import sys
from pathlib import Path

from acp_tui.session.saved import SessionStore
from acp_tui.settings.schema import AgentPreset
from acp_tui.ui.app import SupervisorApp
from acp_tui.ui.screens.confirm_screen import QuitScreen
from acp_tui.ui.widgets.prompt_area import PromptArea
from acp_tui.ui.widgets.prompt_bar import PromptBar
from tests.helpers import our_live_processes
from tests.ui.helpers import all_finished, panes, scripted_preset, settings, wait_until

AGENT = str(Path(__file__).resolve().parent.parent / "sessions_agent.py")
SIZE = (140, 40)


def kept(name: str, store: Path, **options: object) -> AgentPreset:
    args = (AGENT, f"store={store}", *(f"{k}={v}" for k, v in options.items()))
    return AgentPreset(name, sys.executable, args)


async def test_f_follows_up_in_the_same_pane_with_its_session(tmp_path: Path) -> None:
    app = SupervisorApp(settings(kept("kept", tmp_path / "s"), prompt="the first task"))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("enter")
        await wait_until(pilot, all_finished(app))
        pane = panes(app)["kept"]
        pane.focus()
        await pilot.press("f")
        bar = app.query_one(PromptBar)
        assert bar.follow_up is pane.attempt and app.query_one(PromptArea).has_focus
        assert app.query_one(PromptArea).text == "" and "follow up: kept r1·a1" in str(bar.border_title)
        await pilot.press(*"now the test", "enter")
        await wait_until(pilot, lambda: pane.attempt.turn == 2 and pane.attempt.result is not None)
        assert (
            pane.attempt.result is not None
            and pane.attempt.result.output == "turn 2: now the test (after: the first task)"
        )
        shown = pane.answer.text
        assert "turn 1: the first task" in shown and "follow up (r1·a1·t2)" in shown and "turn 2:" in shown
        assert bar.follow_up is None  # sent: the mode is left
        pane.blur()  # the pane's line names the conversation's opening prompt, focused or not
        await pilot.pause()
        assert pane.shown("asked") == "the first task"
        assert [a.turn for a in app.session.attempts] == [1, 2]
        records = app.session.records()
        assert [r.turn for r in records] == [1, 2] and records[0].session_id == records[1].session_id


async def test_escape_leaves_follow_up_mode_and_f_says_when_it_cannot(tmp_path: Path) -> None:
    app = SupervisorApp(settings(kept("plain", tmp_path / "s", offers="none")))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("enter")
        await wait_until(pilot, all_finished(app))
        pane = panes(app)["plain"]
        pane.focus()
        await pilot.press("f")
        assert app.query_one(PromptBar).follow_up is None
        assert "no follow-up: plain offers neither session/resume nor session/load" in pane.shown("error")
    app = SupervisorApp(settings(kept("kept", tmp_path / "t")))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("enter")
        await wait_until(pilot, all_finished(app))
        panes(app)["kept"].focus()
        await pilot.press("f", "escape")
        assert app.query_one(PromptBar).follow_up is None


async def test_a_spare_started_while_the_person_reads_answers_enter_at_once(tmp_path: Path) -> None:
    marks = tmp_path / "started"
    slow = kept("slow", tmp_path / "s", start_delay=3, mark=marks)
    app = SupervisorApp(settings(slow, warm=True))
    async with app.run_test(size=SIZE) as pilot:
        spares = app.driver.spares
        assert spares is not None
        await wait_until(
            pilot,
            lambda: (
                bool(spares._spares)
                and all(s.handshake and s.handshake.ready.is_set() for s in spares._spares)
            ),
        )
        [started] = marks.read_text().splitlines()  # the spare's process, through its 3 s start
        await pilot.press("enter")
        await wait_until(pilot, all_finished(app))
        attempt = panes(app)["slow"].attempt
        assert attempt.warm and attempt.first_output_at is not None
        # The process that answered is that spare: its start was paid before Enter.
        assert attempt.run is not None and started == f"started {attempt.run.pid}"
        assert attempt.record().warm is True
        # The next round's spare, and the follow-up's (its turn ended, in view).
        await wait_until(pilot, lambda: len(marks.read_text().splitlines()) == 3)
    assert not our_live_processes()  # the spare went with the app


async def test_a_follow_up_s_spare_starts_when_the_turn_ends_and_f_takes_it(tmp_path: Path) -> None:
    marks = tmp_path / "started"
    app = SupervisorApp(settings(kept("kept", tmp_path / "s", mark=marks), warm=True))
    async with app.run_test(size=SIZE) as pilot:
        spares = app.driver.spares
        assert spares is not None
        await wait_until(pilot, lambda: bool(spares._spares) and marks.exists())
        await pilot.press("enter")
        await wait_until(pilot, all_finished(app))
        pane = panes(app)["kept"]
        # Once the turn ended: the next round's spare, and the follow-up's, in the background.

        def follow_up_spares() -> list[int]:
            return [
                s.handshake.child.leader.pid
                for s in spares._spares
                if s.wanted.follow_up and s.handshake and s.handshake.ready.is_set() and s.handshake.child
            ]

        await wait_until(pilot, lambda: len(follow_up_spares()) == 1)
        [spare_pid] = follow_up_spares()
        assert f"started {spare_pid}" in marks.read_text().splitlines()
        pane.focus()
        await pilot.press("f", *"and then", "enter")
        await wait_until(pilot, lambda: len(app.session.attempts) == 2 and all_finished(app)())
        turn = app.session.attempts[1]
        assert turn.warm and turn.run is not None and turn.run.pid == spare_pid  # the spare answered
        assert turn.result is not None and turn.result.output == "turn 2: and then (after: hello)"


async def test_unchecking_an_agent_disposes_its_spare(tmp_path: Path) -> None:
    app = SupervisorApp(settings(kept("a", tmp_path / "s"), kept("b", tmp_path / "s"), warm=True))
    async with app.run_test(size=SIZE) as pilot:
        spares = app.driver.spares
        assert spares is not None
        await wait_until(pilot, lambda: len(spares._spares) == 2)
        box = next(box for box in app.query("#targets Toggle") if box.name == "b")
        box.value = False
        await wait_until(pilot, lambda: [s.wanted.config.name for s in spares._spares] == ["a"])


async def test_new_spares_wait_while_a_run_is_starting(tmp_path: Path) -> None:
    """Booting beside a run that is starting, a spare would take the cores from it: the spares wanted
    when `a`'s turn ends wait for `h`, whose agent never answers `initialize`, and start once it
    no longer starts (here: cancelled)."""
    app = SupervisorApp(
        settings(kept("a", tmp_path / "s"), scripted_preset("h", hang="initialize"), warm=True)
    )
    async with app.run_test(size=SIZE) as pilot:
        spares = app.driver.spares
        assert spares is not None
        await wait_until(pilot, lambda: len(spares._spares) == 2)
        first = list(spares._spares)
        await pilot.press("enter")
        await wait_until(pilot, lambda: panes(app)["a"].attempt.finished)
        hung = panes(app)["h"].attempt
        assert hung.starting and all(spare in first for spare in spares._spares)  # none new
        await app.driver.cancel(hung)
        await wait_until(pilot, lambda: any(spare not in first for spare in spares._spares))
        await wait_until(pilot, lambda: len([s for s in spares._spares if s.wanted.config.name == "a"]) == 2)
        assert {s.wanted.follow_up for s in spares._spares if s.wanted.config.name == "a"} == {False, True}


async def test_a_saved_session_reopens_with_its_panes_and_follow_ups_continue(tmp_path: Path) -> None:
    store = SessionStore(tmp_path / "sessions")
    preset = kept("kept", tmp_path / "s")
    # As `acp-tui` starts: the store is opened at the first record kept, not before the first frame.
    app = SupervisorApp(settings(preset, prompt="remember blue"), store=lambda: store)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("enter")
        await wait_until(pilot, all_finished(app))
    [summary] = store.summaries()
    assert summary.rounds == 1 and summary.agents == ("kept",) and summary.first_prompt == "remember blue"

    reopened = store.open(summary.id)
    app = SupervisorApp(settings(preset), store=store, reopened=reopened)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: "kept" in panes(app))
        pane = panes(app)["kept"]
        await wait_until(pilot, lambda: "turn 1: remember blue" in pane.answer.text)
        pane.focus()
        await pilot.press("f", *"which colour", "enter")
        await wait_until(pilot, lambda: pane.attempt.turn == 2 and pane.attempt.result is not None)
        assert (
            pane.attempt.result is not None
            and pane.attempt.result.output == "turn 2: which colour (after: remember blue)"
        )
    _, records = store.open(summary.id)
    assert [r["turn"] for r in records] == [1, 2]  # the follow-up kept in the same session

    app = SupervisorApp(settings(preset), store=store, reopened=store.open(summary.id))
    async with app.run_test(size=SIZE) as pilot:  # both turns reopen in one pane, under its opening
        await wait_until(pilot, lambda: "kept" in panes(app))
        pane = panes(app)["kept"]
        await wait_until(pilot, lambda: "turn 2: which colour" in pane.answer.text)
        assert "turn 1: remember blue" in pane.answer.text
        assert pane.shown("asked") == "remember blue"
        # exported as they were saved, nothing rebuilt
        assert [r.model_dump(mode="json") for r in app.session.records()] == records


async def test_ctrl_c_asks_once_with_a_run_live_and_twice_quits(tmp_path: Path) -> None:
    from tests.ui.helpers import scripted_preset

    app = SupervisorApp(settings(scripted_preset("busy", forever=1)))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("enter")
        await wait_until(pilot, lambda: panes(app)["busy"].attempt.phase == "prompting")
        await pilot.press("ctrl+c")
        assert isinstance(app.screen, QuitScreen)
        await pilot.press("x")  # anything else stays
        assert not isinstance(app.screen, QuitScreen) and app.is_running
        await pilot.press("ctrl+c")
        await pilot.press("C")  # the app's own keys too: no "stop all" under the question
        assert not isinstance(app.screen, QuitScreen) and panes(app)["busy"].attempt.live
        await pilot.press("ctrl+c")
        assert isinstance(app.screen, QuitScreen)
        await pilot.press("ctrl+c")  # twice: at once
        await wait_until(pilot, lambda: not app.is_running)


async def test_the_board_reopens_a_conversation_in_one_pane_from_its_newest_turn(tmp_path: Path) -> None:
    app = SupervisorApp(settings(kept("kept", tmp_path / "s"), prompt="first"))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("enter")
        await wait_until(pilot, all_finished(app))
        pane = panes(app)["kept"]
        pane.focus()
        await pilot.press("f", *"second", "enter")
        await wait_until(pilot, lambda: pane.attempt.turn == 2 and pane.attempt.result is not None)
        first, second = app.session.attempts
        assert app.main_screen.pane_for(first) is pane  # one pane for the conversation
        pane.focus()
        await pilot.press("x")
        await wait_until(pilot, lambda: not panes(app))
        await app.main_screen._jump_to(first)  # the board's Enter on turn 1
        await wait_until(pilot, lambda: "kept" in panes(app))
        await pilot.pause()
        [again] = app.main_screen.panes()
        assert again.attempt is second  # `f` there goes on from the newest turn
        assert "turn 1: first" in again.answer.text
        assert "turn 2: second" in again.answer.text


async def test_the_spare_of_a_confined_turns_follow_up_is_confined_too(tmp_path: Path) -> None:
    """F2 may unconfine the agent since; its follow-up never is (the spare is made for exactly it)."""
    from dataclasses import replace

    from tests.sandbox.support import need_bwrap

    need_bwrap()
    work = tmp_path / "work"  # a sandbox's /tmp is its own: the agent keeps its sessions in its cwd
    work.mkdir()
    preset = replace(kept("kept", work / "s"), cwd=str(work), sandbox="workspace")
    app = SupervisorApp(settings(preset, prompt="first", warm=True))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("enter")
        await wait_until(pilot, all_finished(app))
        pane = panes(app)["kept"]
        assert pane.attempt.record().sandbox == "workspace" and pane.attempt.result is not None
        assert pane.attempt.result.output == "turn 1: first", pane.attempt.result.error
        app.next_runs.sandboxes["kept"] = "none"  # as F2 would
        pane.focus()
        await pilot.press("f")
        spares = app.driver.spares
        assert spares is not None
        await wait_until(pilot, lambda: any(s.wanted.follow_up for s in spares._spares))
        [follow_up] = [s.wanted for s in spares._spares if s.wanted.follow_up]
        assert follow_up.config.sandbox == "workspace"
        await pilot.press(*"second", "enter")
        await wait_until(pilot, lambda: pane.attempt.turn == 2 and pane.attempt.result is not None)
        assert (
            pane.attempt.result is not None and pane.attempt.result.output == "turn 2: second (after: first)"
        )
        assert pane.attempt.record().sandbox == "workspace" and pane.attempt.warm


async def test_a_reopened_session_skips_its_damaged_records_and_says_how_many_once(tmp_path: Path) -> None:
    preset = kept("kept", tmp_path / "s")
    store = SessionStore(tmp_path / "sessions")
    session = store.new(str(tmp_path))
    good = {
        "name": "kept", "command": preset.argv, "prompt": "remember blue", "stop_reason": "completed",
        "output": "turn 1: remember blue", "session_id": "kept-1", "round": 1, "attempt": 1,
    }  # fmt: skip
    for bad in ({"command": []}, {"duration_s": 10**400}, {"usage": {"used": [1]}}):
        session.append({**good, "round": 2, **bad})
    session.append(good)
    with open(session.path, "a") as file:
        file.write('{"name": "kept", "comm')  # cut short by a crash
    app = SupervisorApp(settings(preset), store=store, reopened=store.open(session.id))
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await wait_until(pilot, lambda: "kept" in panes(app))
        pane = panes(app)["kept"]
        await wait_until(pilot, lambda: "turn 1: remember blue" in pane.answer.text)
        assert [str(note.message) for note in app._notifications] == [
            f"Session {session.id}: skipped 4 damaged records."
        ]
        assert len(panes(app)) == 1

    only_cut = store.new(str(tmp_path))
    with open(only_cut.path, "a") as file:
        file.write('{"name": "kept", "comm')
    app = SupervisorApp(settings(preset), store=store, reopened=store.open(only_cut.id))
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await wait_until(pilot, lambda: bool(app._notifications))
        assert [str(note.message) for note in app._notifications] == [
            f"Session {only_cut.id}: skipped 1 damaged record."
        ]
        assert not panes(app)


async def test_a_reopened_session_shows_what_its_live_panes_showed(tmp_path: Path) -> None:
    """Hidden counts, cost and tokens, `mode · model`, the panes in the order they had."""
    from tests.ui.helpers import demo_preset

    store = SessionStore(tmp_path / "sessions")
    presets = (demo_preset("first", "pong", "--delay", "0.3"), demo_preset("second", "essay"))

    def shown(app: SupervisorApp) -> list[tuple[str, str, str, str]]:
        return [
            (
                pane.agent,
                pane.shown("stats"),
                pane.shown("usage"),
                str(pane.border_subtitle),
            )
            for pane in panes(app).values()
        ]

    app = SupervisorApp(settings(*presets), store=store)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("enter")
        await wait_until(pilot, all_finished(app))
        await pilot.pause()
        live = shown(app)
    assert [agent for agent, *_ in live] == ["first", "second"]
    assert all("hidden:" in stats and "USD" in usage and "mode ask" in sub for _, stats, usage, sub in live)

    [summary] = store.summaries()
    app = SupervisorApp(settings(*presets), store=store, reopened=store.open(summary.id))
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: len(panes(app)) == 2)
        await pilot.pause()
        assert shown(app) == live
