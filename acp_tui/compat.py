"""Every use of a pinned library's private parts, in one place.

Each entry says why we need it and what upstream change would retire it; `tests/test_compat.py`
fails loudly when a pinned version no longer has what an entry relies on. Libraries are imported
inside the functions, so the core may use its entries without importing textual.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from textual.app import App
    from textual.driver import Driver
    from textual.drivers.linux_driver import LinuxDriver
    from textual.message import Message
    from textual.widget import Widget
    from textual.widgets import Header

# textual -----------------------------------------------------------------------------------------


def resolve_box_models(*args: Any, **kwargs: Any) -> Any:
    """`textual._resolve.resolve_box_models`: the sizes Textual's own layouts give their children.
    Why: `ui/widgets/flow.py` is a layout (children wrap as words do) and sizes them the same way.
    Retired by: a public layout helper, or a wrapping layout in Textual itself."""
    from textual._resolve import resolve_box_models

    return resolve_box_models(*args, **kwargs)


def forget_painted_lines(widget: Widget) -> None:
    """`Widget._styles_cache.clear()`: Textual's cache of the lines it painted of `widget`.
    Why: the answer view (line API) changes while out of sight; the cached lines are then stale and
    Textual has no public way to drop them short of a full refresh of its layout.
    Retired by: a public `Widget.refresh(lines=...)` that also drops the styled-line cache."""
    widget._styles_cache.clear()


def app_driver(app: App[Any]) -> Driver | None:
    """`App._driver`: the driver the app runs with.
    Why: our Linux driver (`ui/terminal.py`) tells the app when the terminal went away.
    Retired by: a public `App.driver`."""
    return app._driver


def driver_output(driver: LinuxDriver) -> Any:
    """`LinuxDriver._file`: the file the driver writes the screen to.
    Why: `ui/terminal.py` wraps it so that a write to a terminal that is gone (EIO) ends the app
    instead of killing the writer thread (which left the app blocked on a full queue).
    Retired by: a driver that survives a lost terminal (and stops its threads) by itself."""
    return driver._file


def set_driver_output(driver: LinuxDriver, file: Any) -> None:
    """Sets `LinuxDriver._file` (see `driver_output`)."""
    driver._file = file


def drop_queued_writes(driver: LinuxDriver) -> None:
    """`LinuxDriver._writer_thread._queue`, emptied: writes queued for a terminal that is gone.
    Why: a full queue blocks the app's next write forever once the writer thread has died.
    Retired by: the same as `driver_output`."""
    writer = driver._writer_thread
    if writer is None:
        return
    queue = writer._queue
    with queue.mutex:
        queue.queue.clear()
        queue.not_full.notify_all()


def parse_terminal_input(text: str) -> Iterator[Message]:
    """`textual._xterm_parser.XTermParser`: the driver's parser of what the terminal sends.
    Why: keys typed before the driver reads (`ui/typed_ahead.py`) must become the same events.
    Retired by: a public way to hand a driver input it did not read itself."""
    from textual._xterm_parser import XTermParser

    parser = XTermParser()
    yield from parser.feed(text)
    yield from parser.feed("")  # the end: a lone escape is the escape key


def show_sub_title(header: Header) -> None:
    """`textual.widgets._header.HeaderTitle`, updated in place: the header's line of title and
    sub-title.
    Why: setting `App.sub_title` repaints the whole screen (100-150 ms with sixteen panes); the
    main screen sets it without the repaint and updates this one line.
    Retired by: a sub-title reactive that refreshes only the header."""
    from textual.widgets._header import HeaderTitle

    header.query_one(HeaderTitle).update(header.format_title())


# textual-serve -----------------------------------------------------------------------------------

# pydantic ----------------------------------------------------------------------------------------

# asyncio -----------------------------------------------------------------------------------------
