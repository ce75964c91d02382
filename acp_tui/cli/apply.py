"""`acp-tui apply RUN_RECORD`: apply the change an isolated run recorded to the main checkout.

RUN_RECORD is a JSON record of `acp-tui run --worktree --format json` (or the app's export): a file
holding one record, or JSON lines (then `--run NAME` picks one); `-` reads stdin. The diff goes
through `git apply --3way` after a trial in a temporary index: when it would conflict, nothing is
written and the conflicting paths are listed. A record whose diff had the preset's secrets masked
(`diff_masked`) is refused: that diff is not the change any more. Exit status: 0 applied (or
nothing to apply), 1 refused, 2 for a bad record or no usable checkout.

Kept light: git's module loads only once the record was read.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from acp_tui.reports.records import RunRecord

EXIT_REFUSED = 1


@click.command("apply")
@click.argument("run_record", metavar="RUN_RECORD", type=click.Path(dir_okay=False, allow_dash=True))
@click.option("--run", "run_name", metavar="NAME", help="The run to apply, when RUN_RECORD holds several.")
@click.option(
    "--cwd",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="The checkout to apply to (default: the current directory).",
)
@click.pass_context
def apply_command(ctx: click.Context, run_record: str, run_name: str | None, cwd: Path | None) -> int:
    """Apply the diff of an isolated run's record to the checkout (git apply --3way).

    Refuses, writing nothing, when the diff conflicts with the checkout, and lists the conflicts.
    """
    record = _pick(ctx, _records(ctx, run_record), run_name)
    name = _text(record.name) or "the run"
    diff, base = record.diff, record.base
    if not base or diff is None:
        raise click.UsageError(f'{run_record}: run "{name}" was not isolated: no recorded diff', ctx)
    if record.diff_truncated:
        raise click.UsageError(
            f'{run_record}: the diff of run "{name}" was cut at the size limit; it cannot be applied', ctx
        )
    if record.diff_masked:
        raise click.UsageError(
            f'{run_record}: the diff of run "{name}" had secrets masked; apply it from the app or by hand',
            ctx,
        )

    import asyncio

    from acp_tui.workspace.apply import ApplyRefused, apply_diff
    from acp_tui.workspace.git import IsolationError

    try:
        paths = asyncio.run(apply_diff(diff, cwd or os.getcwd(), base=base))
    except IsolationError as exc:
        raise click.UsageError(str(exc), ctx) from None
    except ApplyRefused as exc:
        click.echo(f"acp-tui apply: refused: {_text(str(exc))}", err=True)
        return EXIT_REFUSED
    if not paths:
        click.echo(f'run "{name}" changed nothing: nothing to apply')
    else:
        noun = "file" if len(paths) == 1 else "files"
        click.echo(f'applied the change of run "{name}": {len(paths)} {noun}: {_text(", ".join(paths))}')
    return 0


def _records(ctx: click.Context, source: str) -> list[RunRecord]:
    from acp_tui.core.files import JsonError, UnreadableFile, json_values, read_text
    from acp_tui.reports.records import read_record

    try:
        text = sys.stdin.read() if source == "-" else read_text(source, what="record file")
    except UnreadableFile as exc:
        raise click.UsageError(str(exc), ctx) from None
    try:
        found = [value for _, value in json_values(text)]
    except JsonError as exc:
        raise click.UsageError(f"{source}: not a JSON record ({exc})", ctx) from None
    try:
        records = [read_record(item) for item in found]
    except ValueError as exc:
        raise click.UsageError(f"{source}: not a JSON record of a run ({exc})", ctx) from None
    if not records:
        raise click.UsageError(f"{source}: not a JSON record of a run", ctx)
    return records


def _pick(ctx: click.Context, records: list[RunRecord], name: str | None) -> RunRecord:
    names = [_text(r.name) for r in records]
    if name is not None:
        chosen = [r for r, n in zip(records, names, strict=True) if n == name]
        if len(chosen) != 1:
            why = "no run" if not chosen else "several runs"
            raise click.UsageError(f'--run "{name}": {why} of that name (found: {", ".join(names)})', ctx)
        return chosen[0]
    if len(records) > 1:
        raise click.UsageError(f"several runs in the record: choose one with --run ({', '.join(names)})", ctx)
    return records[0]


def _text(value: Any) -> str:
    from acp_tui.core.text import one_line

    return one_line(value if isinstance(value, str) else "", 200)
