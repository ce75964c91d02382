"""`acp-tui probe`: start an agent, set a session up in an empty temporary directory, say what it offers."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import click

from acp_tui.cli.common import (
    AGENT_HELP,
    config_option,
    done,
    remote_option,
    settings_of,
    with_remote,
)
from acp_tui.settings.logs import route_logging, secrets_of


@click.command("probe")
@click.option("--agent", "agent", required=True, metavar="SPEC", help=AGENT_HELP.removesuffix(" Repeatable."))
@config_option()
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option(
    "--sandbox",
    is_flag=True,
    help='Confine the agent with bubblewrap, as sandbox = "workspace": does it still start?',
)
@remote_option()
@click.pass_context
def probe_command(
    ctx: click.Context, agent: str, config: Path | None, fmt: str, sandbox: bool, remote: str | None
) -> int:
    """Start an agent, set a session up in an empty temporary directory, print what it is and
    offers (modes, config options, login methods; an A2A agent's card: its skills), and dispose
    it. No prompt is sent.

    Exit status: 0 when the session was created, 1 when not (the error and the login methods are
    still printed), 2 for a usage or config error.
    """
    settings = settings_of(ctx, config, (agent,))
    preset = with_remote(ctx, settings.selected_presets()[-1], remote)
    if sandbox:
        preset = replace(preset, sandbox="workspace")
    route_logging(secrets_of([preset]))
    from acp_tui.acp.probe import probe
    from acp_tui.session.providers import describer_for

    describe = describer_for(preset.provider)
    status = probe(preset.provider_config(policy="reject"), fmt=fmt, describe=describe)
    done.headless = True
    return status
