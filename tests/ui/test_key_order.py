"""Keys typed in one burst act where the focus is once the keys before them have done their work,
in the order typed (`ui.key_order`). A burst is posted to the app all at once, as a terminal delivers
fast typing: nothing waits between two keys (Pilot's `press` waits for the app after each)."""

from __future__ import annotations

import pytest
from textual import events

from acp_tui.ui.app import SupervisorApp
from acp_tui.ui.screens.permission_screen import PermissionScreen
from acp_tui.ui.widgets.answer_document import AnswerDocument
from acp_tui.ui.widgets.key_footer import KeyFooter
from acp_tui.ui.widgets.prompt_area import PromptArea
from acp_tui.ui.widgets.run_pane import RunPane
from tests.ui.helpers import (
    all_finished,
    demo_preset,
    ended,
    pane_lines,
    scripted_preset,
    settings,
    wait_until,
)

SIZE = (150, 40)
NAMED = {"enter": "\r", "space": " ", "slash": "/"}


def burst(app: SupervisorApp, *keys: str) -> None:
    """Keys as the terminal delivers them when typed fast: all queued before the app handles one.
    A key of several characters that is no key name is typed character by character."""
    for key in keys:
        if len(key) > 1 and key not in NAMED and not key.startswith("ctrl+"):
            burst(app, *(NAMED_BY_CHARACTER.get(c, c) for c in key))
            continue
        character = NAMED.get(key, key if len(key) == 1 else None)
        app.post_message(events.Key(key, character))


NAMED_BY_CHARACTER = {" ": "space"}


def pane_list(app: SupervisorApp) -> list[RunPane]:
    return list(app.query(RunPane))


def two_forever() -> SupervisorApp:
    return SupervisorApp(
        settings(
            scripted_preset("one", forever=1), scripted_preset("two", forever=1), prompt="Explain the task"
        )
    )


async def test_c_typed_right_after_enter_cancels_the_new_rounds_first_pane() -> None:
    app = two_forever()
    async with app.run_test(size=SIZE) as pilot:
        burst(app, "enter", "c")
        await wait_until(
            pilot, lambda: len(pane_list(app)) == 2 and pane_list(app)[0].attempt.result is not None
        )
        first, second = pane_list(app)
        assert first.attempt.state == "cancelled" and second.attempt.live
        assert app.query_one(PromptArea).text == "Explain the task"  # nothing typed into it
        burst(app, "C", "y")
        await wait_until(pilot, all_finished(app))


async def test_x_typed_right_after_enter_closes_the_new_rounds_first_pane_and_the_next_x_the_next() -> None:
    app = SupervisorApp(settings(*(scripted_preset(name) for name in ("one", "two", "three"))))
    async with app.run_test(size=SIZE) as pilot:
        burst(app, "enter", "x", "x")
        await wait_until(
            pilot,
            lambda: [pane.agent for pane in pane_list(app)] == ["three"] and app.focused in pane_list(app),
        )
        assert app.query_one(PromptArea).text == "hello"  # no `x` typed into it


async def test_a_burst_from_a_zoomed_pane_leaves_the_zoom_and_types_into_the_prompt() -> None:
    app = SupervisorApp(settings(scripted_preset("one"), scripted_preset("two"), prompt="Explain the task"))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("enter")
        await wait_until(pilot, all_finished(app))
        await pilot.press("z")
        first = pane_list(app)[0]
        assert app.main_screen.zoomed is first
        await pilot.pause()
        footer = [getattr(key, "description", "") for key in app.screen.query_one(KeyFooter).children]
        assert footer[0] == "Unzoom"  # the footer says how to leave the zoom, first (80 columns cut it)
        burst(app, "z", "i", "ctrl+u", "write a haiku about cancel", "enter")
        # The new round's panes are mounted, then its first one takes the focus (a refresh later).
        await wait_until(pilot, lambda: len(pane_list(app)) == 4 and app.focused is pane_list(app)[2])
        assert app.main_screen.zoomed is None
        assert [pane.attempt.prompt for pane in pane_list(app)[2:]] == ["write a haiku about cancel"] * 2
        assert all(pane.attempt.attempt_no == 1 for pane in pane_list(app))  # no `r` ran as a command


async def test_i_inside_the_zoom_ends_it_and_the_zoom_follows_the_focus_between_panes() -> None:
    app = two_forever()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("enter")
        first, second = pane_list(app)
        await pilot.press("z")
        zoom = app.main_screen.zoom
        assert app.main_screen.zoomed is first and zoom.content is first.content and zoom.display
        await pilot.press("tab")
        assert app.main_screen.zoomed is second and zoom.content is second.content
        assert first.content is not None and first.content.viewer is first  # drawn by itself again
        await pilot.press("i")
        assert app.main_screen.zoomed is None and app.query_one(PromptArea).has_focus and not zoom.display
        await pilot.press("escape", "z")
        assert app.main_screen.zoomed is second
        await pilot.press("escape")  # escape leaves the zoom too
        assert app.main_screen.zoomed is None and not zoom.display and second.has_focus
        burst(app, "C", "y")
        await wait_until(pilot, all_finished(app))


