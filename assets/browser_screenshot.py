"""Regenerate the README's browser picture: `acp-tui serve` on the demo agents, in headless Chromium.

python assets/browser_screenshot.py   (needs '.[test]' and Debian's chromium)
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

from playwright.sync_api import sync_playwright

OUT = Path(__file__).with_name("acp-tui-browser.png")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]


def main() -> None:
    with tempfile.TemporaryDirectory() as home, socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
        probe.close()
        dirs = {"HOME": home, "XDG_CONFIG_HOME": f"{home}/config", "XDG_CACHE_HOME": f"{home}/cache"}
        env = {**os.environ, **dirs}  # no user config: the demo agents
        server = subprocess.Popen(
            [sys.executable, "-m", "acp_tui", "serve", "--port", str(port)],
            env=env,
            cwd=home,
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            assert server.stdout is not None
            found = re.search(r"http://\S+", server.stdout.readline())
            assert found, "no URL printed"
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
                page = browser.new_page(viewport={"width": 1280, "height": 720})
                drawn: list[str] = []
                page.on("websocket", lambda ws: ws.on("framereceived", lambda p: drawn.append(str(p))))
                page.goto(found[0])

                def wait_for(text: str) -> None:
                    while text not in "".join(drawn):
                        page.wait_for_timeout(100)

                wait_for("no run yet")
                page.focus(".xterm-helper-textarea")
                page.keyboard.press("Enter")
                wait_for("2 completed")  # the tortoise still answering
                page.wait_for_timeout(1500)  # let it say a little more
                page.screenshot(path=str(OUT))
                browser.close()
        finally:
            server.send_signal(signal.SIGINT)
            server.wait(20)


if __name__ == "__main__":
    main()
