"""The command line: `acp-tui` opens the supervisor, `acp-tui run` fans a prompt out without a screen.

Start-up cost matters (`run` is benchmarked against a bare ACP client), so nothing heavy is imported
here: each subcommand's module when that command is invoked (`SUBCOMMANDS`), the UI inside the app
command, the headless runner inside `run`, and both only after the command line and the presets
were found valid. Every usage or config error is one line on
stderr and exit status 2, before anything is spawned."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import click

from acp_tui import __version__
from acp_tui.cli.common import AGENT_HELP, config_option, done, exit_now, settings_of
from acp_tui.core.text import one_line
from acp_tui.ui.launch import interrupted

_POINT_AT_HELP = (click.MissingParameter,)  # e.g. `acp-tui run` with no --prompt

# Each subcommand by name: "module:attribute", imported only when that command is invoked (or
# `--help` lists them), so that the supervisor's first frame pays for none of them.
SUBCOMMANDS = {
    "apply": "acp_tui.cli.apply:apply_command",
    "policy": "acp_tui.cli.lab:policy",
    "probe": "acp_tui.cli.probe:probe_command",
    "replay": "acp_tui.cli.lab:replay",
    "run": "acp_tui.cli.run:run_command",
    "schema": "acp_tui.cli.schema:schema_command",
    "serve": "acp_tui.cli.serve:serve_command",
    "sessions": "acp_tui.cli.sessions:sessions_command",
}


class _LazyGroup(click.Group):
    """Click's documented lazy group: `get_command` imports a subcommand's module on first use."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(SUBCOMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in SUBCOMMANDS and cmd_name not in self.commands:
            module, attribute = SUBCOMMANDS[cmd_name].split(":")
            command: click.Command = getattr(importlib.import_module(module), attribute)
            self.add_command(command)
        return super().get_command(ctx, cmd_name)


class _OneLineErrors(_LazyGroup):
    """Click's usual error display is a usage block plus a hint; ours is one line, no traceback."""

    def main(
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> Any:
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        try:
            code = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except click.ClickException as exc:
            where = exc.ctx.command_path if isinstance(exc, click.UsageError) and exc.ctx else "acp-tui"
            message = one_line(exc.format_message(), shown=False)
            if isinstance(exc, _POINT_AT_HELP):  # the command line itself was wrong: say where to look
                message += f" (see '{where} --help')"
            click.echo(f"{where}: error: {message}", err=True)
            sys.exit(exc.exit_code)
        except click.Abort:  # Ctrl-C before any child existed
            interrupted()
        status = code if isinstance(code, int) else 0
        if args is None and done.headless:
            exit_now(status)
        sys.exit(status)


@click.group(
    name="acp-tui",
    cls=_OneLineErrors,
    invoke_without_command=True,
    context_settings={"help_option_names": ["-h", "--help"]},  # inherited by every subcommand
)
@config_option()
@click.option("--agent", "agents", multiple=True, metavar="SPEC", help=AGENT_HELP)
@click.option(
    "--session",
    "session_id",
    metavar="ID",
    help="Reopen a saved session (acp-tui sessions lists them): its panes as they were, follow-ups "
    "continue its turns.",
)
@click.version_option(__version__, prog_name="acp-tui")
@click.pass_context
def main(
    ctx: click.Context, config: Path | None, agents: tuple[str, ...], session_id: str | None
) -> int | None:
    """Supervise ACP agents side by side: one prompt, several agents, one Cancel each.

    With no command, opens the supervisor on the configured presets (the bundled demo agents when
    there is no config).
    """
    if ctx.invoked_subcommand is not None:
        ctx.obj = {"config": config, "agents": agents}  # `acp-tui --config X run ...` means it too
        return None
    from acp_tui.session.saved import SessionError
    from acp_tui.ui.launch import supervisor

    try:
        app = supervisor(lambda: settings_of(ctx, config, agents), session_id)
    except SessionError as exc:
        raise click.UsageError(str(exc), ctx) from None
    app.run()
    return app.return_code or 0
