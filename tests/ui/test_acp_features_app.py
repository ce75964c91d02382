"""What ACP 1.21 offers, in the app (Pilot against real agents over stdio): an agent's question
queued and answered in its dialog, the terminal called when something waits for the person or a
run ends while they are elsewhere."""

from __future__ import annotations

import json
import sys
from typing import Any

from textual import events
from textual.widgets import Input, Select

from acp_tui.core.elicitation import DECLINE
from acp_tui.settings.schema import AgentPreset
from acp_tui.ui.app import SupervisorApp
from acp_tui.ui.attention import Attention
from acp_tui.ui.screens.permission_screen import PermissionScreen
from acp_tui.ui.screens.question_screen import QuestionScreen
from tests.helpers import FEATURES_AGENT
from tests.ui.helpers import all_finished, pane_lines, panes, scripted_preset, settings, wait_until

SIZE = (150, 40)


def feat(name: str, *options: str) -> AgentPreset:
    return AgentPreset(name, sys.executable, (FEATURES_AGENT, "commands=none", *options))


def listening(app: SupervisorApp) -> list[str]:
    """What the app writes to call the person (BEL, OSC 9), kept instead of written."""
    written: list[str] = []
    app.calls.attention = Attention("all", written.append, env={})
    return written


async def test_a_question_waits_for_the_person_who_answers_it_in_its_dialog() -> None:
    app = SupervisorApp(settings(feat("feat", "elicit=form")))
    written = listening(app)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await pilot.press("enter")
        await wait_until(pilot, lambda: bool(app.asks))
        assert written == ["\x07\x1b]9;acp-tui: feat asks you: Where should this go? (a to answer)\x07"]
        assert panes(app)["feat"].attempt.state == "needs-you"
        await pilot.press("a")
        await wait_until(pilot, lambda: isinstance(app.screen, QuestionScreen))
        assert isinstance(app.focused, Input) and app.focused.id == "field-0"
        app.screen.query_one("#field-5", Select).value = "eu"
        await pilot.press(*"web", "enter")
        await wait_until(pilot, all_finished(app))
        result = panes(app)["feat"].attempt.result
        assert result is not None
        [record] = result.elicitations
        assert (record.action, record.by) == ("accept", "person")
        content = {"name": "web", "replicas": 2, "confirm": False, "region": "eu", "tier": "free"}
        assert record.content == content
        said = json.loads(result.output.split("[elicitation form: ", 1)[1].split("]", 1)[0])
        assert said == {"action": "accept", "content": content}


async def test_a_run_ending_while_the_person_is_elsewhere_calls_them() -> None:
    asker = scripted_preset("asker", policy="ask", permission="normal")
    app = SupervisorApp(settings(asker, feat("quick")))
    written = listening(app)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("enter")
        await wait_until(pilot, lambda: bool(app.asks) and panes(app)["quick"].attempt.result is not None)
        assert not any("quick" in w for w in written)  # it ended in sight: nobody called
        panes(app)["quick"].focus()
        await pilot.press("z")  # another pane fills the screen
        await pilot.press("a")
        await wait_until(pilot, lambda: isinstance(app.screen, PermissionScreen))
        await pilot.press("1")  # allowed: the asker's run ends while `quick` is zoomed
        await wait_until(pilot, all_finished(app))
        await pilot.pause()
        ended = [w for w in written if "ended" in w]
        assert ended == ["\x07\x1b]9;acp-tui: asker r1·a1 ended: completed\x07"]


async def test_an_unfocused_terminal_is_elsewhere() -> None:
    app = SupervisorApp(settings(feat("quick", "elicit=url")))
    written = listening(app)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("enter")
        await wait_until(pilot, lambda: bool(app.asks))
        app.post_message(events.AppBlur())  # the terminal says it lost the focus
        await wait_until(pilot, lambda: not app.app_focus)
        app.driver.asks.answer(app.asks[0], DECLINE)  # answered elsewhere: no key reaches the app
        await wait_until(pilot, all_finished(app))
        await pilot.pause()
    assert written[-1] == "\x07\x1b]9;acp-tui: quick r1·a1 ended: completed\x07"


async def test_the_header_says_what_the_session_spent_per_currency() -> None:
    app = SupervisorApp(
        settings(
            feat("a", "costs=0.01,0.02"), feat("b", "costs=0.5"), feat("c", "costs=1.25", "currency=EUR")
        )
    )
    async with app.run_test(size=SIZE) as pilot:
        assert "spent" not in app.sub_title
        await pilot.press("enter")
        await wait_until(pilot, all_finished(app))
        await pilot.pause()
        assert app.sub_title.endswith(" · spent 1.25 EUR, 0.52 USD")


async def test_a_pane_past_its_budget_is_cancelled_naming_it() -> None:
    spender = AgentPreset(
        "spender",
        sys.executable,
        (FEATURES_AGENT, "commands=none", "costs=0.02,0.04,0.06", "hold=1"),
        budget_usd=0.05,
    )
    app = SupervisorApp(settings(spender))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("enter")
        await wait_until(pilot, all_finished(app))
        result = panes(app)["spender"].attempt.result
        assert result is not None and result.stop_reason == "aborted"
        assert result.error == "over budget: spent 0.0600 USD, more than budget_usd = 0.05"


