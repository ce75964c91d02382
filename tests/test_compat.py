"""What `acp_tui.compat` relies on in the pinned libraries' private parts: each check fails loudly
when a new version changes it (then update the entry, or retire it)."""

from __future__ import annotations

import asyncio
import inspect
import sys

from acp_tui import compat

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
