"""`acp-tui serve`: the supervisor in browser tabs, for whoever holds the printed URL.

textual-serve runs one app process per websocket (one per tab) and checks nothing. Here:

- A token, new at each start, is in the URL printed once. The first page trades it for an HttpOnly,
  SameSite=Strict cookie and redirects to the same address without it, so it leaves the address bar
  (a demo is often on a shared screen) and never appears in the page's links: textual.js builds the
  websocket and static URLs from the page, and the cookie goes with them. Every request, the
  websocket included, needs the token (cookie or `?token=`), else 403.
- Browsers send a host's cookies to every port of it: on loopback the URL names a host of our own, a
  random `*.localhost` name (browsers resolve it to loopback themselves), so that the cookie never
  goes to another server of this machine, such as an agent's dev server the person previews.
- The Host header must name the host served, else 403: a page whose name an attacker rebinds to
  127.0.0.1 (DNS rebinding) sends its own name, and a stolen cookie sent to 127.0.0.1 is refused. A
  request with an Origin (every browser websocket) must come from our page.
- The page takes the keyboard when it loads (textual.js leaves that to a click).
- A tab's app is `python -m acp_tui ...` started as an argv (no shell), in its own session, so a
  ctrl+c in our terminal reaches only us. Closing the tab, or stopping us (SIGINT, SIGTERM, SIGHUP),
  asks each app to quit (it disposes its runs); one still there after `TAB_QUIT_GRACE` is killed, and
  its own watchdog ends its agents. If we die without cleaning up, our watchdog ends every tab's app
  (and what descends from it).
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import logging
import shlex
import signal
import sys
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import hdrs, web
from textual_serve.app_service import AppService
from textual_serve.server import Server, to_int

from acp_tui import compat
from acp_tui.core.text import one_line
from acp_tui.process.watchdog import SUPERVISOR_MARK, watchdog

TAB_QUIT_GRACE = 10.0  # seconds a tab's app has to dispose its runs (1.5 s at most) and exit: 4 s loaded
SIZE_DEFAULTS = (("width", 80), ("height", 24))  # the terminal's, until the page says
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
# No request leaves our origin: textual-serve's page would fetch a font from Google otherwise.
CONTENT_POLICY = (
    "default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; "
    "connect-src 'self' {ws}; frame-ancestors 'none'"
)

# Added to textual-serve's page, after its own script made the terminal (on the same `load` event).
TAKE_KEYBOARD = (
    '<script>addEventListener("load", () => document.querySelector(".xterm-helper-textarea").focus());'
    "</script>"
)

log = logging.getLogger("acp_tui.web")
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def host_part(host: str) -> str:
    return f"[{host}]" if ":" in host else host  # an IPv6 address in a URL


class TabApp(AppService):
    """One tab's app: an argv, not a shell line; its own session; never left running."""

    def __init__(self, argv: list[str], *, supervisor: str, **kwargs: Any) -> None:
        super().__init__(shlex.join(argv), **kwargs)
        self._argv = argv
        self._supervisor = supervisor
        self._stderr: asyncio.Task[None] | None = None

    async def start(self, width: int, height: int) -> None:
        env = {**compat.app_environment(self, width, height), SUPERVISOR_MARK: self._supervisor}
        process = await asyncio.create_subprocess_exec(
            *self._argv,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=env,
            start_new_session=True,
        )
        watchdog.watch(process.pid)  # its group: the mark alone is unreadable once it hides its environment
        assert process.stderr is not None
        # textual-serve would copy its stderr to our terminal as it is: we show it as text, line by
        # line, and hand textual-serve a stream that has ended.
        prefix = f"acp-tui serve: tab {process.pid}: "
        self._stderr = asyncio.create_task(forward_lines(process.stderr, prefix))
        process.stderr = asyncio.StreamReader()
        process.stderr.feed_eof()
        compat.run_app_service(self, process)

    async def run(self) -> None:
        """Until the app's output ends; then the tab is told (textual-serve waits for a quit message that
        an app which failed never sends, leaving the page waiting)."""
        await super().run()
        await self.remote_close()

    async def stop(self) -> None:
        """Ask the app to quit (it disposes its runs); kill it if it is still there after the grace."""
        try:
            await asyncio.wait_for(super().stop(), TAB_QUIT_GRACE)
        except TimeoutError:
            log.warning("a tab's app did not quit within %.0f s: killed", TAB_QUIT_GRACE)
        finally:
            if (process := compat.app_process(self)) is not None:
                if process.returncode is None:
                    with contextlib.suppress(ProcessLookupError):
                        process.kill()
                await process.wait()
                watchdog.forget(process.pid)


async def forward_lines(stream: asyncio.StreamReader, prefix: str) -> None:
    """Each line of `stream` to our stderr, after `prefix`, control characters shown as escapes."""
    while True:
        try:
            line = await stream.readline()
        except ValueError:  # longer than the reader's buffer, which dropped it
            line = b"(a line too long to show)"
        if not line:
            return
        text = line.decode("utf-8", "replace").removesuffix("\n")
        sys.stderr.write(f"{prefix}{one_line(text)}\n")
        sys.stderr.flush()


