"""Every use of a pinned library's private parts, in one place.

Each entry says why we need it and what upstream change would retire it; `tests/test_compat.py`
fails loudly when a pinned version no longer has what an entry relies on. Libraries are imported
inside the functions, so the core may use its entries without importing textual.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from aiohttp import web
    from textual.app import App
    from textual.driver import Driver
    from textual.drivers.linux_driver import LinuxDriver
    from textual.message import Message
    from textual.screen import Screen
    from textual.strip import Strip
    from textual.widget import Widget
    from textual.widgets import Header
    from textual_serve.app_service import AppService
    from textual_serve.server import Server

# textual -----------------------------------------------------------------------------------------


def resolve_box_models(*args: Any, **kwargs: Any) -> Any:
    """`textual._resolve.resolve_box_models`: the sizes Textual's own layouts give their children.
    Why: `ui/widgets/flow.py` is a layout (children wrap as words do) and sizes them the same way.
    Retired by: a public layout helper, or a wrapping layout in Textual itself."""
    from textual._resolve import resolve_box_models

    return resolve_box_models(*args, **kwargs)


def wrap_offsets(line: str, width: int) -> list[int]:
    """`textual._wrap.compute_wrap_offsets`: where Textual's TextArea wraps a line of its text.
    Why: the prompt's stand-in (`ui/widgets/prompt_stand_in.py`) draws the first frame's prompt as
    the TextArea will draw it, wrapped at the same places.
    Retired by: a public wrapping function (or a TextArea cheap enough for the first frame)."""
    from textual._wrap import compute_wrap_offsets

    return compute_wrap_offsets(line, width, tab_size=4)


def hand_on_focus_kept_over_blur(app: App[Any], old: Widget, new: Widget) -> None:
    """`App._last_focused_on_app_blur`: the widget Textual focuses again when the terminal (or the
    browser's tab) has the focus back, if it was `old`, made `new`.
    Why: the prompt's stand-in is replaced by its text box (`PromptBar.make_prompt`) while the app
    may be blurred (a page not yet focused, a terminal window behind another): the focus must come
    back to the text box, not to nothing (Enter then sent nothing).
    Retired by: a public way to say which widget takes the focus when the app's comes back."""
    if app._last_focused_on_app_blur is old:
        app._last_focused_on_app_blur = new


def forget_painted_lines(widget: Widget) -> None:
    """`Widget._styles_cache.clear()`: Textual's cache of the lines it painted of `widget`.
    Why: the answer view (line API) changes while out of sight; the cached lines are then stale and
    Textual has no public way to drop them short of a full refresh of its layout.
    Retired by: a public `Widget.refresh(lines=...)` that also drops the styled-line cache."""
    widget._styles_cache.clear()


def screen_frame(screen: Screen[Any]) -> list[Strip]:
    """`Screen._compositor.render_strips()`: the screen as its compositor paints it, a strip a row,
    from the lines its widgets keep (a widget renders again only where it changed).
    Why: a dialog shows the screen under it dimmed (`ui/screens/_dialog.py`, `Backdrop`); Textual's
    own way (`BackgroundScreen`) renders and tints that screen again at every paint of the dialog.
    Retired by: a modal background that reuses the last frame of the screen under it."""
    return screen._compositor.render_strips()


def strips_divided_without_cycles() -> None:
    """`Strip.divide` made to return a strip divided whole (`[self]`) without keeping it in the
    strip's own `_divide_cache`, as Textual does: a strip in its own cache is a reference cycle,
    which reference counting never frees. The compositor divides every line it paints, so each
    line painted anew (sixteen panes streaming) left a strip and its eight caches to the garbage
    collector: 10,000 to 25,000 objects found unreachable at each young collection (30 to 150 ms
    each, every few seconds), and 0.5 to 0.7 s for each pass of the middle generation.
    Why: those passes met the keys (`benchmarks/streaming.py --only paced`).
    Retired by: a Textual whose `Strip.divide` caches no strip in itself."""
    from textual.strip import Strip

    divide = Strip.divide
    if hasattr(divide, "__wrapped__"):  # made already
        return

    @functools.wraps(divide)
    def divided(self: Strip, cuts: Iterable[int]) -> Sequence[Strip]:
        length = self.cell_length
        kept = [cut for cut in cuts if cut <= length]
        return [self] if kept == [length] else divide(self, kept)

    Strip.divide = divided  # type: ignore[method-assign]


class Styling:
    """What the styles of a widget depend on beyond the widget and its ancestors themselves: the
    app's stylesheet (`App._css_update_count`: a theme, its variables; the sources of rules not
    scoped to one type of widget, which is how a new widget's own CSS comes), and the app's classes
    and pseudo-classes (dark or light, the terminal's focus).
    Why: Textual restyles every widget of a screen each time it is shown again
    (`ScreenResume.refresh_styles`), in case one of these changed while it was hidden: F2's
    three hundred widgets at every F2. A screen the app keeps compares this with what it was when
    it was last styled (`ui/screens/_styled.py`) and is restyled only if it differs (a change
    made to a widget itself restyles it as it is made, shown or not).
    Retired by: a resume that restyles only when the stylesheet or the app's classes changed."""

    def __init__(self, app: App[Any]) -> None:
        sheet = app.stylesheet
        unscoped = [where for where, source in sheet.source.items() if not source.scope]
        self._sheet = sheet  # replaced whole when the CSS files change (textual --dev)
        self._state = (app._css_update_count, unscoped, app.classes, app.pseudo_classes)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Styling) and other._sheet is self._sheet and other._state == self._state

    __hash__ = None  # type: ignore[assignment]


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

    # Its size is the header's, whatever it says: a repaint of the line, not a layout of the screen.
    header.query_one(HeaderTitle).update(header.format_title(), layout=False)


