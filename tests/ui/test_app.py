"""The supervisor, driven by Pilot against real child agents over real stdio."""

from __future__ import annotations

import os
import signal

from acp_tui.core.model import SubagentStopReason
from acp_tui.process.group import group_alive
from acp_tui.ui.app import SupervisorApp
from acp_tui.ui.widgets.prompt_area import PromptArea
from acp_tui.ui.widgets.run_pane import RunPane
from acp_tui.ui.widgets.toggle import Toggle
from tests.helpers import our_live_processes
from tests.ui.helpers import (
    all_finished,
    click_cancel,
    demo_preset,
    ended,
    pane_lines,
    panes,
    scripted_preset,
    settings,
    wait_until,
)

SIZE = (150, 40)


def answer_of(app: SupervisorApp, agent: str) -> str:
    return panes(app)[agent].answer.text


async def test_enter_fans_the_prompt_out_to_every_agent_side_by_side() -> None:
    app = SupervisorApp(
        settings(
            scripted_preset("alpha", text="alpha says {prompt}"),
            scripted_preset("beta", stop="refusal", text="no"),
            scripted_preset("gamma", stop="max_tokens", text="trunc"),
            prompt="hi there",
        )
    )
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("enter")
        await wait_until(pilot, all_finished(app))
        found = panes(app)
        assert list(found) == ["alpha", "beta", "gamma"]
        assert {name: pane.shown("state") for name, pane in found.items()} == {
            "alpha": "completed",
            "beta": "refusal",
            "gamma": "max-tokens",
        }
        assert answer_of(app, "alpha") == "alpha says hi there"
        # Side by side: one row, three columns.
        assert len({pane.region.y for pane in found.values()}) == 1
        assert len({pane.region.x for pane in found.values()}) == 3


async def test_thoughts_and_tool_cards_never_reach_a_pane() -> None:
    app = SupervisorApp(settings(scripted_preset("agent", text="the answer", chunks=4, hidden=1)))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("enter")
        await wait_until(pilot, all_finished(app))
        pane = panes(app)["agent"]
        assert pane.answer.text == "the answer"
        on_screen = [line.strip() for line in pane_lines(pane)]
        assert on_screen[2] == "the answer"  # under the header row and the prompt
        shown = " ".join(on_screen)
        assert "thinking" not in shown
        assert "hidden: " in pane.shown("stats")
        assert "thoughts 4" in pane.shown("stats")


async def test_cancel_on_one_slow_run_aborts_only_that_one() -> None:
    app = SupervisorApp(
        settings(
            scripted_preset("slow", text="partial", forever=1),
            demo_preset("steady", "slow", "--delay", "0.05"),
        )
    )
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("enter")
        slow, steady = panes(app)["slow"], panes(app)["steady"]
        await wait_until(pilot, lambda: slow.answer.text.startswith("partial"))
        await click_cancel(pilot, slow)
        await wait_until(pilot, lambda: ended(slow))
        assert slow.attempt.result is not None
        assert slow.attempt.result.stop_reason is SubagentStopReason.ABORTED
        assert slow.shown("state") == "cancelled"  # aborted in the data
        assert slow.answer.text.startswith("partial")
        assert not group_alive(getattr(slow.attempt.run, "pid", 0) or 0)
        assert steady.attempt.result is None and steady.attempt.live
        await pilot.press("C", "y")  # cancel all, confirmed
        await wait_until(pilot, all_finished(app))
        assert steady.attempt.result is not None
        assert steady.attempt.result.stop_reason is SubagentStopReason.ABORTED


async def test_keys_cancel_the_focused_run_and_toggle_its_stderr() -> None:
    app = SupervisorApp(settings(scripted_preset("slow", forever=1, stderr="diagnostic line")))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("enter")
        pane = panes(app)["slow"]
        await wait_until(pilot, lambda: pane.answer.text != "")
        await pilot.press("escape")  # from the prompt to the panes
        assert pane.has_focus
        assert not any("diagnostic line" in line for line in pane_lines(pane))
        await pilot.press("e")
        await wait_until(pilot, lambda: any("diagnostic line" in line for line in pane_lines(pane)))
        await pilot.press("c")
        await wait_until(pilot, lambda: ended(pane))
        assert pane.shown("state") == "cancelled"