async def test_i_returns_to_the_prompt_with_the_cursor_at_the_end() -> None:
    app = SupervisorApp(settings(scripted_preset("echo"), prompt="the task"))
    async with app.run_test(size=SIZE) as pilot:
        area = app.query_one(PromptArea)
        assert area.cursor_location == area.document.end  # from the start, too
        await pilot.press("enter")
        await wait_until(pilot, all_finished(app))
        area.move_cursor((0, 0))
        burst(app, "i", " again")
        await wait_until(pilot, lambda: area.text == "the task again")
        burst(app, "escape", "i", "ctrl+u", "new")
        await wait_until(pilot, lambda: area.text == "new")


async def test_answering_a_permission_opens_the_next_and_its_count_is_the_headers() -> None:
    app = SupervisorApp(
        settings(
            *(scripted_preset(name, policy="ask", permission="normal") for name in ("p", "q", "r")),
        )
    )
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("enter", "tab")  # the second pane: a `1` falling through would focus the first
        await wait_until(pilot, lambda: len(app.asks) == 3)
        assert "3 requests need you (a)" in app.sub_title
        await pilot.press("a")
        screen = app.screen
        assert isinstance(screen, PermissionScreen) and "request 1 of 3 waiting" in screen.queue_line
        burst(app, "1")  # allow the first: the next opens at once
        await wait_until(pilot, lambda: len(app.asks) == 2)
        screen = app.screen
        assert isinstance(screen, PermissionScreen) and screen.pending is app.asks[0]
        assert "request 1 of 2 waiting" in screen.queue_line and "2 requests need you" in app.sub_title
        burst(app, "1", "1")  # both the others, the second `1` in the dialog that the first opened
        await wait_until(pilot, all_finished(app))
        assert not isinstance(app.screen, PermissionScreen)
        assert [pane.attempt.permissions[0].option_id for pane in pane_list(app)] == ["a1"] * 3
        assert app.focused is pane_list(app)[1]  # no `1` fell through to the panes


async def test_an_answer_fits_its_pane_again_after_a_zoom_while_another_run_streams() -> None:
    """With a run streaming beside it, the answer drawn at the zoom's width is drawn at its pane's
    once the zoom ends (its lines once stayed cut at the zoomed width)."""
    app = SupervisorApp(settings(demo_preset("long", "essay"), demo_preset("busy", "slow")))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("enter")
        long = pane_list(app)[0]
        await wait_until(pilot, lambda: ended(long))
        await pilot.press("z")
        await wait_until(pilot, lambda: long.answer.width > 70)
        await pilot.press("z")
        await wait_until(pilot, lambda: long.answer.width < 40)
        await pilot.pause()
        shown = [line.rstrip(" ▁▂▃▄▅▆▇█") for line in pane_lines(long)]
        assert "That is the whole tour. Ask" in shown and "chunk." in shown  # not `... Ask aga`, cut
        assert long.answer.width == long.content_region.width - 1  # the scrollbar's column
        burst(app, "C", "y")
        await wait_until(pilot, all_finished(app))


async def test_keys_after_send_anyway_act_on_the_round_it_sent() -> None:
    app = two_forever()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("enter")
        await wait_until(pilot, lambda: all(pane.attempt.run is not None for pane in pane_list(app)))
        burst(app, "slash", "enter", "y", "c")  # the agents are busy: asked first, then sent
        await wait_until(
            pilot, lambda: len(pane_list(app)) == 4 and pane_list(app)[2].attempt.result is not None
        )
        assert [pane.attempt.live for pane in pane_list(app)] == [True, True, False, True]
        assert app.query_one(PromptArea).text == "Explain the task"
        burst(app, "C", "y")
        await wait_until(pilot, all_finished(app))


async def test_the_answers_step_only_once_the_keys_typed_are_handled(monkeypatch: pytest.MonkeyPatch) -> None:
    """A key is routed through six message queues; the answers' steps that came due meanwhile wait
    until it is handled and painted, instead of running between its hops."""
    app = two_forever()
    held: list[bool] = []  # at each step of an answer: whether a key was being handled
    step = AnswerDocument.step

    def counted(document: AnswerDocument) -> None:
        held.append(app.key_order.busy)
        step(document)

    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("enter")
        await wait_until(pilot, lambda: all(pane.answer.text for pane in pane_list(app)))
        monkeypatch.setattr(AnswerDocument, "step", counted)
        burst(app, *["down", "up"] * 150)  # scrolls the focused pane's answer, for a while
        await wait_until(pilot, lambda: not app.key_order.busy and len(held) >= 4)
        assert not any(held)
        burst(app, "C", "y")
        await wait_until(pilot, all_finished(app))
