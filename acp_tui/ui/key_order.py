"""Keys in the order typed, each acting where the focus is once the keys before it have done their work.

Textual routes a key the moment the app reads it: to the focused widget's queue, from where it
bubbles up to the app's bindings. A key typed right behind another is routed before the first has
done its work, so it lands where the focus *was*: `c` right after Enter typed into the prompt
instead of cancelling the new round's first pane, letters right after `i` ran as commands on the
pane instead of typing. Here keys (and pastes) wait their turn: the next is routed once the one
before has been handled by its target and by every node above it, up to the app (what that work
left on the app's queue, a deferred focus among it, runs first). A key's work is what its handlers
and actions await, so an action that moves the focus moves it before it returns, and one that may
take long (a cancel, a dispose) runs in the background.

What can wait (the answers' rendering steps) waits for the keys (`when_done`): a key's frame is
painted before the next step, not after the steps that came due while it was routed.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from textual import events

if TYPE_CHECKING:
    from textual.app import App
    from textual.dom import DOMNode

Typed = events.Key | events.Paste


class KeyOrder:
    """The app's keys, one at a time (`SupervisorApp.on_event` hands each here)."""

    def __init__(self, app: App[Any], route: Callable[[Typed], Awaitable[None]]) -> None:
        self._app = app
        self._route = route  # Textual's own routing: priority bindings, else to the focused widget
        self._waiting: deque[Typed] = deque()
        self._busy = False
        self._done: list[Callable[[], object]] = []  # run once no key is in flight

    @property
    def busy(self) -> bool:
        """A key is being handled (or waits its turn)."""
        return self._busy

    def when_done(self, callback: Callable[[], object]) -> None:
        """`callback` at once if no key is being handled, else after the frame that shows the work
        of the keys typed so far."""
        if self.busy:
            self._done.append(callback)
        else:
            callback()

    def hold(self) -> None:
        """Keys wait, in order, until `release`: what they type into is not there yet."""
        self._busy = True

    async def release(self) -> None:
        """The keys typed since `hold`, each in its turn."""
        await self._next()

    async def typed(self, event: Typed) -> None:
        if self._busy:
            self._waiting.append(event)
        else:
            await self._send(event)

    async def _send(self, event: Typed) -> None:
        self._busy = True
        app = self._app
        target: DOMNode = app.focused or app.screen
        await self._route(event)  # a priority binding has run to its end here
        self._after(target)

    def _after(self, node: DOMNode | None) -> None:
        """Go on once `node` has handled what it holds (the key among it), then its parent."""
        if node is None or node is self._app:
            # The app's bindings ran on the key; what they left on the app's queue runs next.
            self._app.call_later(self._app.call_later, self._next)
        elif not node.call_later(self._after, node.parent):  # closed meanwhile: on to the parent
            self._after(node.parent)

    async def _next(self) -> None:
        self._busy = False
        if not self._app.screen_stack:  # the app is ending
            return
        if self._waiting:
            await self._send(self._waiting.popleft())
            return
        done, self._done = self._done, []
        for callback in done:
            self._app.call_after_refresh(callback)