class GuardedServer(Server):
    """textual-serve's server behind a token, a Host check and an Origin check."""

    def __init__(self, argv: list[str], host: str, port: int, token: str, *, name: str) -> None:
        """Serve on `host`, for the URL naming `name` (the host itself, or one of our own)."""
        origin = f"http://{host_part(name)}:{port}"
        super().__init__(shlex.join(argv), host=host, port=port, title="acp-tui", public_url=origin)
        self.argv = argv
        self.token = token.encode()
        self.cookie = f"acp-tui-{port}"  # one name per port served, should two share a host
        netloc = origin.removeprefix("http://").lower()
        self.hosts = {netloc, host_part(name).lower()} if port == 80 else {netloc}
        self.content_policy = CONTENT_POLICY.format(ws=f"ws://{netloc}")
        self.tabs: set[asyncio.Task[Any]] = set()
        self.supervisor = ""

    def url(self) -> str:
        return f"{self.public_url}/?token={self.token.decode()}"

    def _holds_token(self, given: str | None) -> bool:
        return given is not None and hmac.compare_digest(given.encode(), self.token)

    @web.middleware
    async def _guard(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        if request.headers.get(hdrs.HOST, "").lower() not in self.hosts:
            raise web.HTTPForbidden(text="acp-tui serve: this is not the address served\n")
        by_query = self._holds_token(request.query.get("token"))
        if not (by_query or self._holds_token(request.cookies.get(self.cookie))):
            raise web.HTTPForbidden(text="acp-tui serve: open the URL printed at start (it has the token)\n")
        origin = request.headers.get(hdrs.ORIGIN)
        if origin is not None and origin.lower() != self.public_url.lower():
            raise web.HTTPForbidden(text="acp-tui serve: not from this page\n")
        if by_query and request.path == "/":
            page = web.HTTPSeeOther(request.rel_url.without_query_params("token"))
            page.set_cookie(self.cookie, self.token.decode(), httponly=True, samesite="Strict", path="/")
            raise page
        response = await handler(request)
        if not response.prepared:
            response.headers[hdrs.CONTENT_SECURITY_POLICY] = self.content_policy
            response.headers[hdrs.REFERRER_POLICY] = "no-referrer"
        return response

    async def application(self) -> web.Application:
        app = await compat.web_application(self)
        app.middlewares.append(self._guard)
        return app

    async def handle_index(self, request: web.Request) -> web.StreamResponse:
        """textual-serve's page, which takes the keyboard when it loads."""
        page = await super().handle_index(request)
        assert isinstance(page, web.Response) and page.text is not None
        page.text = page.text.replace("</body>", f"{TAKE_KEYBOARD}</body>", 1)
        return page

    async def on_startup(self, app: web.Application) -> None:
        """Nothing printed here: the URL is printed once the port is ours."""

    async def on_shutdown(self, app: web.Application) -> None:
        """Every tab's app quits (or is killed) before we go: textual-serve would wait for the tabs."""
        for tab in self.tabs:
            tab.cancel()
        await asyncio.gather(*self.tabs, return_exceptions=True)

    async def handle_websocket(self, request: web.Request) -> web.WebSocketResponse:
        """textual-serve's handler, with our app service, and known to `on_shutdown`."""
        websocket = web.WebSocketResponse(heartbeat=15)
        await websocket.prepare(request)
        tab = TabApp(
            self.argv,
            supervisor=self.supervisor,
            write_bytes=websocket.send_bytes,
            write_str=websocket.send_str,
            close=websocket.close,
            download_manager=self.download_manager,
        )
        task = asyncio.current_task()
        assert task is not None
        self.tabs.add(task)
        try:
            size = (to_int(request.query.get(side, ""), default) for side, default in SIZE_DEFAULTS)
            await tab.start(*size)
            await compat.process_messages(self, websocket, tab)
        except Exception:
            log.exception("a tab's session failed")
        finally:
            await tab.stop()
            self.tabs.discard(task)
            await websocket.close()
        return websocket


async def _serve(server: GuardedServer, started: Callable[[], None]) -> None:
    runner = web.AppRunner(await server.application(), access_log=None, shutdown_timeout=TAB_QUIT_GRACE)
    await runner.setup()
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for sig in STOP_SIGNALS:
        loop.add_signal_handler(sig, stop.set)
    try:
        await web.TCPSite(runner, server.host, server.port).start()
        started()
        await stop.wait()
    finally:
        await runner.cleanup()
        for sig in STOP_SIGNALS:
            loop.remove_signal_handler(sig)


def serve(
    argv: list[str], host: str, port: int, token: str, started: Callable[[str], None], *, name: str
) -> None:
    """Serve `argv` (one app per tab) on `host` until a stop signal, for a URL naming `name`;
    `started(url)` once the port is ours.

    Raises OSError when the address cannot be served.
    """
    server = GuardedServer(argv, host, port, token, name=name)
    server.supervisor = watchdog.ensure_started()
    asyncio.run(_serve(server, lambda: started(server.url())))
