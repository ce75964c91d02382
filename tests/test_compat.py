"""What `acp_tui.compat` relies on in the pinned libraries is still there, and still does what each
entry says: a library upgrade that moves it fails here, loudly, instead of somewhere slower."""

from __future__ import annotations

import asyncio
import importlib.util
import inspect
import io
import queue
import sys
from typing import Any

import pytest

from acp_tui import compat


def test_pydantic_still_reads_attribute_docstrings_where_we_skip_it() -> None:
    from pydantic import BaseModel, ConfigDict
    from pydantic._internal import _fields

    hook = _fields._update_fields_from_docstrings
    assert callable(hook) and list(inspect.signature(hook).parameters)[:2] == ["cls", "fields"]

    def described() -> str | None:
        class Model(BaseModel):
            model_config = ConfigDict(use_attribute_docstrings=True)
            value: int = 0
            """what it is"""

        return Model.model_fields["value"].description

    assert described() == "what it is"  # the hook is what turns docstrings into descriptions
    with compat.attribute_docstrings_skipped():
        assert described() is None  # skipped while the SDK is imported
    assert _fields._update_fields_from_docstrings is hook  # and put back


async def test_asyncio_notices_a_childs_exit_while_its_pipes_stay_open() -> None:
    """The child exits, leaving a grandchild holding its stdout: `exited` is set at once, while
    asyncio's own `Process.wait()` waits for the pipes (why the entry exists)."""
    assert "process_exited" in vars(asyncio.subprocess.SubprocessStreamProtocol)
    assert list(inspect.signature(asyncio.subprocess.Process).parameters) == ["transport", "protocol", "loop"]
    loop = asyncio.get_running_loop()
    protocol = compat.ExitNoticingProtocol(limit=1 << 16, loop=loop)
    script = (
        "import subprocess, sys; subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(30)']);"
        " sys.stdin.readline()"  # exits when told, once its wait below is under way
    )
    transport, _ = await loop.subprocess_exec(
        lambda: protocol,
        sys.executable,
        "-c",
        script,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        start_new_session=True,
    )
    process = compat.process_of(transport, protocol, loop)
    waiting = asyncio.ensure_future(process.wait())
    try:
        assert process.stdin is not None
        process.stdin.write(b"exit\n")
        await asyncio.wait_for(protocol.exited, 20)
        assert process.returncode == 0
        await asyncio.sleep(0)
        assert not waiting.done()  # asyncio's own wait is held by the grandchild's pipes
    finally:
        import os
        import signal

        os.killpg(process.pid, signal.SIGKILL)  # the grandchild, in the child's group
        assert process.stdout is not None
        await asyncio.wait_for(process.stdout.read(), 20)  # its end of the pipe closed: it is gone
        transport.close()
        await asyncio.wait_for(waiting, 20)


# textual-serve -----------------------------------------------------------------------------------


async def test_textual_serve_make_app_gives_the_routes_we_guard() -> None:
    from textual_serve.server import Server

    app = await compat.web_application(Server("unused"))
    assert {"index", "websocket", "static", "download"} <= set(app.router.named_resources())
    assert app.router["index"].url_for().path == "/"
    assert app.router["websocket"].url_for().path == "/ws"


def test_textual_serve_process_messages_takes_the_websocket_and_the_app_service() -> None:
    from textual_serve.server import Server

    method = Server._process_messages
    assert inspect.iscoroutinefunction(method)
    assert list(inspect.signature(method).parameters) == ["self", "websocket", "app_service"]


