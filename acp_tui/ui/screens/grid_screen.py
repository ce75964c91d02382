"""A screen of panes on a grid: which pane has the focus, and the zoom.

The focus moves from pane to pane (tab, a digit, back from the prompt) and brings the pane into
view; `z` draws the focused pane over the grid (a `ZoomView`: nothing of the grid is restyled or
laid out again, unlike Textual's maximize), and the zoom follows the focus from pane to pane.
The main screen (`MainScreen`) adds the prompt and the rounds.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from textual.reactive import Reactive
from textual.screen import Screen
from textual.widget import Widget

from acp_tui.ui import keys
from acp_tui.ui.widgets.runs_grid import RunsGrid

if TYPE_CHECKING:
    from acp_tui.session.attempts import Attempt
    from acp_tui.ui.widgets.pane_view import ZoomView
    from acp_tui.ui.widgets.run_pane import RunPane


MAX_WARM_FOLLOW_UPS = 4  # follow-up spares at most: each is an agent's process, idle until taken


class GridScreen(Screen[object]):
    DEFAULT_CSS = "GridScreen { layers: default zoom; }"  # the zoom over the grid
    BINDINGS = keys.bindings("grid")
    # Textual repaints the whole screen when the focus moves (the reactive's default): the two
    # widgets whose focus changed repaint themselves, and sixteen panes repainted cost 100-150 ms.
    focused: Reactive[Widget | None] = Reactive(None, repaint=False)

    def __init__(self) -> None:
        super().__init__()
        self.last_pane: RunPane | None = None
        self.zoom: ZoomView | None = None  # with the first panes (see `add_zoom`)

    @property
    def runs(self) -> RunsGrid:
        return self.get_child_by_id("runs", RunsGrid)  # a child: no walk of every pane's widgets

    def panes(self) -> list[RunPane]:
        """Every pane on the grid, in reading order: round by round."""
        return self.runs.panes()

    def pane_for(self, attempt: Attempt) -> RunPane | None:
        """The pane of `attempt`'s conversation: one pane shows every turn of it."""
        return self.runs.pane_for(attempt)

    def round_pane(self) -> RunPane | None:
        """The pane a round's command acts on: the focused one, else the one last focused."""
        from acp_tui.ui.widgets.run_pane import RunPane

        if isinstance(self.focused, RunPane):
            return self.focused
        return self.last_pane if self.last_pane in self.panes() else None

    async def add_zoom(self) -> None:
        """The zoom's view, mounted with the first panes: its module is theirs (Markdown and all),
        not to be imported before the first frame."""
        if self.zoom is None:
            from acp_tui.ui.widgets.pane_view import ZoomView

            self.zoom = ZoomView()
            await self.mount(self.zoom)

    def follow_ups_in_view(self, first: Attempt | None) -> list[Attempt]:
        """The turns a follow-up may continue next: `first` (the follow-up mode's), then the latest
        turn of each pane in sight (the zoomed one alone while zoomed) that ended and can be
        continued, the focused pane's first; `MAX_WARM_FOLLOW_UPS` at most."""
        found = [first] if first is not None else []
        zoomed = self.zoomed
        panes = [zoomed] if zoomed is not None else self.panes()
        view = self.runs.region
        in_sight = [pane for pane in panes if pane.region.overlaps(view)]
        in_sight.sort(key=lambda pane: not pane.has_focus)
        for pane in in_sight:
            turn = pane.attempt
            if turn not in found and turn.cannot_follow_up(asking_the_agent=True) is None:
                found.append(turn)
        return found[:MAX_WARM_FOLLOW_UPS]

    @property
    def zoomed(self) -> RunPane | None:
        """The pane drawn over the grid, if any."""
        return cast("RunPane | None", self.zoom.subject if self.zoom is not None else None)

    def on_descendant_focus(self, event: object) -> None:
        from acp_tui.ui.widgets.run_pane import RunPane

        focused = self.focused
        if self.zoomed is not None and focused is not self.zoomed:
            # The zoom follows the focus from pane to pane; anything else (the prompt) ends it.
            self._zoom_on(focused if isinstance(focused, RunPane) else None)
        if isinstance(focused, RunPane):
            self.last_pane = focused
            # In sight once laid out, however it got the focus (a new round, tab, a digit, the board).
            if self.zoomed is None:
                self.call_after_refresh(self.runs.bring_into_view, focused)

    def _zoom_on(self, pane: RunPane | None) -> None:
        """`pane` drawn over the grid (None: the grid again)."""
        if self.zoom is not None:  # there once a pane is
            self.zoom.show(pane)
        self.refresh_bindings()  # the footer's `z Unzoom`

    def action_focus_panes(self) -> None:
        """From the prompt to the pane last focused, else the first of the newest round."""
        panes = self.panes()
        if not panes:
            return
        if self.last_pane in panes:
            self.set_focus(self.last_pane)
        else:
            newest = max(p.attempt.round_no for p in panes)
            self.set_focus(next(p for p in panes if p.attempt.round_no == newest))

    def _step_pane(self, step: int) -> None:
        panes = self.panes()
        if not panes:
            return
        focused = self.focused
        index = panes.index(focused) if focused in panes else (-1 if step > 0 else 0)
        self.set_focus(panes[(index + step) % len(panes)])

    def action_next_pane(self) -> None:
        self._step_pane(+1)

    def action_previous_pane(self) -> None:
        self._step_pane(-1)

    def action_focus_nth(self, n: int) -> None:
        panes = self.panes()
        if not panes:
            return
        newest = max(p.attempt.round_no for p in panes)
        round_panes = [p for p in panes if p.attempt.round_no == newest]
        if n <= len(round_panes):
            self.set_focus(round_panes[n - 1])

    def action_zoom(self) -> None:
        """`z`: the focused pane over the whole screen, and back (escape too)."""
        focused = self.focused
        if self.zoomed is not None:
            self._zoom_on(None)
        elif focused in self.panes():
            self._zoom_on(focused)

    def action_unzoom(self) -> None:
        self._zoom_on(None)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "unzoom":  # the focused pane's key while zoomed, and then only
            return self.zoomed is not None
        return True
