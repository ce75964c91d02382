"""A round's diffs: its compare view (`v`), which follows the round as its runs end, and applying
one run's change to the user's checkout (`A`, or `a` in the compare view), asked first."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from acp_tui.ui import text

if TYPE_CHECKING:
    from acp_tui.session.attempts import Attempt, Session
    from acp_tui.ui.screens.grid_screen import GridScreen
    from acp_tui.workspace.worktrees import Worktree


class RoundDiffs:
    """The compare view and `apply` for the rounds of a grid screen (the app's `session`)."""

    def __init__(self, screen: GridScreen, session: Callable[[], Session]) -> None:
        self.screen = screen
        self.session = session
        self._comparing: list[Attempt] = []  # the runs of the compare view open, in its order

    def compare(self) -> None:
        """The round's compare view: its table, answers side by side, the chosen row's diff; `a`
        applies. It follows the round: a run that ends joins it."""
        from acp_tui.ui.screens.compare_screen import CompareScreen

        pane = self.screen.round_pane()
        if pane is None:
            self.screen.notify("No round to compare yet.", severity="warning")
            return
        attempts, title = self._compared(pane.attempt.round_no)
        if not attempts:
            self.screen.notify("No run of this round has finished yet.", severity="warning")
            return
        self._comparing = attempts
        focused = attempts.index(pane.attempt) if pane.attempt in attempts else 0

        def chosen(index: int | None) -> None:
            if index is not None:
                self.confirm_apply(self._comparing[index])

        records = [attempt.record() for attempt in attempts]
        screen = CompareScreen(records, focused=focused, title=title, round_no=pane.attempt.round_no)
        self.screen.app.push_screen(screen, chosen)

    def _compared(self, round_no: int) -> tuple[list[Attempt], str]:
        """The round's finished attempts, and the compare view's title for them."""
        round_attempts = [a for a in self.session().attempts if a.round_no == round_no]
        attempts = [a for a in round_attempts if a.finished]
        live = len(round_attempts) - len(attempts)
        first_line = round_attempts[0].first_line if round_attempts else ""
        title = f"Round {round_no}: {first_line}" + (
            f" ({live} still running: each joins as it ends)" if live else ""
        )
        return attempts, title

    async def follow(self, attempt: Attempt) -> None:
        """The compare view of the attempt's round, if it is open, takes the attempt in (it ended)."""
        from acp_tui.ui.screens.compare_screen import CompareScreen

        screen = self.screen.app.screen
        if not isinstance(screen, CompareScreen) or screen.round_no != attempt.round_no:
            return
        attempts, title = self._compared(attempt.round_no)
        if attempts == self._comparing:
            return
        chosen = self._comparing[screen.chosen] if screen.chosen < len(self._comparing) else None
        self._comparing = attempts
        index = attempts.index(chosen) if chosen in attempts else 0
        await screen.follow([a.record() for a in attempts], title, chosen=index)

    def apply(self) -> None:
        pane = self.screen.round_pane()
        if pane is None:
            self.screen.notify("No run to apply.", severity="warning")
            return
        self.confirm_apply(pane.attempt)

    def confirm_apply(self, attempt: Attempt) -> None:
        """Asks first, with the focus on Cancel: applying writes to the user's own checkout."""
        from acp_tui.ui.screens.compare_screen import ApplyConfirmScreen

        worktree, change = attempt.worktree, attempt.change  # this turn's change, not a later one's
        if worktree is None or change is None or not change.diff or change.stat is None:
            self.screen.notify("This run has no recorded change to apply.", severity="warning")
            return
        diff = change.diff
        if change.truncated:
            self.screen.notify(
                "This run's diff was cut at the size limit: it cannot be applied.", severity="error"
            )
            return
        question = text.markup(
            "Apply the change of [b]$agent[/] ($label: $stat) to the checkout $target (git apply --3way)?",
            agent=attempt.agent,
            label=attempt.label,
            stat=str(change.stat),
            target=str(worktree.origin.toplevel),
        )

        def answered(yes: bool | None) -> None:
            if yes:
                self.screen.run_worker(
                    self._apply(attempt, worktree, diff), group="apply", exit_on_error=False
                )

        self.screen.app.push_screen(ApplyConfirmScreen(question, "Apply (y)", "Cancel (n)"), answered)

    async def _apply(self, attempt: Attempt, worktree: Worktree, diff: str) -> None:
        """The change the person confirmed, whatever ran since."""
        from acp_tui.workspace.apply import ApplyRefused, apply_diff
        from acp_tui.workspace.git import IsolationError

        target = worktree.origin.toplevel
        try:
            paths = await apply_diff(diff, target, base=worktree.base)
        except (ApplyRefused, IsolationError) as exc:  # a refusal's message lists the conflicts
            self.screen.notify(
                f"Not applied: {text.safe_notice(str(exc))}", severity="error", markup=False, timeout=20
            )
            return
        self.screen.notify(
            text.safe_notice(
                f"Applied {attempt.agent} ({attempt.label}) to {target}: {len(paths)} "
                f"file{'' if len(paths) == 1 else 's'} ({', '.join(paths)})"
            ),
            markup=False,
            timeout=10,
        )
