"""`acp-tui sessions`: the app's sessions kept under the state folder, newest first; with `--agent
NAME`, the sessions that agent keeps (`session/list`)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import click

from acp_tui.cli.common import AGENT_HELP, config_option, done, settings_of
from acp_tui.settings import paths
from acp_tui.settings.logs import route_logging, secrets_of


@click.command("sessions")
@click.option(
    "--agent",
    "agent",
    metavar="SPEC",
    help="The sessions this agent keeps (session/list), not the app's. "
    + AGENT_HELP.removesuffix(" Repeatable."),
)
@config_option()
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.pass_context
def sessions_command(ctx: click.Context, agent: str | None, config: Path | None, fmt: str) -> int:
    """List the app's saved sessions (id, started, rounds, agents, the first prompt), newest
    first; `acp-tui --session ID` reopens one.

    With --agent: the sessions that agent keeps (id, title, cwd, last activity), as it lists them;
    `acp-tui run --agent NAME --load ID --prompt P` continues one. Exit status 1 when the agent
    cannot list them (it offers no session/list, or failed), said in one line.
    """
    if agent is not None:
        return _agent_sessions(ctx, agent, config, fmt)
    from acp_tui.core.text import one_line
    from acp_tui.reports.records import json_line
    from acp_tui.session.saved import SessionStore

    settings = settings_of(ctx, config, ())
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


def _agent_sessions(ctx: click.Context, agent: str, config: Path | None, fmt: str) -> int:
    import asyncio

    from acp_tui.acp.agent_sessions import agent_sessions
    from acp_tui.core.text import one_line
    from acp_tui.reports.records import json_line

    preset = settings_of(ctx, config, (agent,)).selected_presets()[-1]
    route_logging(secrets_of([preset]))
    name = one_line(preset.name)
    found, error = asyncio.run(
        agent_sessions(
            preset.provider_config(policy="reject"),
            lambda line: click.echo(f"[{name}] {one_line(line)}", err=True),
            provider=preset.provider,
        )
    )
    done.headless = True
    if error is not None:
        click.echo(f"acp-tui sessions: {one_line(error)}", err=True)
        return 1
    for session in found:
        if fmt == "json":
            listed = {
                "id": session.session_id,
                "title": session.title,
                "cwd": session.cwd,
                "updated": session.updated,
            }
            click.echo(json_line(listed))
        else:
            title = one_line(session.title, 60) if session.title else "(untitled)"
            click.echo(
                f"{one_line(session.session_id)}  {one_line(session.updated or '-', 24)}"
                f"  {one_line(session.cwd)}  {title}"
            )
    if not found and fmt == "text":
        click.echo(f"{name} keeps no session.", err=True)
    return 0
