"""`acp-tui serve` over plain HTTP (no browser): the token, the Host and Origin checks, the command line."""

from __future__ import annotations

import asyncio
import http.client
import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.browser.conftest import READY, Served, free_port, prompts_received, wait_gone, write_config
from tests.hostile.support import eventually

pytestmark = pytest.mark.usefixtures("web_extra")

WS_UPGRADE = {
    "Connection": "Upgrade",
    "Upgrade": "websocket",
    "Sec-WebSocket-Version": "13",
    "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==",
}


def get(served: Served, path: str, **headers: str) -> http.client.HTTPResponse:
    connection = http.client.HTTPConnection("127.0.0.1", served.port, timeout=10)
    connection.request("GET", path, headers={"Host": served.netloc, **headers})
    response = connection.getresponse()
    response.read()
    connection.close()
    return response


def tab_socket(session: Any, served: Served, query: str = "") -> Any:
    """The websocket a tab opens: to 127.0.0.1, our host's name in Host (aiohttp resolves no
    `*.localhost` name itself)."""
    url = f"ws://127.0.0.1:{served.port}/ws?token={served.token}{query}"
    return session.ws_connect(url, headers={"Host": served.netloc})


@pytest.fixture
def served(tmp_path: Path, serve_with: Callable[..., Served]) -> Served:
    config, _ = write_config(tmp_path)
    return serve_with("serve", "--config", str(config))


def test_every_request_without_the_right_token_or_host_is_refused(served: Served) -> None:
    token, port, cookie = served.token, served.port, f"acp-tui-{served.port}"
    other = f"http://{served.name}:{free_port()}"
    refused = {
        "no token": get(served, "/"),
        "a wrong token": get(served, "/?token=wrong"),
        "a token one character short": get(served, f"/?token={token[:-1]}"),
        "a non-ASCII token": get(served, "/?token=%C3%A9t%C3%A9"),
        "a wrong cookie": get(served, "/", Cookie=f"{cookie}=wrong"),
        "a static file without the token": get(served, "/static/js/textual.js"),
        "the websocket without the token": get(served, "/ws", **WS_UPGRADE),
        "the websocket with a wrong token": get(served, "/ws?token=wrong", **WS_UPGRADE),
        "the websocket from another page": get(served, f"/ws?token={token}", Origin=other, **WS_UPGRADE),
        "Host: evil.example (DNS rebinding)": get(served, f"/?token={token}", Host="evil.example"),
        "Host: evil.example on the websocket": get(
            served, f"/ws?token={token}", Host="evil.example", **WS_UPGRADE
        ),
        "Host: localhost (not the host served)": get(served, f"/?token={token}", Host=f"localhost:{port}"),
        "Host: 127.0.0.1 (not the host served)": get(served, f"/?token={token}", Host=f"127.0.0.1:{port}"),
        "the cookie, stolen by another server of this host": get(
            served, "/", Host=f"127.0.0.1:{port}", Cookie=f"{cookie}={token}"
        ),
        "Host: another port": get(served, f"/?token={token}", Host=f"{served.name}:1"),
    }
    assert {case: r.status for case, r in refused.items()} == dict.fromkeys(refused, 403)
    assert not served.others()  # nothing was started for any of them


def test_the_token_is_traded_for_a_cookie_and_leaves_the_address(served: Served) -> None:
    first = get(served, f"/?token={served.token}&fontsize=18")
    assert first.status == 303
    assert first.headers["Location"] == "/?fontsize=18"
    cookie = first.headers["Set-Cookie"]
    assert cookie.startswith(f"acp-tui-{served.port}={served.token};")
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie
    assert "domain=" not in cookie.lower()  # for our host only: none of its subdomains, no other host

    connection = http.client.HTTPConnection("127.0.0.1", served.port, timeout=10)
    connection.request("GET", "/", headers={"Host": served.netloc, "Cookie": cookie.split(";")[0]})
    page = connection.getresponse()
    body = page.read().decode()
    connection.close()
    assert page.status == 200
    assert served.token not in body  # the page's links (static files, websocket) carry no token
    assert f'data-session-websocket-url="ws://{served.netloc}/ws"' in body
    assert "connect-src 'self'" in page.headers["Content-Security-Policy"]
    assert page.headers["Referrer-Policy"] == "no-referrer"
    assert get(served, f"/static/js/textual.js?token={served.token}").status == 200


def test_a_new_token_at_each_start(tmp_path: Path, serve_with: Callable[..., Served]) -> None:
    config, _ = write_config(tmp_path)
    first = serve_with("serve", "--config", str(config))
    assert first.stop() == 0
    second = serve_with("serve", "--config", str(config), port=first.port)
    assert second.token != first.token
    assert get(second, f"/?token={first.token}").status == 403
    assert get(second, f"/?token={second.token}").status == 303


@pytest.mark.parametrize("where", ["before serve", "after serve"])
async def test_a_tab_is_the_app_with_our_options_and_ends_with_its_websocket(
    tmp_path: Path, serve_with: Callable[..., Served], where: str
) -> None:
    """`acp-tui --config X serve` and `acp-tui serve --config X` both give each tab's app the options."""
    import aiohttp

    config, _ = write_config(tmp_path, names=("scribe", "echo"))
    options = ("--config", str(config), "--agent", "echo")
    served = serve_with(*options, "serve") if where == "before serve" else serve_with("serve", *options)
    async with aiohttp.ClientSession() as session, tab_socket(session, served, "&width=100&height=30") as ws:
        first = await ws.receive(timeout=60)
        assert first.type == aiohttp.WSMsgType.BINARY  # the app is drawing
        tabs = served.others()
        # The argv as the kernel keeps it (a path may hold spaces), the program by where it leads.
        [(program, *args)] = [Path(f"/proc/{pid}/cmdline").read_text().split("\0")[:-1] for pid, _ in tabs]
        assert Path(program).resolve() == Path(sys.executable).resolve()
        assert args == ["-m", "acp_tui", f"--config={config}", "--agent=echo"]
        await ws.send_str("not the page's protocol")  # the server logs why the tab ended, and ends it
        assert wait_gone([pid for pid, _ in tabs], 10) == []
    logs = [path for path in served.root.rglob("*.log") if path.is_file()]
    assert logs, "the failed session was logged"
    for path in logs:
        assert served.token not in path.read_text(encoding="utf-8")


