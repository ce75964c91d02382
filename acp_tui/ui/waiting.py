"""What waits for a person: the `ask` policy's permission requests and the agents' questions, oldest
first. None takes the focus: each is called out (`ui.calls`), its pane says `needs you`, and `a`
opens the oldest; one dialog at a time, the next in its place once it is answered."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    from textual.app import App
    from textual.screen import Screen

    from acp_tui.session.asks import AskQueue, PendingAsk
    from acp_tui.ui.calls import Calls

PERMISSION = "permission"  # the permission dialog's installed screen


class Waiting:
    """The dialogs of an app's queue (`queue`: the driver's)."""

    def __init__(self, app: App[Any], queue: AskQueue, calls: Calls) -> None:
        self.app = app
        self.queue = queue
        self.calls = calls
        queue.listen(self._changed)

    def _changed(self, pending: PendingAsk) -> None:
        """A request joined the queue (say so) or left it (close its dialog if it is shown); an open
        dialog counts the queue as it is now."""
        from acp_tui.ui.screens.permission_screen import LATER, PermissionScreen
        from acp_tui.ui.screens.question_screen import QuestionScreen

        app, asks = self.app, self.queue.pending
        if not app.screen_stack:
            return
        if pending in asks:
            word = "asks you" if pending.is_question else "needs you"
            self.calls.alert(f"{pending.agent} {word}: {pending.what} (a to answer)", "warning", call=True)
        screen = app.screen
        if isinstance(screen, PermissionScreen | QuestionScreen):
            if screen.pending is pending and pending not in asks:  # its run stopped asking
                screen.dismiss(LATER)  # nothing to answer, and no next one opened under the keys
            elif screen.pending in asks:
                screen.show_queue(asks.index(screen.pending) + 1, len(asks))
        app.refresh_bindings()

    def may_open(self, over: Screen[Any] | None) -> bool:
        """Whether `a` opens a dialog now: something waits, and none of its dialogs is shown (`over`:
        the screen over the grid, if any)."""
        if not self.queue.pending:
            return False
        if over is None:
            return True
        from acp_tui.ui.screens.permission_screen import PermissionScreen
        from acp_tui.ui.screens.question_screen import QuestionScreen

        return not isinstance(over, PermissionScreen | QuestionScreen)

    def open_oldest(self) -> None:
        """The oldest request or question waiting; once it is answered, the next opens in its place
        (the keys typed after the answer are aimed at it)."""
        from acp_tui.core.elicitation import ElicitationAsk
        from acp_tui.ui.screens.permission_screen import LATER, PermissionScreen
        from acp_tui.ui.screens.question_screen import QuestionScreen

        asks = self.queue.pending
        if not asks:
            self.app.notify("No permission request or question is waiting.")
            return
        pending = asks[0]
        attempt = pending.attempt
        label = attempt.label if attempt is not None else ""
        screen: PermissionScreen | QuestionScreen
        if isinstance(pending.ask, ElicitationAsk):
            screen = QuestionScreen(pending.agent, pending.ask, waiting=len(asks), label=label)
        else:
            if not self.app.is_screen_installed(PERMISSION):  # made once, filled at each opening
                self.app.install_screen(PermissionScreen(), PERMISSION)
            screen = cast(PermissionScreen, self.app.get_screen(PERMISSION))
            policy = attempt.policy if attempt is not None else "ask"
            screen.show_ask(pending.agent, pending.ask, waiting=len(asks), label=label, policy=policy)
        screen.pending = pending

        def answered(answer: Any) -> None:
            if answer == LATER:
                return
            self.queue.answer(pending, answer)
            if self.queue.pending:
                self.open_oldest()

        self.app.push_screen(screen, answered)
