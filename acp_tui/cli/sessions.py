"""`acp-tui sessions`: the app's sessions kept under the state folder, newest first."""

from __future__ import annotations

import dataclasses

import click

from acp_tui.cli.common import settings_of
from acp_tui.settings import paths


@click.command("sessions")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.pass_context
def sessions_command(ctx: click.Context, fmt: str) -> int:
    """List the app's saved sessions (id, started, rounds, agents, the first prompt), newest
    first; `acp-tui --session ID` reopens one."""
    from acp_tui.core.text import one_line
    from acp_tui.reports.records import json_line
    from acp_tui.session.saved import SessionStore

    settings = settings_of(ctx, None, ())
    found = SessionStore(paths.sessions_dir(), keep=settings.keep_sessions).summaries()
    for summary in found:
        if fmt == "json":
            click.echo(json_line(dataclasses.asdict(summary)))
        else:
            agents = ", ".join(one_line(agent, 24) for agent in summary.agents)
            rounds = f"{summary.rounds} round{'s' * (summary.rounds != 1)}"
            click.echo(
                f"{summary.id}  {one_line(summary.started, 24)}  {rounds}"
                f"  {agents}  {one_line(summary.first_prompt, 60)}"
            )
    if not found and fmt == "text":
        click.echo("No saved session yet: the app keeps each of its sessions as it goes.", err=True)
    return 0