async def test_textual_serve_app_service_runs_a_process_we_started() -> None:
    """Given our process (the environment it builds, its stdin, its output), the service speaks its
    protocol with it and stops it as `AppService.start` would have."""
    from textual_serve.app_service import AppService
    from textual_serve.download_manager import DownloadManager

    drawn: list[bytes] = []

    async def nothing(*_: object) -> None:
        return None

    async def draw(data: bytes) -> None:
        drawn.append(data)

    service = AppService(
        "unused", write_bytes=draw, write_str=nothing, close=nothing, download_manager=DownloadManager()
    )
    env = compat.app_environment(service, 100, 30)
    assert env["TEXTUAL_DRIVER"] == "textual.drivers.web_driver:WebDriver"
    assert (env["COLUMNS"], env["ROWS"]) == ("100", "30")
    app = (  # a Textual app as the service sees one: its prelude, a frame, then it quits when told
        "import sys\n"
        "sys.stdout.buffer.write(b'__GANGLION__\\n' + b'D' + (5).to_bytes(4, 'big') + b'frame')\n"
        "sys.stdout.flush()\n"
        "sys.stdin.buffer.read(5)\n"
    )
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        app,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    compat.run_app_service(service, process)
    assert service.stdin is process.stdin
    assert compat.app_process(service) is process
    await asyncio.wait_for(service.stop(), 30)  # sends quit, then waits for `run()` to end
    assert await process.wait() == 0
    assert drawn == [b"frame"]


# textual -----------------------------------------------------------------------------------------


def test_textual_resolve_box_models_still_sizes_children_as_flow_calls_it() -> None:
    from textual._resolve import resolve_box_models

    parameters = list(inspect.signature(resolve_box_models).parameters)
    assert parameters[:5] == ["dimensions", "widgets", "size", "viewport_size", "margin"], parameters
    assert {"resolve_dimension", "greedy"} <= set(parameters)


def test_textual_widget_still_caches_its_painted_lines_in_styles_cache() -> None:
    from textual.widget import Widget

    widget = Widget()
    assert callable(widget._styles_cache.clear)
    compat.forget_painted_lines(widget)


def test_textual_app_still_keeps_its_driver_in_underscore_driver() -> None:
    from textual.app import App

    assert compat.app_driver(App()) is None  # not running: no driver yet


def test_textual_linux_driver_still_writes_through_file_and_a_writer_threads_queue() -> None:
    from textual.drivers._writer_thread import WriterThread
    from textual.drivers.linux_driver import LinuxDriver

    assert "_file" in inspect.getsource(LinuxDriver.__init__)
    assert "self._writer_thread = WriterThread(self._file)" in inspect.getsource(
        LinuxDriver.start_application_mode
    )
    writer = WriterThread(io.StringIO())
    assert isinstance(writer._queue, queue.Queue)
    assert "attrs_before" in inspect.getsource(LinuxDriver.stop_application_mode)


def test_textual_xterm_parser_still_makes_keys_of_what_a_terminal_sends() -> None:
    keys = [event.key for event in compat.parse_terminal_input("a\r\x1b[A\x1b")]  # type: ignore[attr-defined]
    assert keys == ["a", "enter", "up", "escape"]


def test_textual_header_still_shows_its_title_in_a_header_title() -> None:
    from textual.widgets import Header, Static
    from textual.widgets._header import HeaderTitle

    assert issubclass(HeaderTitle, Static) and callable(Header.format_title)


async def test_textual_compositor_still_paints_a_screen_from_its_widgets_kept_lines() -> None:
    """`screen_frame` is the screen as painted; a second frame renders no widget again."""
    from textual.app import App, ComposeResult
    from textual.widgets import Static

    renders = 0

    class Counted(Static):
        def render_line(self, y: int):  # type: ignore[no-untyped-def]
            nonlocal renders
            renders += 1
            return super().render_line(y)

    class Painted(App[None]):
        def compose(self) -> ComposeResult:
            yield Counted("a line of text")

    app = Painted()
    async with app.run_test(size=(30, 4)) as pilot:
        await pilot.pause()
        first = [strip.text for strip in compat.screen_frame(app.screen)]
        before = renders
        again = [strip.text for strip in compat.screen_frame(app.screen)]
    assert first[0].startswith("a line of text") and len(first) == 4
    assert again == first and renders == before


