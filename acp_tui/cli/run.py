"""`acp-tui run`: a prompt fanned out to several agents, without a screen."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

import click

from acp_tui.cli.common import (
    AGENT_HELP,
    PositiveNumber,
    config_option,
    done,
    remote_option,
    settings_of,
    usage_errors,
    with_remote,
)
from acp_tui.settings.logs import route_logging, secrets_of
from acp_tui.settings.presets import parse_option_specs, with_options
from acp_tui.settings.schema import ConfigError

if TYPE_CHECKING:
    from acp_tui.reports.records import RunRecord
    from acp_tui.session.fanout import Job
    from acp_tui.workspace.worktrees import IsolationPlan


@click.command("run")
@click.option("--prompt", required=True, metavar="TEXT", help="The prompt; '-' reads it from stdin.")
@click.option(
    "--continue",
    "continue_file",
    type=click.Path(dir_okay=False, allow_dash=True, path_type=Path),
    metavar="FILE",
    help="Follow up on every run recorded in FILE (records of --format json, or an export's .jsonl; "
    "for each session its latest turn): each continues its agent's session in a fresh child, in the "
    "same cwd (its worktree, kept with --keep-worktrees).",
)
@click.option(
    "--load",
    "load_session",
    metavar="SESSION_ID",
    help="Continue the agent's own session SESSION_ID (`acp-tui sessions --agent NAME` lists them) in a "
    "fresh process: session/resume, else session/load. Takes exactly one --agent.",
)
@click.option(
    "--agent",
    "agents",
    multiple=True,
    metavar="SPEC",
    help=AGENT_HELP + " Only the agents named run; default: every preset.",
)
@config_option()
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
    type=PositiveNumber(),
    metavar="SECONDS",
    help="Dispose a run that outlives this; it ends aborted.",
)
@click.option(
    "--budget-usd",
    type=PositiveNumber(),
    metavar="AMOUNT",
    help="Cancel a run once the cost its agent reports passes AMOUNT US dollars (every agent of this "
    "run; it ends aborted, its error naming the budget).",
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
@click.option(
    "--sandbox",
    is_flag=True,
    help='Confine every agent to its cwd (or worktree) with bubblewrap, as sandbox = "workspace".',
)
@remote_option()
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
    sandbox: bool,
    continue_file: Path | None,
    load_session: str | None,
    budget_usd: float | None,
    remote: str | None,
) -> int:
    """Run a prompt on several agents at once, without a screen.

    Prints each run as it finishes (--format json: one JSON object per line, nothing else on
    stdout) and forwards each agent's stderr, prefixed with its name. Exit status: 0 when every run
    completed, 1 when any did not, 2 for a usage or config error, 130 when interrupted.
    """
    if prompt == "-":
        prompt = sys.stdin.read().rstrip("\n")
    if not prompt.strip():
        raise click.UsageError("the prompt is empty", ctx)
    overlay = _parse_env(ctx, env)
    with usage_errors(ctx):
        chosen_options = parse_option_specs(options)
    settings = settings_of(ctx, config, agents)
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

    from acp_tui.session.fanout import Job

    follow_ups: list[RunRecord] = []
    presets = list(settings.selected_presets())
    if continue_file is not None:
        if cwd is not None or worktree or base is not None or remote is not None:
            raise click.UsageError(
                "--continue runs where each record ran: no --cwd, --worktree, --base or --remote", ctx
            )
        from acp_tui.reports.records import preset_for

        follow_ups = _latest_turns(ctx, continue_file, settings.selected if agents else ())
        presets = [preset_for(record, settings) for record in follow_ups]
    if load_session is not None and (
        continue_file is not None or worktree or base is not None or len(presets) != 1
    ):
        raise click.UsageError(
            "--load continues one session of one agent: exactly one --agent, no --continue, "
            "--worktree or --base",
            ctx,
        )
    jobs = []
    for preset in presets:
        if overlay:
            preset = replace(preset, env={**preset.env, **overlay})
        preset = with_remote(ctx, with_options(preset, chosen_options), remote)
        if cwd is not None and preset.remote is not None:
            raise click.UsageError(
                f'--cwd is a folder here: agent "{preset.name}" runs on the far side of its remote, '
                "in its remote_cwd",
                ctx,
            )
        if sandbox:
            preset = replace(preset, sandbox="workspace")
        if budget_usd is not None:
            preset = replace(preset, budget_usd=budget_usd)
        try:
            provider_config = settings.provider_config(preset, policy_override=policy, trace_dir=trace_dir)
        except ConfigError as exc:
            raise click.UsageError(f"{exc}; choose another with --policy", ctx) from None
        jobs.append(Job(preset, provider_config, policy or preset.policy))
    if load_session is not None:
        from acp_tui.reports.records import agent_session_record

        where = jobs[0].config.cwd_for(os.path.abspath(cwd) if cwd is not None else None)
        follow_ups = [agent_session_record(jobs[0].preset, load_session, where)]

    isolation = None
    if not follow_ups:
        isolation = _isolation_plan(ctx, jobs, cwd, worktree=worktree, base=base, keep=keep_worktrees)
    route_logging(secrets_of(job.preset for job in jobs))
    from acp_tui.session.fanout import run_jobs

    status = run_jobs(
        jobs,
        prompt,
        cwd=os.path.abspath(cwd) if cwd is not None else None,
        timeout=timeout,
        fmt="json" if fmt == "json" else "markdown" if fmt == "markdown" else "text",
        isolation=isolation,
        follow_ups=follow_ups,
        keep_worktrees=keep_worktrees,
    )
    done.headless = True
    return status


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
    from acp_tui.workspace.git import IsolationError
    from acp_tui.workspace.worktrees import plan

    # The demo's scratch dir only keeps its writes out of the user's checkout: a worktree does that.
    cwds = [
        os.path.abspath(cwd or (None if job.preset.create_cwd else job.preset.cwd) or os.getcwd())
        if isolated_job and job.preset.remote is None
        else None
        for job, isolated_job in zip(jobs, isolated, strict=True)
    ]
    # Those on the far side of a link find their checkout over there, as their runs start.
    far = frozenset(i for i, job in enumerate(jobs) if isolated[i] and job.preset.remote is not None)
    try:
        return plan(cwds, base=base, keep=keep, far=far)
    except IsolationError as exc:
        raise click.UsageError(f"--worktree: {exc}", ctx) from None


def _parse_env(ctx: click.Context, pairs: Sequence[str]) -> dict[str, str]:
    overlay = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key or any(c.isspace() for c in key):
            raise click.UsageError(f'--env "{pair}": expected KEY=VALUE', ctx)
        overlay[key] = value
    return overlay


def _latest_turns(ctx: click.Context, path: Path, only: Sequence[str]) -> list[RunRecord]:
    """The records of FILE to follow up on: for each session its latest turn (records without a
    session each on their own), in the order first seen; exit 2 naming FILE when it holds none."""
    from acp_tui.lab.records_file import RecordsError, read_records

    label = "-" if str(path) == "-" else str(path)
    try:
        records = read_records(sys.stdin.read() if label == "-" else path, label=label)
    except RecordsError as exc:
        raise click.UsageError(f"--continue {exc}", ctx) from None
    latest: dict[object, RunRecord] = {}
    for number, record in enumerate(records):
        if only and record.name not in only:
            continue
        key = record.session_id or ("no session", number)
        if key not in latest or record.turn >= latest[key].turn:
            latest[key] = record
    if not latest:
        raise click.UsageError(f"--continue {label}: no run to follow up on", ctx)
    return list(latest.values())
