"""Every entry of `acp_tui.compat` against the pinned libraries: a release that moves or changes
what an entry relies on fails here, loudly and by name, before anything subtler breaks."""

from __future__ import annotations

import inspect
import io
import queue

from acp_tui import compat

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
