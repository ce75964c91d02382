"""The lab's command line: `acp-tui replay` and `acp-tui policy check | import`.

Only click here; each command imports its module when it runs, so `acp-tui`'s start-up pays
nothing for the lab, and `replay` (an agent other programs spawn) loads neither the SDK nor the UI.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

POLICY_HELP = "reject, allow, allow-once, ask, or a named policy of the config file."


@click.command("replay")
@click.argument("trace", type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--speed",
    type=click.FloatRange(min=0),
    default=1.0,
    show_default=True,
    help="Play the recorded timing this many times faster; 0 plays it with no pauses.",
)
@click.option(
    "--no-wait",
    is_flag=True,
    help="Do not wait for the client's answer to a recorded request before the frames after it "
    "(answers are still compared before the prompt's answer).",
)
@click.pass_context
def replay(ctx: click.Context, trace: Path, speed: float, no_wait: bool) -> int:
    """Be the agent of a recorded run: play TRACE (a --trace file) over stdio, as an ACP agent.

    Answers initialize and session/new as recorded, then each prompt with the recorded updates and
    permission requests, in order and with the recorded timing. A permission answer that differs
    from the recorded one is reported on stderr and in the prompt answer's _meta.
    """
    from acp_tui.lab.replay import run
    from acp_tui.lab.trace_file import TraceError

    try:
        run(trace, speed=speed, wait=not no_wait)
    except TraceError as exc:
        raise click.UsageError(str(exc), ctx) from None


@click.group("policy")
def policy() -> None:
    """Work on permission policies without running agents: dry-run one, import one."""


@policy.command("check")
@click.option(
    "--policy", "policy_name", required=True, metavar="NAME", help="The policy to try: " + POLICY_HELP
)
@click.option(
    "--config",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Where named policies come from. Default: agents.toml in the user config dir.",
)
@click.option(
    "--against", metavar="NAME2", help="Compare with this policy instead of the recorded decisions."
)
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.argument("records", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.pass_context
def check_command(
    ctx: click.Context,
    policy_name: str,
    config: Path | None,
    against: str | None,
    fmt: str,
    records: tuple[Path, ...],
) -> int:
    """Decide the permission requests of RECORDS again with a policy, without any agent.

    RECORDS are traces (--trace files), JSON records (acp-tui run --format json, the app's export)
    or folders of them. One row per request: agent, kind, title, the recorded decision and rule,
    the new ones, whether it changed. Exit status: 0 when no decision changed, 1 when any did, 2 for
    a usage or config error.
    """
    from acp_tui.cli.common import usage_errors
    from acp_tui.lab.check import RecordsError, check, load_requests, text_table
    from acp_tui.settings.load import load_settings

    root: dict[str, Any] = ctx.find_root().obj or {}
    with usage_errors(ctx):  # a file of policies alone will do (`acp-tui policy import` writes one)
        settings = load_settings(config or root.get("config"), policies_only=True)
    chosen = _policy(ctx, settings, policy_name, "--policy")
    other = _policy(ctx, settings, against, "--against") if against is not None else None
    with usage_errors(ctx, RecordsError):
        requests = load_requests(records)
    rows = check(requests, chosen, other)
    if fmt == "json":
        import json

        from acp_tui.core.text import json_safe

        for row in rows:
            click.echo(json_safe(json.dumps(row.to_json(), ensure_ascii=False)))
    else:
        labels = {"was_label": policy_name, "now_label": against} if against else {"now_label": policy_name}
        click.echo(text_table(rows, **labels), nl=False)
    if not requests:
        click.echo("acp-tui policy check: no permission requests in the records given", err=True)
    return 1 if any(row.changed for row in rows) else 0


def _policy(ctx: click.Context, settings: Any, name: str, flag: str) -> Any:
    """A policy by name, as `check` takes it (`ask` is a person: it decides nothing)."""
    from acp_tui.lab.check import PERSON
    from acp_tui.policy.names import ASK, UnknownPolicy, resolve

    if name == ASK:
        return PERSON
    try:
        return resolve(name, settings.policies)
    except UnknownPolicy as exc:
        known = ", ".join(exc.known)
        raise click.UsageError(f'{flag} "{name}": unknown policy (expected one of: {known})', ctx) from None


@policy.group("import")
def import_group() -> None:
    """Translate another tool's permission settings into a policy (TOML, on stdout)."""


@import_group.command("claude")
@click.argument("settings_file", metavar="SETTINGS.json", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--name", default="claude", show_default=True, help="The name of the policy written.")
@click.pass_context
def import_claude_command(ctx: click.Context, settings_file: Path, name: str) -> int:
    """Print a policy translated from Claude Code's permissions.allow / ask / deny rules.

    Rules with no equivalent are kept as comments saying why.
    """
    from acp_tui.lab.import_claude import ClaudeImportError, translate_file

    try:
        text = translate_file(settings_file, name=name)
    except ClaudeImportError as exc:
        raise click.UsageError(str(exc), ctx) from None
    sys.stdout.write(text)
    return 0
