"""Every use of a pinned library's private parts, in one place.

Each entry says why we need it and what upstream change would retire it; `tests/test_compat.py`
fails loudly when a pinned version no longer has what an entry relies on. Libraries are imported
inside the functions, so the core may use its entries without importing textual.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from aiohttp import web
    from textual_serve.app_service import AppService
    from textual_serve.server import Server

# textual -----------------------------------------------------------------------------------------

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

# asyncio -----------------------------------------------------------------------------------------
