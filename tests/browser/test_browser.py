"""`acp-tui serve` in headless Chromium: a tab runs the agents; closing it, or stopping us, ends them."""

from __future__ import annotations

import http.server
import signal
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.browser.conftest import (
    PROMPT,
    READY,
    Served,
    prompts_received,
    wait_gone,
    wait_until,
    write_config,
)

WAIT_MS = 60_000  # two tabs, two apps and a browser on two loaded cores: 25 s seen for one test
pytestmark = pytest.mark.timeout(240)


class Tab:
    """A page on the served URL, and the text of what its app drew (terminal output, escapes and all)."""

    def __init__(self, browser: Any, url: str) -> None:
        self.page = browser.new_page(viewport={"width": 1200, "height": 700})
        self.drawn: list[str] = []
        self.socket: Any = None  # the page's websocket, once it opened it
        self.page.on("websocket", self._watch)
        self.page.goto(url)

    def _watch(self, socket: Any) -> None:
        self.socket = socket
        socket.on("framereceived", self._drawn)

    def _drawn(self, payload: str | bytes) -> None:
        self.drawn.append(payload.decode("utf-8", "replace") if isinstance(payload, bytes) else payload)

    def wait_for(self, text: str) -> None:
        """Until the app has drawn `text` (Playwright dispatches frames only inside its own calls)."""
        if text not in "".join(self.drawn):
            if self.socket is None:
                self.page.wait_for_event("websocket", timeout=WAIT_MS)
            self.socket.wait_for_event(
                "framereceived", predicate=lambda _: text in "".join(self.drawn), timeout=WAIT_MS
            )

    def press(self, key: str) -> None:
        self.page.keyboard.press(key)  # no click first: the page takes the keyboard when it loads


def test_a_tab_runs_the_agents_and_closing_it_ends_them(
    browser: Any, tmp_path: Path, serve_with: Callable[..., Served]
) -> None:
    config, work = write_config(tmp_path, "forever=1", "delay=0.5")  # answers until cancelled
    served = serve_with("--config", str(config), "serve")
    tab = Tab(browser, served.url)
    assert tab.page.url == f"http://{served.netloc}/"  # the token left the address bar
    tab.wait_for(READY)
    tab.press("Enter")
    wait_until(lambda: prompts_received(work), "the agent's file")
    assert prompts_received(work) == [[{"type": "text", "text": PROMPT}]]
    running = served.others()
    assert any("-m acp_tui --config=" in cmd for _, cmd in running)  # the tab's app
    assert any("scripted_agent.py" in cmd for _, cmd in running)  # its agent, still answering

    closed = time.monotonic()
    tab.page.close()
    assert wait_gone([pid for pid, _ in running], 10) == []
    print(f"tab closed -> its app and agents gone: {time.monotonic() - closed:.2f} s")
    assert served.others() == []
    assert served.stop(signal.SIGINT) == 0


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["ctrl+c", "SIGTERM"])
def test_stopping_the_server_ends_every_tab_and_agent(
    browser: Any, tmp_path: Path, serve_with: Callable[..., Served], sig: signal.Signals
) -> None:
    config, work = write_config(tmp_path, "forever=1", "delay=0.5")
    served = serve_with("serve", "--config", str(config))
    tabs = [Tab(browser, served.url) for _ in range(2)]
    for tab in tabs:
        tab.wait_for(READY)
        tab.press("Enter")
    wait_until(lambda: len(prompts_received(work)) == 2, "both agents' prompts")
    running = served.others()
    assert sum("scripted_agent.py" in cmd for _, cmd in running) == 2  # one live agent per tab

    stopped = time.monotonic()
    assert served.stop(sig) == 0
    print(f"{sig.name} -> server, 2 tabs and 2 agents gone: {time.monotonic() - stopped:.2f} s")
    assert wait_gone([pid for pid, _ in running], 1) == []
    for tab in tabs:
        tab.page.close()


def test_the_page_takes_the_keyboard_when_it_loads(
    browser: Any, tmp_path: Path, serve_with: Callable[..., Served]
) -> None:
    config, work = write_config(tmp_path)
    served = serve_with("--config", str(config), "serve")
    tab = Tab(browser, served.url)
    tab.wait_for(READY)
    focused = tab.page.evaluate("document.activeElement.className")
    assert "xterm-helper-textarea" in focused  # where xterm.js reads keys
    tab.page.keyboard.press("Enter")  # never clicked, never focused by hand
    wait_until(lambda: prompts_received(work), "the agent's prompt")
    assert prompts_received(work) == [[{"type": "text", "text": PROMPT}]]
    tab.page.close()


def test_the_token_never_reaches_another_server_of_this_host(
    browser: Any, tmp_path: Path, serve_with: Callable[..., Served]
) -> None:
    """The person opens an agent's dev server in the browser that holds our cookie: it is not sent."""
    received: list[tuple[str, str]] = []  # (Host, Cookie) of each request, the favicon's included

    class DevServer(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            received.append((self.headers.get("Host", ""), self.headers.get("Cookie", "")))
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, format: str, *args: Any) -> None:
            """Quiet."""

    config, _ = write_config(tmp_path)
    served = serve_with("--config", str(config), "serve")
    other = http.server.HTTPServer(("127.0.0.1", 0), DevServer)
    thread = threading.Thread(target=other.serve_forever)
    thread.start()
    context = browser.new_context()
    try:
        page = context.new_page()
        page.goto(served.url)
        assert [cookie["value"] for cookie in context.cookies()] == [served.token]  # the browser holds it
        for host in ("127.0.0.1", "localhost"):
            page.goto(f"http://{host}:{other.server_address[1]}/preview")
    finally:
        context.close()
        other.shutdown()
        thread.join()
        other.server_close()
    assert {host.split(":")[0] for host, _ in received} == {"127.0.0.1", "localhost"}
    assert [cookie for _, cookie in received if served.token in cookie] == []