ACP_TUI = str(Path(sys.executable).parent / "acp-tui")


def run_serve(
    tmp_path: Path, *args: str, argv: tuple[str, ...] = (ACP_TUI,)
) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HOME": str(tmp_path), "XDG_STATE_HOME": str(tmp_path / "state")}
    return subprocess.run(
        [*argv, "serve", *args],
        capture_output=True,
        text=True,
        timeout=30,
        env=env,
        stdin=subprocess.DEVNULL,
        check=False,
    )


def test_without_the_web_extra_one_line_and_exit_2(tmp_path: Path) -> None:
    no_extra = "import sys; sys.modules['textual_serve'] = None; from acp_tui.cli import main; main()"
    done = run_serve(tmp_path, argv=(sys.executable, "-c", no_extra))
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.count("\n") == 1
    assert "pip install 'acp-tui[web]'" in done.stderr


def test_a_wildcard_address_is_refused(tmp_path: Path) -> None:
    done = run_serve(tmp_path, "--host", "0.0.0.0")
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.startswith("acp-tui serve: error: --host '0.0.0.0': give the address")
    assert done.stderr.count("\n") == 1


def test_an_address_off_loopback_warns_that_the_token_is_all_that_protects(tmp_path: Path) -> None:
    port = free_port()
    done = run_serve(tmp_path, "--host", "192.0.2.1", "--port", str(port))  # TEST-NET: not ours to bind
    assert done.returncode == 1
    warning, error = done.stderr.splitlines()
    assert warning.startswith("acp-tui serve: warning: 192.0.2.1 is reachable from the network: the token")
    assert error == f"acp-tui: error: cannot serve on 192.0.2.1:{port}: Cannot assign requested address"
    assert done.stdout == ""  # no URL: nothing is served


def test_a_busy_port_is_one_line(tmp_path: Path, served: Served) -> None:
    done = run_serve(tmp_path, "--port", str(served.port))
    assert done.returncode == 1
    assert done.stderr == f"acp-tui: error: cannot serve on 127.0.0.1:{served.port}: Address already in use\n"


async def test_if_the_server_is_killed_its_watchdog_ends_every_tab_and_agent(
    tmp_path: Path, serve_with: Callable[..., Served]
) -> None:
    """SIGKILL leaves no cleanup to us: our watchdog ends the tabs' apps, theirs end the agents."""
    import aiohttp

    config, work = write_config(tmp_path, "forever=1", "delay=0.5")
    served = serve_with("serve", "--config", str(config))
    async with aiohttp.ClientSession() as session, tab_socket(session, served, "&width=120&height=40") as ws:
        await drawn(ws, READY)
        await ws.send_json(["stdin", "\r"])  # Enter, as the page sends it
        await eventually(lambda: prompts_received(work), what="the agent's prompt")
        running = served.others()
        assert any("scripted_agent.py" in cmd for _, cmd in running)
        served.process.kill()
        served.process.wait()
        assert wait_gone([pid for pid, _ in running], 10) == []


async def drawn(ws: Any, text: str) -> None:
    """Until the app has drawn `text` (terminal output, escapes and all) on the websocket."""
    import aiohttp

    seen = ""
    while text not in seen:
        message = await ws.receive(timeout=60)
        assert message.type == aiohttp.WSMsgType.BINARY, message
        seen += message.data.decode("utf-8", "replace")


async def test_a_tab_whose_app_fails_ends_its_page_and_says_why_on_our_stderr(
    tmp_path: Path, serve_with: Callable[..., Served]
) -> None:
    import aiohttp

    config, _ = write_config(tmp_path)
    served = serve_with("serve", "--config", str(config))
    config.write_text("bad = 1\n" + config.read_text())  # the tabs opened from now on fail at start
    async with aiohttp.ClientSession() as session, tab_socket(session, served) as ws:
        message = await ws.receive(timeout=60)
        assert message.type == aiohttp.WSMsgType.CLOSE  # the page says "Session ended"
    assert served.stop() == 0
    _, err = served.process.communicate()
    assert re.fullmatch(r'acp-tui serve: tab \d+: python -m acp_tui: error: .*unknown key "bad".*\n', err)


async def test_a_tabs_stderr_is_shown_as_text(capsys: pytest.CaptureFixture[str]) -> None:
    from acp_tui.web.serve import forward_lines

    stream = asyncio.StreamReader(limit=100)
    stream.feed_data(b"plain\n\x1b[2J\x1b]0;title\x07 \xff\n" + b"x" * 500 + b"\nlast, no newline")
    stream.feed_eof()
    await forward_lines(stream, "tab: ")
    assert capsys.readouterr().err.splitlines() == [
        "tab: plain",
        "tab: \\x1b[2J\\x1b]0;title\\x07 \ufffd",
        "tab: (a line too long to show)",
        "tab: last, no newline",
    ]