async def test_keys_scroll_the_focused_answer_and_end_follows_it_again() -> None:
    text = "".join(f"line {i}\n\n" for i in range(80))
    app = SupervisorApp(settings(scripted_preset("long", text=text, chunks=8)))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("enter")
        await wait_until(pilot, all_finished(app))
        pane = panes(app)["long"]

        def top_line() -> str:
            # Each answer row ends with the scrollbar's column.
            return next(line[:-1].strip() for line in pane_lines(pane) if line.strip().startswith("line "))

        await pilot.press("escape")  # from the prompt to the pane
        assert pane.content.pinned and top_line() != "line 0"
        await pilot.press("home")
        assert top_line() == "line 0" and not pane.content.pinned
        await pilot.press("down", "down")
        assert top_line() == "line 1"
        await pilot.press("end")
        await wait_until(pilot, lambda: pane.content.pinned)
        assert "line 79" in [line[:-1].strip() for line in pane_lines(pane)]


async def test_a_missing_command_shows_its_error_while_the_others_complete() -> None:
    from acp_tui.settings.schema import AgentPreset

    app = SupervisorApp(
        settings(
            AgentPreset("ghost", "no-such-acp-agent-command"),
            scripted_preset("fine", text="ok"),
        )
    )
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("enter")
        await wait_until(pilot, all_finished(app))
        ghost, fine = panes(app)["ghost"], panes(app)["fine"]
        assert ghost.shown("state") == "error"
        assert "command not found: no-such-acp-agent-command" in ghost.shown("error")
        assert fine.shown("state") == "completed"


async def test_a_crashing_child_shows_exit_code_and_last_stderr_line() -> None:
    app = SupervisorApp(settings(scripted_preset("crash", exit=3, exit_at="initialize")))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("enter")
        await wait_until(pilot, all_finished(app))
        error = panes(app)["crash"].shown("error")
        assert "exited with code 3" in error
        assert "exiting with 3 at initialize" in error


async def test_only_the_selected_agents_receive_the_prompt() -> None:
    app = SupervisorApp(settings(scripted_preset("one"), scripted_preset("two")))
    async with app.run_test(size=SIZE) as pilot:
        boxes = {box.name: box for box in app.query(Toggle)}
        boxes["two"].value = False
        app.main_screen.action_focus_prompt()
        await pilot.press("enter")
        await wait_until(pilot, all_finished(app))
        assert list(panes(app)) == ["one"]


async def test_rounds_accumulate_and_panes_rerun_and_close() -> None:
    app = SupervisorApp(settings(scripted_preset("echo", text="said {prompt}")))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("enter")
        await wait_until(pilot, all_finished(app))
        app.query_one(PromptArea).text = "second"
        app.main_screen.action_focus_prompt()
        await pilot.press("enter")
        await wait_until(pilot, lambda: len(app.query("RunPane")) == 2 and all_finished(app)())
        first, second = list(app.query(RunPane))
        assert second.answer.text == "said second"
        first.focus()
        await pilot.press("r")  # a new attempt beside the old one
        await wait_until(pilot, lambda: len(app.query(RunPane)) == 3 and all_finished(app)())
        old, retry, _ = list(app.query(RunPane))
        assert old is first and retry.attempt.attempt_no == 2 and retry.attempt.round_no == 1
        assert retry.answer.text == "said hello"
        assert retry.has_focus
        await pilot.press("x")
        await wait_until(pilot, lambda: len(app.query(RunPane)) == 2)
        assert len(app.session.attempts) == 3  # closed, not forgotten


async def test_quit_with_live_runs_leaves_no_process() -> None:
    app = SupervisorApp(
        settings(
            scripted_preset("stubborn", forever=1, on_cancel="ignore", ignore_term=1),
            demo_preset("tortoise", "slow"),
        )
    )
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("enter")
        await wait_until(pilot, lambda: all(p.attempt.live and p.attempt.run for p in panes(app).values()))
        await wait_until(pilot, lambda: all(p.answer.text for p in panes(app).values()))
        await pilot.press("ctrl+c")
    assert our_live_processes() == []


async def test_sigterm_disposes_every_run_before_exit() -> None:
    app = SupervisorApp(settings(scripted_preset("slow", forever=1)))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("enter")
        pane = panes(app)["slow"]
        await wait_until(pilot, lambda: pane.answer.text != "")
        os.kill(os.getpid(), signal.SIGTERM)
        await wait_until(pilot, lambda: app.return_code is not None)
    assert our_live_processes() == []
