"""F2, the agents (policy, mode, model, the rules), ctrl+r, the never-asked note, the terminal login."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from textual.widgets import Static

from acp_tui.core.model import SubagentStopReason
from acp_tui.settings import paths
from acp_tui.settings.load import load_settings
from acp_tui.ui.app import SupervisorApp
from acp_tui.ui.screens.login_screen import LoginConfirmScreen
from acp_tui.ui.screens.permissions_panel_screen import PermissionsPanelScreen
from acp_tui.ui.screens.policy_screen import AgentsScreen
from acp_tui.ui.summary import NEVER_ASKED
from acp_tui.ui.widgets.choice import Choice
from acp_tui.ui.widgets.prompt_bar import PromptBar
from acp_tui.ui.widgets.run_pane import RunPane
from tests.helpers import SCRIPTED_AGENT
from tests.ui.helpers import all_finished, demo_preset, panes, scripted_preset, settings, wait_until

SIZE = (150, 40)


def option_select(screen: AgentsScreen, row: int, option_id: str) -> Choice:
    j = next(j for j, info in enumerate(screen.rows[row].offered) if info.id == option_id)
    return next(s for s in screen.query(Choice) if s.name == f"option-{row}-{j}")


def round_panes(app: SupervisorApp, round_no: int) -> list[RunPane]:
    return [pane for pane in app.query(RunPane) if pane.attempt.round_no == round_no]


async def test_f2_offers_the_modes_of_the_last_session_and_the_next_run_uses_the_one_chosen() -> None:
    app = SupervisorApp(settings(demo_preset("pong", "pong")))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("enter")
        await wait_until(pilot, all_finished(app))
        [first] = round_panes(app, 1)
        assert (
            first.attempt.result is not None and len(first.attempt.result.permissions) == 1
        )  # mode ask: it asked
        assert "mode ask" in str(first.border_subtitle) and "model demo-fast" in str(first.border_subtitle)
        await pilot.press("f2")
        await wait_until(pilot, lambda: isinstance(app.screen, AgentsScreen))
        screen = app.screen
        assert isinstance(screen, AgentsScreen)
        mode = option_select(screen, 0, "mode")
        assert mode.value == "ask"
        assert mode.values == ["ask", "auto", "read-only"]
        mode.value = "read-only"
        await pilot.click("#apply")
        await wait_until(pilot, lambda: not isinstance(app.screen, AgentsScreen))
        assert app.next_runs.option_choices == {"pong": {"mode": "read-only"}}
        app.main_screen.action_focus_prompt()
        await pilot.press("enter")
        await wait_until(pilot, lambda: len(app.query(RunPane)) == 2 and all_finished(app)())
        [second] = round_panes(app, 2)
        assert second.attempt.result is not None
        assert second.attempt.result.stop_reason is SubagentStopReason.COMPLETED
        assert second.attempt.result.options["mode"] == "read-only"
        assert second.attempt.result.permissions == []  # read-only never asks
        assert "mode read-only" in str(second.border_subtitle)


async def test_probe_fills_the_options_before_any_run() -> None:
    app = SupervisorApp(settings(demo_preset("pong", "pong")))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f2")
        await wait_until(pilot, lambda: isinstance(app.screen, AgentsScreen))
        screen = app.screen
        assert isinstance(screen, AgentsScreen)
        assert not screen.rows[0].offered
        await pilot.press("p")
        await wait_until(pilot, lambda: bool(screen.rows[0].offered))
        await wait_until(pilot, lambda: option_select(screen, 0, "model").value == "demo-fast")
        assert {info.id for info in app.next_runs.offered["pong"]} == {"mode", "model"}


def write_config(path: Path, rule_action: str, *names: str) -> None:
    agents = "".join(
        f'[[agent]]\nname = "{name}"\ncommand = {json.dumps(sys.executable)}\n'
        f'args = [{json.dumps(SCRIPTED_AGENT)}, "permission=normal"]\npolicy = "mine"\n\n'
        for name in names
    )
    policy = (
        '[policy.mine]\ndefault = "reject"\n'
        f'[[policy.mine.rule]]\nname = "edits"\naction = "{rule_action}"\nkind = "edit"\n'
    )
    path.write_text(agents + policy, encoding="utf-8")


async def test_ctrl_r_reloads_a_good_file_for_the_next_runs_and_keeps_the_old_on_a_bad_one(
    tmp_path: Path,
) -> None:
    config = tmp_path / "agents.toml"
    write_config(config, "reject", "one")
    app = SupervisorApp(load_settings(config))
    notes: list[str] = []
    notify = app.notify
    app.notify = lambda message, **kw: (notes.append(str(message)), notify(message, **kw))[-1]  # type: ignore[method-assign]
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f2")
        await wait_until(pilot, lambda: isinstance(app.screen, AgentsScreen))
        assert "1. edits: reject kind edit" in str(app.screen.query_one("#rules", Static).render())
        app.screen.query_one(".policy", Choice).value = "allow"  # another policy picked: its rules
        await wait_until(
            pilot, lambda: "Policy allow" in str(app.screen.query_one("#rules", Static).render())
        )
        await pilot.press("escape")  # nothing applied
        assert app.next_runs.policies == {"one": "mine"}
        app.main_screen.action_focus_prompt()
        await pilot.press("enter")
        await wait_until(pilot, all_finished(app))
        [first] = round_panes(app, 1)
        assert first.attempt.result is not None
        assert [(r.decision, r.rule) for r in first.attempt.result.permissions] == [("reject_once", "edits")]

        config.write_text("[[agent]]\nname = 3\n", encoding="utf-8")  # a bad file
        old = app.settings
        await pilot.press("ctrl+r")
        await wait_until(pilot, lambda: any("Config not reloaded" in note for note in notes))
        assert app.settings is old
        [line] = [note for note in notes if "Config not reloaded" in note]
        assert "\n" not in line and "agents.toml" in line

        write_config(config, "allow", "one", "two")  # a good one: the rule flips, an agent more
        await pilot.press("ctrl+r")
        await wait_until(pilot, lambda: app.settings.names == ("one", "two"))
        await wait_until(pilot, lambda: any("Config reloaded" in note for note in notes))
        await pilot.press("f2")
        await wait_until(pilot, lambda: isinstance(app.screen, AgentsScreen))
        assert "1. edits: allow kind edit" in str(app.screen.query_one("#rules", Static).render())
        assert [row.name for row in app.screen.rows] == ["one", "two"]
        await pilot.press("escape")
        app.main_screen.action_focus_prompt()
        await pilot.press("enter")
        await wait_until(pilot, lambda: len(round_panes(app, 2)) == 2 and all_finished(app)())
        for pane in round_panes(app, 2):
            assert pane.attempt.result is not None
            assert [(r.decision, r.rule) for r in pane.attempt.result.permissions] == [
                ("allow_once", "edits")
            ]

        write_config(config, "reject", "one", "two")  # reloaded from F2: F2 shows the new rules
        await pilot.press("f2")
        await wait_until(pilot, lambda: isinstance(app.screen, AgentsScreen))
        await pilot.press("ctrl+r")

        def rules_shown() -> str:
            screen = app.screen
            return (
                str(screen.query_one("#rules", Static).render()) if isinstance(screen, AgentsScreen) else ""
            )

        await wait_until(pilot, lambda: "1. edits: reject kind edit" in rules_shown())


async def test_a_run_that_edited_without_asking_says_its_policy_had_nothing_to_decide() -> None:
    app = SupervisorApp(
        settings(
            scripted_preset("quiet", tools="read,edit,execute"),
            scripted_preset("reader", tools="read"),
            scripted_preset("asker", tools="edit", permission="normal"),
        )
    )
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("enter")
        await wait_until(pilot, all_finished(app))
        shown = {name: pane.shown("stats") for name, pane in panes(app).items()}
        assert f"{NEVER_ASKED} (edit 1, execute 1)" in shown["quiet"]
        assert NEVER_ASKED not in shown["reader"]  # reads only: nothing a policy decides
        assert NEVER_ASKED not in shown["asker"]  # it asked


async def test_authentication_required_offers_the_terminal_login_and_runs_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("ACP_TUI_DEMO_KEY", raising=False)
    app = SupervisorApp(settings(demo_preset("locked", "locked")))
    logins: list[list[str]] = []

    async def headless_login(argv: list[str], env: dict[str, str], cwd: str | None) -> int:
        # The real login process, its Enter typed for it (App.suspend needs a real terminal).
        logins.append(argv)
        login = await asyncio.create_subprocess_exec(
            *argv, env=env, cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL
        )
        await login.communicate(b"\n")
        return await login.wait()

    app.login.runner = headless_login
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("enter")
        await wait_until(pilot, all_finished(app))
        [pane] = round_panes(app, 1)
        assert pane.attempt.state == "error"
        error = pane.shown("error")
        assert error.startswith("L: log in in the terminal, then run again: ")
        assert "--login\nauthentication required" in error
        assert pane.check_action("login", ()) is True
        pane.focus()
        await pilot.press("L")
        await wait_until(pilot, lambda: isinstance(app.screen, LoginConfirmScreen))
        await pilot.press("y")
        await wait_until(pilot, lambda: len(app.query(RunPane)) == 2 and all_finished(app)())
        assert logins == [[sys.executable, "-m", "acp_tui.demo.agent", "--persona", "locked", "--login"]]
        assert (paths.cache_dir() / "demo-login").exists()  # the test's own folders (tests/conftest.py)
        again = [p for p in round_panes(app, 1) if p.attempt.attempt_no == 2]
        assert again and again[0].attempt.result is not None
        assert again[0].attempt.result.stop_reason is SubagentStopReason.COMPLETED


async def test_a_failed_login_does_not_run_again(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ACP_TUI_DEMO_KEY", raising=False)
    app = SupervisorApp(settings(demo_preset("locked", "locked")))
    logins: list[list[str]] = []

    async def failing_login(argv: list[str], env: dict[str, str], cwd: str | None) -> int:
        logins.append(argv)
        return 1

    app.login.runner = failing_login
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("enter")
        await wait_until(pilot, all_finished(app))
        round_panes(app, 1)[0].focus()
        await pilot.press("L")
        await wait_until(pilot, lambda: isinstance(app.screen, LoginConfirmScreen))
        await pilot.press("y")
        await wait_until(pilot, lambda: len(logins) == 1 and not isinstance(app.screen, LoginConfirmScreen))
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert len(app.query(RunPane)) == 1


async def test_l_is_not_offered_where_no_login_is_advertised() -> None:
    app = SupervisorApp(settings(scripted_preset("plain", fail="session/new:-32000:Authentication required")))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("enter")
        await wait_until(pilot, all_finished(app))
        [pane] = round_panes(app, 1)
        assert pane.check_action("login", ()) is False
        assert not pane.shown("error").startswith("L:")


async def test_shift_p_opens_the_permissions_panel() -> None:
    app = SupervisorApp(settings(scripted_preset("agent", permission="normal")))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("enter")
        await wait_until(pilot, all_finished(app))
        await pilot.press("P")
        await wait_until(pilot, lambda: isinstance(app.screen, PermissionsPanelScreen))
        screen = app.screen
        assert isinstance(screen, PermissionsPanelScreen)
        [row] = screen.rows
        assert (row.agent, row.round, row.policy, row.record.rule) == ("agent", "1/1", "reject", "reject")
        assert row.waited_s is not None
        await pilot.press("escape")
        app.main_screen.action_focus_prompt()
        await pilot.press("P")  # typed in the prompt, not a command
        await pilot.pause()
        assert not isinstance(app.screen, PermissionsPanelScreen)
        assert "P" in app.query_one(PromptBar).value


async def test_a_description_naming_another_program_is_refused_in_one_line() -> None:
    preset = scripted_preset(
        "open", auth_methods="opencode", fail="session/new:-32000:Authentication required"
    )
    app = SupervisorApp(settings(preset))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("enter")
        await wait_until(pilot, all_finished(app))
        [pane] = round_panes(app, 1)
        hint = pane.shown("error").splitlines()[0]
        own = os.path.basename(sys.executable)
        assert hint == f'login refused: the agent names "opencode" to run, not its own program "{own}"'
        assert pane.check_action("login", ()) is False


async def test_f2_with_many_agents_makes_the_rows_the_focus_or_the_scroll_comes_to(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Thirty agents are some six hundred widgets, laid out at each opening: the screen has the rows
    that fit, and makes the next ones, in order, as tab or the scroll nears the last made. Reopened,
    it finds its rows' controls without querying the screen."""
    from textual.dom import DOMNode

    from acp_tui.ui.screens.policy_screen import FIRST_ROWS

    names = [f"agent{i:02d}" for i in range(30)]
    app = SupervisorApp(settings(*(scripted_preset(name) for name in names)))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f2")
        screen = app.screen
        assert isinstance(screen, AgentsScreen)
        await pilot.pause()
        assert len(screen.query(".agent")) == FIRST_ROWS
        for _ in range(10 * len(names)):  # tab walks every row's choices, the last row's too
            if "agent-29" in {node.id for node in (app.focused.ancestors if app.focused else [])}:
                break
            await pilot.press("tab")
        else:
            raise AssertionError("tab never reached the last agent")
        shown = [str(row.query_one(".agent-name", Static).visual) for row in screen.query(".agent")]
        assert shown == names
        await pilot.press("escape")
        queried: list[str] = []
        query_one = DOMNode.query_one

        def counted(node: DOMNode, *args: object, **kwargs: object) -> object:
            queried.append(str(args[0]))
            return query_one(node, *args, **kwargs)  # type: ignore[call-overload]

        monkeypatch.setattr(DOMNode, "query_one", counted)
        await pilot.press("f2")
        await wait_until(pilot, lambda: app.screen is screen)
        assert [q for q in queried if "agent" in q or "sandbox" in q] == []


