"""A pane never takes the app down, and the `ask` policy cannot be answered by accident."""

from __future__ import annotations

from textual.widgets import Button, Static

from acp_tui.ui.app import SupervisorApp
from acp_tui.ui.screens.permission_screen import PermissionScreen
from acp_tui.ui.widgets.prompt_area import PromptArea
from acp_tui.ui.widgets.run_pane import RunPane
from tests.ui.helpers import all_finished, panes, scripted_preset, settings, wait_until

SIZE = (150, 40)


async def test_a_failure_in_one_pane_stays_in_that_pane() -> None:
    app = SupervisorApp(
        settings(scripted_preset("victim", text="x", delay=0.2, chunks=3), scripted_preset("fine", text="ok"))
    )
    async with app.run_test(size=SIZE) as pilot:
        original = RunPane.on_mount

        def sabotage(pane: RunPane) -> None:
            original(pane)
            if pane.agent == "victim":

                def boom(fragment: str) -> None:
                    raise RuntimeError("[/] a bug in the pane")

                pane.answer.append = boom  # type: ignore[method-assign]

        RunPane.on_mount = sabotage  # type: ignore[method-assign]
        try:
            await pilot.press("enter")
            await wait_until(pilot, all_finished(app))
        finally:
            RunPane.on_mount = original  # type: ignore[method-assign]
        victim, fine = panes(app)["victim"], panes(app)["fine"]
        assert victim.attempt.state == "error" and victim.shown("state") == "error"  # its badge too
        assert "the pane failed: RuntimeError: [/] a bug in the pane" in victim.shown("error")
        assert fine.attempt.state == "completed"
        assert app.is_running and app.return_code is None


async def test_a_request_never_takes_the_keys_being_typed() -> None:
    app = SupervisorApp(settings(scripted_preset("asker", policy="ask", permission="normal", pause=0.3)))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("enter")
        pane = panes(app)["asker"]
        await pilot.press("slash")  # back to the prompt, and type while the request arrives
        area = app.query_one(PromptArea)
        area.text = ""
        await wait_until(pilot, lambda: bool(app.asks))
        await pilot.press(*"1 more thing")
        assert area.text == "1 more thing"
        assert not isinstance(app.screen, PermissionScreen) and pane.attempt.permissions == []
        assert pane.attempt.state == "needs-you" and "1 request needs you (a)" in app.sub_title


async def test_requests_queue_in_order_with_a_count_and_decide_later_keeps_them() -> None:
    app = SupervisorApp(
        settings(
            scripted_preset("first", policy="ask", permission="allow_always_first"),
            scripted_preset("second", policy="ask", permission="normal", pause=0.5),
        )
    )
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("enter")
        await wait_until(pilot, lambda: len(app.asks) == 2)
        assert [p.agent for p in app.asks] == ["first", "second"]
        assert "2 requests need you (a)" in app.sub_title
        await pilot.press("a")
        await wait_until(pilot, lambda: isinstance(app.screen, PermissionScreen))
        screen = app.screen
        assert isinstance(screen, PermissionScreen) and screen.agent == "first"
        assert "request 1 of 2 waiting" in str(screen.query_one("#queue", Static).render())
        focused = app.focused
        assert isinstance(focused, Button) and focused.name == "r1"  # the first reject, not Allow
        await pilot.press("escape")  # decide later: it stays queued
        await wait_until(pilot, lambda: not isinstance(app.screen, PermissionScreen))
        assert [p.agent for p in app.asks] == ["first", "second"]
        await pilot.press("a")
        await wait_until(pilot, lambda: isinstance(app.screen, PermissionScreen))
        await pilot.press("enter")  # the focused reject
        await wait_until(pilot, lambda: [p.agent for p in app.asks] == ["second"])
        assert "1 request needs you (a)" in app.sub_title
        screen = app.screen  # the next one opened in its place
        assert isinstance(screen, PermissionScreen) and screen.agent == "second"
        await pilot.press("a")  # no second dialog over it
        assert app.screen is screen
        await pilot.press("1")  # allow, chosen by number
        await wait_until(pilot, all_finished(app))
        first, second = panes(app)["first"], panes(app)["second"]
        assert [(r.decision, r.rule) for r in first.attempt.permissions] == [("reject_once", "ask")]
        assert [(r.decision, r.rule) for r in second.attempt.permissions] == [("allow_once", "ask")]
        assert app.asks == []


async def test_every_option_is_reachable_at_80x24() -> None:
    app = SupervisorApp(settings(scripted_preset("asker", policy="ask", permission="allow_always_first")))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("enter")
        await wait_until(pilot, lambda: bool(app.asks))
        await pilot.press("a")
        await wait_until(pilot, lambda: isinstance(app.screen, PermissionScreen))
        for _ in range(6):
            await pilot.press("tab")
            focused = app.focused
            assert focused is not None
            await pilot.pause()
            assert app.screen.query_one("#dialog").region.contains_region(focused.region)


async def test_each_request_belongs_to_its_own_run_of_the_same_agent() -> None:
    app = SupervisorApp(settings(scripted_preset("asker", policy="ask", permission="normal")))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("enter")
        await wait_until(pilot, lambda: len(app.asks) == 1)
        await pilot.press("slash", "enter", "y")  # a second round of the same agent, asked first
        await wait_until(pilot, lambda: len(app.asks) == 2)
        first, second = list(app.query(RunPane))
        assert [p.attempt for p in app.asks] == [first.attempt, second.attempt]
        assert first.attempt.state == second.attempt.state == "needs-you"
        first.action_cancel()  # its run ends: its request leaves the queue, the other stays
        await wait_until(pilot, lambda: len(app.asks) == 1)
        assert app.asks[0].attempt is second.attempt and second.attempt.state == "needs-you"
        await pilot.press("C", "y")
        await wait_until(pilot, all_finished(app))
        assert app.asks == []