async def test_slash_shows_the_checked_agents_commands_and_completes_one() -> None:
    from acp_tui.ui.widgets.command_menu import CommandMenu
    from acp_tui.ui.widgets.prompt_bar import PromptBar

    app = SupervisorApp(
        settings(
            AgentPreset("a", sys.executable, (FEATURES_AGENT,)),
            AgentPreset("b", sys.executable, (FEATURES_AGENT, "commands=test:Run them all|lint:Lint")),
            prompt="",
        )
    )
    async with app.run_test(size=SIZE) as pilot:
        bar = app.main_screen.query_one(PromptBar)
        await pilot.press("/")
        menu = bar.query_one(CommandMenu)  # made at the first `/`
        assert not menu.shown  # no agent has said what it offers yet
        await pilot.press("backspace", *"hello", "enter")
        await wait_until(pilot, all_finished(app))
        await wait_until(pilot, lambda: set(app.next_runs.commands) == {"a", "b"})
        app.main_screen.action_focus_prompt()
        await pilot.press("ctrl+u", "/")
        assert [(o.command.name, o.agents) for o in menu.offers] == [
            ("lint", ("b",)),
            ("test", ("a", "b")),
            ("web", ("a",)),
        ]
        await pilot.press("t")
        assert [o.command.name for o in menu.offers] == ["test"]
        await pilot.press("tab")
        assert bar.value == "/test " and not menu.shown
        await pilot.press(*"now", "enter")
        await wait_until(pilot, lambda: len(app.session.attempts) == 4 and all_finished(app)())
        assert {a.result.output for a in app.session.attempts[2:] if a.result} == {"Echo: /test now"}


async def test_a_boolean_option_is_a_switch_in_f2_and_the_next_run_gets_it() -> None:
    from acp_tui.ui.screens.policy_screen import AgentsScreen
    from acp_tui.ui.widgets.toggle import Toggle

    app = SupervisorApp(settings(feat("feat", "bool_options=1")))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("enter")
        await wait_until(pilot, all_finished(app))
        assert panes(app)["feat"].attempt.result.output.endswith("fast=False]")  # type: ignore[union-attr]
        await pilot.press("f2")
        await wait_until(pilot, lambda: isinstance(app.screen, AgentsScreen))
        switch = app.screen.query_one("#options-0 Toggle", Toggle)
        assert switch.name == "option-0-1" and switch.value is False
        switch.focus()
        await pilot.press("space", "enter")  # on, and applied
        await wait_until(pilot, lambda: not isinstance(app.screen, AgentsScreen))
        assert app.next_runs.option_choices["feat"] == {"fast": "true"}
        app.main_screen.action_focus_prompt()
        await pilot.press("enter")
        await wait_until(pilot, lambda: len(app.session.attempts) == 2 and all_finished(app)())
        assert app.session.attempts[1].result.output.endswith("fast=True]")  # type: ignore[union-attr]


async def test_the_pane_shows_the_context_gauge_from_usage_update_s_size() -> None:
    app = SupervisorApp(settings(feat("feat", "costs=0.01,0.02,0.03", "size=4000")))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("enter")
        await wait_until(pilot, all_finished(app))
        await pilot.pause()
        pane = panes(app)["feat"]
        assert pane.shown("gauge") == "ctx ▕████▌ ▏ 75%"  # 3000 of 4000 tokens
        assert any("ctx ▕████▌ ▏ 75%" in line for line in pane_lines(pane))  # in its header row


async def test_f2_lists_the_agent_s_own_sessions_and_the_chosen_one_is_continued(tmp_path: Any) -> None:
    from textual.widgets import OptionList

    from acp_tui.ui.screens.agent_sessions_screen import AgentSessionsScreen
    from acp_tui.ui.screens.policy_screen import AgentsScreen
    from tests.test_acp_features_cli import SESSIONS_AGENT

    store = tmp_path / "store"
    kept = AgentPreset("kept", sys.executable, (SESSIONS_AGENT, f"store={store}", "list=1"))
    app = SupervisorApp(settings(kept, prompt="remember blue"))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("enter")  # a session of the agent's, which it keeps
        await wait_until(pilot, all_finished(app))
        await pilot.press("f2")
        await wait_until(pilot, lambda: isinstance(app.screen, AgentsScreen))
        await pilot.press("s")
        await wait_until(
            pilot, lambda: isinstance(app.screen, AgentSessionsScreen) and bool(app.screen.sessions)
        )
        [session] = app.screen.sessions  # type: ignore[attr-defined]
        assert session.title == "remember blue"
        assert app.screen.query_one(OptionList).option_count == 1
        await pilot.press("enter")  # continue it: F2 applied and closed, the prompt follows it up
        await wait_until(pilot, lambda: app.screen is app.main_screen)
        await pilot.press(*"which colour?", "enter")
        await wait_until(pilot, lambda: len(app.session.attempts) == 2 and all_finished(app)())
        turn = app.session.attempts[1]
        assert (
            turn.result is not None and turn.result.output == "turn 2: which colour? (after: remember blue)"
        )
        assert turn.session_id == session.session_id


async def test_f2_says_in_one_line_that_an_agent_keeps_no_list(tmp_path: Any) -> None:
    from textual.widgets import Static

    from acp_tui.ui.screens.agent_sessions_screen import AgentSessionsScreen
    from acp_tui.ui.screens.policy_screen import AgentsScreen

    app = SupervisorApp(settings(feat("plain")))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f2")
        await wait_until(pilot, lambda: isinstance(app.screen, AgentsScreen))
        await pilot.press("s")
        await wait_until(pilot, lambda: isinstance(app.screen, AgentSessionsScreen))

        def status() -> str:
            return str(app.screen.query_one("#status", Static).render())

        await wait_until(pilot, lambda: "session/list)" in status() and "asking" not in status())
        assert status() == "plain does not list its sessions (it offers no session/list)"
        await pilot.press("escape")
        await wait_until(pilot, lambda: isinstance(app.screen, AgentsScreen))