async def test_textual_still_restyles_a_screen_shown_again_unless_told_not_to() -> None:
    """A screen pushed again gets `ScreenResume(refresh_styles=True)`, a pass over all its widgets,
    which a handler of the screen's own class can turn off; the app's styling (`compat.Styling`)
    stays the same when a widget's own scoped CSS comes, and changes with the theme."""
    from textual import events
    from textual.app import App
    from textual.css.stylesheet import Stylesheet
    from textual.screen import Screen
    from textual.widgets import Static

    passes: list[object] = []
    update = Stylesheet.update_nodes

    def counted(stylesheet: Stylesheet, nodes: Any, animate: bool = False) -> None:
        nodes = list(nodes)
        passes.append(nodes[0] if nodes else None)
        update(stylesheet, nodes, animate=animate)

    class Styled(Static):
        DEFAULT_CSS = "Styled { color: red; }"

    class Kept(Screen[None]):
        skip = False

        def on_screen_resume(self, event: events.ScreenResume) -> None:
            assert event.refresh_styles
            event.refresh_styles = not self.skip

    app: App[None] = App()
    kept = Kept()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Stylesheet, "update_nodes", counted)
        async with app.run_test() as pilot:
            app.install_screen(kept, "kept")
            for skip in (False, True):
                kept.skip = skip
                passes.clear()
                app.push_screen("kept")
                await pilot.pause()
                assert (kept in passes) is not skip
                app.pop_screen()
                await pilot.pause()
            styling = compat.Styling(app)
            sources = len(app.stylesheet.source)
            await app.screen.mount(Styled())  # its DEFAULT_CSS: a new source, scoped to its type
            await pilot.pause()
            assert len(app.stylesheet.source) > sources
            assert compat.Styling(app) == styling
            app.theme = "textual-light" if app.theme != "textual-light" else "textual-dark"
            await pilot.pause()
            assert compat.Styling(app) != styling


# claude-agent-sdk --------------------------------------------------------------------------------


def test_the_claude_cli_we_start_is_the_one_the_sdk_would() -> None:
    if not importlib.util.find_spec("claude_agent_sdk"):
        pytest.skip("claude: the Claude Agent SDK is not installed (pip install 'acp-tui[claude]')")
    from claude_agent_sdk import ClaudeAgentOptions
    from claude_agent_sdk._internal.transport.subprocess_cli import SubprocessCLITransport

    transport = SubprocessCLITransport("", ClaudeAgentOptions())
    assert compat.claude_bundled_cli() == transport._find_bundled_cli()


def test_a_strip_divided_whole_is_kept_in_its_own_cache_by_textual_and_not_by_us() -> None:
    from rich.segment import Segment
    from textual.strip import Strip

    compat.strips_divided_without_cycles()
    textuals = Strip.divide.__wrapped__  # type: ignore[attr-defined]
    strip = Strip([Segment("abc")], 3)
    assert textuals(strip, [3]) == [strip]
    assert strip._divide_cache.get((3,)) == [strip]  # a cycle: only the garbage collector frees it
    fresh = Strip([Segment("abc")], 3)
    assert fresh.divide([3, 5]) == [fresh] and fresh._divide_cache.get((3,)) is None
    assert [part.text for part in fresh.divide([1, 3])] == ["a", "bc"]  # a strip cut: Textual's own
    compat.strips_divided_without_cycles()  # made once
    assert Strip.divide.__wrapped__ is textuals  # type: ignore[attr-defined]


async def test_textual_still_gives_the_focus_back_to_the_widget_it_kept_over_an_app_blur() -> None:
    from textual import events
    from textual.app import App, ComposeResult
    from textual.widgets import Input

    class Two(App[None]):
        def compose(self) -> ComposeResult:
            yield Input(id="old")
            yield Input(id="new")

    app = Two()
    async with app.run_test() as pilot:
        old, new = app.query_one("#old"), app.query_one("#new")
        old.focus()
        app.post_message(events.AppBlur())
        await pilot.pause()
        assert app.focused is None
        compat.hand_on_focus_kept_over_blur(app, old, new)
        app.post_message(events.AppFocus())
        await pilot.pause()
        assert app.focused is new
