"""`acp-tui serve`: the supervisor in browser tabs (the `web` extra), one app with its own runs per tab.

Loaded with every command: the rest (the server, even `secrets`: 14 ms) is imported when it serves."""

from __future__ import annotations

import ipaddress
import os
import sys
from pathlib import Path
from typing import Any

import click

from acp_tui.cli.common import AGENT_HELP, config_option, settings_of
from acp_tui.settings.logs import route_logging, secrets_of

NO_WEB_EXTRA = "needs textual-serve: pip install 'acp-tui[web]'"


def is_loopback(host: str) -> bool:
    try:
        return host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def is_wildcard(host: str) -> bool:
    try:
        return not host or ipaddress.ip_address(host).is_unspecified
    except ValueError:
        return False


def tab_argv(ctx: click.Context, config: Path | None, agents: tuple[str, ...]) -> list[str]:
    """What a terminal would run for the same options: `python -m acp_tui [--config=..] [--agent=..]`."""
    parent: dict[str, Any] = ctx.find_root().obj or {}
    config = config or parent.get("config")
    argv = [sys.executable, "-m", "acp_tui"]
    if config is not None:
        argv.append(f"--config={config.absolute()}")
    argv += [f"--agent={spec}" for spec in (*parent.get("agents", ()), *agents)]
    return argv


@click.command("serve")
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    help="The address to serve on. Any other than loopback is reachable from the network, where the"
    " token in the URL is all that protects the agents.",
)
@click.option("--port", type=click.IntRange(1, 65535), default=8000, show_default=True)
@config_option()
@click.option("--agent", "agents", multiple=True, metavar="SPEC", help=AGENT_HELP)
@click.pass_context
def serve_command(
    ctx: click.Context, host: str, port: int, config: Path | None, agents: tuple[str, ...]
) -> int:
    """Serve the supervisor to browser tabs, for whoever holds the printed URL (it has a new token
    at each start). Each tab is its own app with its own runs; closing the tab disposes them, and
    ctrl+c ends every tab and every agent.

    Needs the web extra: pip install 'acp-tui[web]'.
    """
    settings = settings_of(ctx, config, agents)  # a bad config is one line here, not one per tab
    try:
        from acp_tui.web.serve import serve
    except ImportError:
        raise click.UsageError(NO_WEB_EXTRA, ctx) from None
    if is_wildcard(host):
        raise click.UsageError(
            f"--host {host!r}: give the address this machine is reached at (the URL and the Host"
            " check need it), not a wildcard",
            ctx,
        )
    import secrets

    token = secrets.token_urlsafe(32)
    # A host of our own on loopback: a browser sends the cookie to no other server of this machine.
    name = f"acp-tui-{secrets.token_hex(8)}.localhost" if is_loopback(host) else host
    route_logging([*secrets_of(settings.presets), token])
    if not is_loopback(host):
        click.echo(
            f"acp-tui serve: warning: {host} is reachable from the network: the token in the URL is all"
            " that protects the agents (plain http carries it unencrypted, and your browser sends it to"
            f" every server at {host} you open)",
            err=True,
        )

    def started(url: str) -> None:
        click.echo(f"Open {url} in a browser (ctrl+c ends every tab and its agents)")
        sys.stdout.flush()

    try:
        serve(tab_argv(ctx, config, agents), host, port, token, started, name=name)
    except OSError as exc:
        reason = os.strerror(exc.errno) if exc.errno else str(exc)
        raise click.ClickException(f"cannot serve on {host}:{port}: {reason}") from None
    return 0