# textual-serve -----------------------------------------------------------------------------------
# `acp-tui serve` builds on textual-serve's Server (routes, page, websocket protocol) and AppService
# (one tab's app), but runs the server in our own loop and starts each tab's app itself.


async def web_application(server: Server) -> web.Application:
    """The aiohttp application with textual-serve's routes. Why: `Server.serve()`, the only public
    way, runs a loop of its own and installs its own signal handlers and logging. Retired by a public
    `Server.make_app()`."""
    return await server._make_app()


async def process_messages(server: Server, websocket: web.WebSocketResponse, service: AppService) -> None:
    """Feed a tab's keys, resizes, focus and pings to its app until the websocket closes. Why:
    `Server.handle_websocket`, the public entry, makes its own AppService from a shell line. Retired
    by a Server hook (or argument) that makes the AppService."""
    await server._process_messages(websocket, service)


def app_environment(service: AppService, width: int, height: int) -> dict[str, str]:
    """The environment textual-serve gives a tab's app (its driver, its size). Why: our tabs start
    their app themselves (an argv in its own session, not a shell line). Retired by a public
    `AppService.build_environment()`, or an AppService that takes an argv."""
    return service._build_environment(width=width, height=height)


def run_app_service(service: AppService, process: asyncio.subprocess.Process) -> None:
    """Hand a started app process to `service`, as `AppService.start` does after opening its own:
    its stdin takes the page's input, its output is read by `run()`. Why: as `app_environment`.
    Retired by an AppService that takes an argv, or a public way to give it a process."""
    assert process.stdin is not None
    service._process = process
    service._stdin = process.stdin
    service._task = asyncio.create_task(service.run())


def app_process(service: AppService) -> asyncio.subprocess.Process | None:
    """The tab's app process, to kill it when it does not quit. Why: `AppService.stop()` waits for it
    without end. Retired by a public `AppService.process` (or a stop with a timeout that kills)."""
    return service._process


# pydantic ----------------------------------------------------------------------------------------


@contextlib.contextmanager
def attribute_docstrings_skipped() -> Iterator[None]:
    """While `import acp` runs: pydantic builds a few hundred models and, for each, reads its source
    again to turn attribute docstrings into field descriptions (`use_attribute_docstrings`), 0.6 s
    of a 1.65 s import measured here; those descriptions only feed JSON schemas nobody asks for.
    Relies on the private `pydantic._internal._fields._update_fields_from_docstrings`; if it has
    moved, nothing is skipped (the import takes its usual time). Retired by a public switch in
    pydantic to leave the docstrings unread, or by the SDK no longer asking for them."""
    try:
        from pydantic._internal import _fields

        original = _fields._update_fields_from_docstrings
    except (ImportError, AttributeError):
        yield
        return

    def skip(*args: Any, **kwargs: Any) -> None:
        return None

    _fields._update_fields_from_docstrings = skip
    try:
        yield
    finally:
        _fields._update_fields_from_docstrings = original


# asyncio -----------------------------------------------------------------------------------------


class ExitNoticingProtocol(asyncio.subprocess.SubprocessStreamProtocol):
    """A child's protocol that notices the child's exit as it happens (`exited`). Python 3.11's
    `Process.wait()` also waits for every pipe to close, which never happens while a wrapper's
    grandchild still holds them. Relies on the undocumented `SubprocessStreamProtocol` (its
    `process_exited` hook) and `asyncio.subprocess.Process(transport, protocol, loop)`, the way
    `create_subprocess_exec` builds one (see `process_of`). Retired by a public way to await a
    child's exit whatever holds its pipes."""

    def __init__(self, limit: int, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__(limit=limit, loop=loop)
        self.exited: asyncio.Future[None] = loop.create_future()

    def process_exited(self) -> None:
        super().process_exited()
        if not self.exited.done():
            self.exited.set_result(None)


def process_of(
    transport: asyncio.SubprocessTransport, protocol: ExitNoticingProtocol, loop: asyncio.AbstractEventLoop
) -> asyncio.subprocess.Process:
    """The `Process` over a transport made by `loop.subprocess_exec` with `ExitNoticingProtocol`
    (what `create_subprocess_exec` does inside)."""
    return asyncio.subprocess.Process(transport, protocol, loop)


# claude-agent-sdk --------------------------------------------------------------------------------


def claude_bundled_cli() -> str | None:
    """The Claude Code CLI the SDK's wheel bundles, where the SDK itself looks for it first
    (`SubprocessCLITransport._find_bundled_cli`); None when this wheel has none. We start the CLI
    ourselves (see `acp_tui.claude.transport`), so we need its path; retired if the SDK ever says
    it publicly."""
    import importlib.util
    import platform
    from pathlib import Path

    spec = importlib.util.find_spec("claude_agent_sdk")  # found, not imported: that takes a second
    if spec is None or not spec.submodule_search_locations:
        return None
    name = "claude.exe" if platform.system() == "Windows" else "claude"
    bundled = Path(spec.submodule_search_locations[0]) / "_bundled" / name
    return str(bundled) if bundled.is_file() else None