async def test_tab_held_down_in_f2_goes_into_the_rows_made_as_it_comes_not_past_them() -> None:
    from textual import events

    app = SupervisorApp(settings(*(scripted_preset(f"agent{i:02d}") for i in range(30))))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("f2")
        screen = app.screen
        assert isinstance(screen, AgentsScreen)
        await pilot.pause()
        for _ in range(40):  # a key repeating: all typed before the first is handled
            app.post_message(events.Key("tab", None))
        await pilot.pause()  # read: they wait their turn
        await wait_until(pilot, lambda: not app.key_order.busy)
        focused = app.focused
        assert focused is not None and focused.name == "policy-20"  # two choices a row, 40 tabs on


async def test_f2_scrolled_to_its_end_makes_every_row_below() -> None:
    from textual.containers import VerticalScroll

    app = SupervisorApp(settings(*(scripted_preset(f"agent{i:02d}") for i in range(30))))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f2")
        screen = app.screen
        assert isinstance(screen, AgentsScreen)
        await pilot.pause()
        # The rows not made are a blank of their height, saying so: the dialog scrolls to them.
        assert "18 more agents: tab or scroll to them" in str(screen.query_one("#rest", Static).visual)
        dialog = screen.query_one("#dialog", VerticalScroll)
        assert dialog.max_scroll_y >= 18 * 3 - 1
        dialog.scroll_end(animate=False)
        await wait_until(pilot, lambda: len(screen.query(".agent")) == 30 and not screen.query("#rest"))
        shown = [str(row.query_one(".agent-name", Static).visual) for row in screen.query(".agent")]
        assert shown == [f"agent{i:02d}" for i in range(30)]


async def test_applying_keeps_the_rows_not_made_as_they_were() -> None:
    from acp_tui.ui.screens.policy_screen import FIRST_ROWS

    names = [f"agent{i:02d}" for i in range(20)]
    app = SupervisorApp(settings(*(scripted_preset(name, policy="allow") for name in names)))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f2")
        screen = app.screen
        assert isinstance(screen, AgentsScreen)
        assert len(screen.query(".agent")) == FIRST_ROWS
        screen.query_one("#agent-0 .policy", Choice).value = "reject"
        await pilot.press("enter")
        await wait_until(pilot, lambda: not isinstance(app.screen, AgentsScreen))
        assert app.next_runs.policies == {"agent00": "reject", **{name: "allow" for name in names[1:]}}
