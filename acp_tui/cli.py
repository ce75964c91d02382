"""The command line: `acp-tui` opens the supervisor, `acp-tui run` fans a prompt out without a screen.

Start-up cost matters (`run` is benchmarked against a bare ACP client), so nothing heavy is imported
here: the UI is imported inside the app command, the headless runner inside `run`, and both only
after the command line and the presets were found valid. Every usage or config error is one line on
stderr and exit status 2, before anything is spawned.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from . import __version__
from .config import AgentPreset, ConfigError, Settings, load_settings, parse_option_specs, with_options
from .lab.commands import policy, replay
from .logs import route_logging

if TYPE_CHECKING:
    from .headless import Job
    from .isolation import IsolationPlan

EXIT_INTERRUPTED = 130

AGENT_HELP = "An agent: a preset NAME, or 'NAME=COMMAND ARGS' for a new one. Repeatable."


_POINT_AT_HELP = (click.MissingParameter,)  # e.g. `acp-tui run` with no --prompt


class _OneLineErrors(click.Group):
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
            message = " ".join(exc.format_message().split())
            if isinstance(exc, _POINT_AT_HELP):  # the command line itself was wrong: say where to look
                message += f" (see '{where} --help')"
            click.echo(f"{where}: error: {message}", err=True)
            sys.exit(exc.exit_code)
        except click.Abort:  # Ctrl-C before any child existed: nothing to clean up
            click.echo("acp-tui: interrupted", err=True)
            sys.exit(EXIT_INTERRUPTED)
        status = code if isinstance(code, int) else 0
        if args is None and _headless_done:
            _exit_now(status)
        sys.exit(status)


# Set once `run` has disposed every run: all that is left is the interpreter's teardown.
_headless_done = False


def _exit_now(status: int) -> None:
    """Leave without tearing the interpreter down.

    With the protocol SDK (pydantic) loaded, the teardown costs 0.1-0.2 s, and `run` is measured by
    its wall time. By now every child is gone and only our output is left to flush. Only for a real
    process (`args is None`): a test runner calling `main([...])` carries on.
    """
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    os._exit(status)


def _settings(ctx: click.Context, config: Path | None, agents: Sequence[str]) -> Settings:
    try:
        return load_settings(config, agents)
    except ConfigError as exc:
        raise click.UsageError(str(exc), ctx) from None


@click.group(
    name="acp-tui",
    cls=_OneLineErrors,
    invoke_without_command=True,
    context_settings={"help_option_names": ["-h", "--help"]},  # inherited by every subcommand
)
@click.option(
    "--config",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Agent presets (TOML). Default: agents.toml in the user config dir, else the demo agents.",
)
@click.option("--agent", "agents", multiple=True, metavar="SPEC", help=AGENT_HELP)
@click.version_option(__version__, prog_name="acp-tui")
@click.pass_context
def main(ctx: click.Context, config: Path | None, agents: tuple[str, ...]) -> int | None:
    """Supervise ACP agents side by side: one prompt, several agents, one Cancel each.

    With no command, opens the supervisor on the configured presets (the bundled demo agents when
    there is no config).
    """
    if ctx.invoked_subcommand is not None:
        ctx.obj = {"config": config, "agents": agents}  # `acp-tui --config X run ...` means it too
        return None
    settings = _settings(ctx, config, agents)
    route_logging(_secrets(settings.presets))
    from .ui.app import make_app

    app = make_app(settings)
    app.run()
    return app.return_code or 0


@main.command("run")
@click.option("--prompt", required=True, metavar="TEXT", help="The prompt; '-' reads it from stdin.")
@click.option(
    "--agent",
    "agents",
    multiple=True,
    metavar="SPEC",
    help=AGENT_HELP + " Only the agents named run; default: every preset.",
)
@click.option(
    "--config",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Agent presets (TOML). Default: agents.toml in the user config dir, else the demo agents.",
)
@click.option(
    "--policy",
    metavar="NAME",
    help="Permission policy for every agent: reject, allow or a named policy of the config.",
)
@click.option(
    "--cwd",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="Working directory of every agent (default: each preset's, else the current one).",
)
@click.option("--env", "env", multiple=True, metavar="KEY=VALUE", help="Extra environment for every agent.")
@click.option(
    "--option",
    "options",
    multiple=True,
    metavar="ID=VALUE",
    help="A session config option for every agent (e.g. mode=ask), set before the prompt. Repeatable.",
)
@click.option(
    "--timeout",
    type=click.FloatRange(min=0, min_open=True),
    metavar="SECONDS",
    help="Dispose a run that outlives this; it ends aborted.",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json", "markdown"]),
    default="text",
    show_default=True,
    help="markdown: one comparison report of every run, once all have ended.",
)
@click.option(
    "--trace",
    type=click.Path(file_okay=False, path_type=Path),
    metavar="DIR",
    help="Write every JSON-RPC frame of each run to DIR/<name>-<stamp>-<pid>.jsonl.",
)
@click.option(
    "--worktree",
    is_flag=True,
    help="Run each agent in its own git worktree of its cwd's repository (uncommitted changes are not "
    "carried); record what it changed.",
)
@click.option("--base", metavar="REF", help="With --worktree: the commit to start at (default: HEAD).")
@click.option("--keep-worktrees", is_flag=True, help="With --worktree: leave the worktrees in place.")
@click.pass_context
def run_command(
    ctx: click.Context,
    prompt: str,
    agents: tuple[str, ...],
    config: Path | None,
    policy: str | None,
    cwd: Path | None,
    env: tuple[str, ...],
    options: tuple[str, ...],
    timeout: float | None,
    fmt: str,
    trace: Path | None,
    worktree: bool,
    base: str | None,
    keep_worktrees: bool,
) -> int:
    """Run a prompt on several agents at once, without a screen.

    Prints each run as it finishes (--format json: one JSON object per line, nothing else on
    stdout) and forwards each agent's stderr, prefixed with its name. Exit status: 0 when every run
    completed, 1 when any did not, 2 for a usage or config error, 130 when interrupted.
    """
    parent: dict[str, Any] = ctx.obj or {}
    if prompt == "-":
        prompt = sys.stdin.read().rstrip("\n")
    if not prompt.strip():
        raise click.UsageError("the prompt is empty", ctx)
    overlay = _parse_env(ctx, env)
    try:
        chosen_options = parse_option_specs(options)
    except ConfigError as exc:
        raise click.UsageError(str(exc), ctx) from None
    settings = _settings(ctx, config or parent.get("config"), (*parent.get("agents", ()), *agents))
    if policy == "ask":
        raise click.UsageError(
            "--policy ask needs someone to answer each request: use it in the app (acp-tui)", ctx
        )
    if policy is not None and policy not in settings.policy_names:
        known = [name for name in settings.policy_names if name != "ask"]
        raise click.UsageError(
            f'--policy "{policy}": unknown policy (expected one of: {", ".join(known)})', ctx
        )
    trace_dir = None
    if trace is not None:
        try:
            trace.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise click.UsageError(f"--trace {trace}: {exc.strerror or exc}", ctx) from None
        trace_dir = os.path.abspath(trace)

    from .headless import Job

    jobs = []
    for preset in settings.selected_presets():
        if overlay:
            preset = replace(preset, env={**preset.env, **overlay})
        preset = with_options(preset, chosen_options)
        try:
            provider_config = settings.provider_config(preset, policy_override=policy, trace_dir=trace_dir)
        except ConfigError as exc:
            raise click.UsageError(f"{exc}; choose another with --policy", ctx) from None
        jobs.append(Job(preset, provider_config, policy or preset.policy))

    isolation = _isolation_plan(ctx, jobs, cwd, worktree=worktree, base=base, keep=keep_worktrees)
    route_logging(_secrets(job.preset for job in jobs))
    from .headless import run_jobs

    status = run_jobs(
        jobs,
        prompt,
        cwd=os.path.abspath(cwd) if cwd is not None else None,
        timeout=timeout,
        fmt="json" if fmt == "json" else "markdown" if fmt == "markdown" else "text",
        isolation=isolation,
    )
    global _headless_done
    _headless_done = True
    return status


@main.command("probe")
@click.option("--agent", "agent", required=True, metavar="SPEC", help=AGENT_HELP.removesuffix(" Repeatable."))
@click.option(
    "--config",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Agent presets (TOML). Default: agents.toml in the user config dir, else the demo agents.",
)
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.pass_context
def probe_command(ctx: click.Context, agent: str, config: Path | None, fmt: str) -> int:
    """Start an agent, set a session up in an empty temporary directory, print what it is and
    offers (modes, config options, login methods), and dispose it. No prompt is sent.

    Exit status: 0 when the session was created, 1 when not (the error and the login methods are
    still printed), 2 for a usage or config error.
    """
    parent: dict[str, Any] = ctx.obj or {}
    settings = _settings(ctx, config or parent.get("config"), (*parent.get("agents", ()), agent))
    preset = settings.selected_presets()[-1]
    route_logging(_secrets([preset]))
    from .probe import probe

    status = probe(preset.provider_config(policy="reject"), fmt=fmt)
    global _headless_done
    _headless_done = True
    return status


main.add_command(replay)
main.add_command(policy)


def _isolation_plan(
    ctx: click.Context, jobs: Sequence[Job], cwd: Path | None, *, worktree: bool, base: str | None, keep: bool
) -> IsolationPlan | None:
    """`--worktree` (or a preset's `isolation = "worktree"`): every isolated run's checkout found
    (and pruned) before anything is spawned, else exit 2."""
    isolated = [worktree or job.preset.isolation == "worktree" for job in jobs]
    if not any(isolated):
        if base is not None or keep:
            raise click.UsageError("--base and --keep-worktrees need --worktree", ctx)
        return None
    from .isolation import IsolationError, plan

    # The demo's scratch dir only keeps its writes out of the user's checkout: a worktree does that.
    cwds = [
        os.path.abspath(cwd or (None if job.preset.create_cwd else job.preset.cwd) or os.getcwd())
        if isolated_job
        else None
        for job, isolated_job in zip(jobs, isolated, strict=True)
    ]
    try:
        return plan(cwds, base=base, keep=keep)
    except IsolationError as exc:
        raise click.UsageError(f"--worktree: {exc}", ctx) from None


def _secrets(presets: Iterable[AgentPreset]) -> list[str]:
    return [value for preset in presets for value in preset.secrets()]


def _parse_env(ctx: click.Context, pairs: Sequence[str]) -> dict[str, str]:
    overlay = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key or any(c.isspace() for c in key):
            raise click.UsageError(f'--env "{pair}": expected KEY=VALUE', ctx)
        overlay[key] = value
    return overlay


from .isolation_cli import apply_command  # noqa: E402 - after `main`, which it is added to

main.add_command(apply_command)
