"""`acp-tui schema record`: the JSON Schema (2020-12) of a run's record, as `acp-tui run --format
json`, the app's export and saved sessions write it (see docs/records.md)."""

from __future__ import annotations

import json

import click


@click.command("schema")
@click.argument("what", type=click.Choice(["record"]))
def schema_command(what: str) -> int:
    """Print the JSON Schema of WHAT: `record`, one run's record."""
    from acp_tui.reports.records import record_schema

    click.echo(json.dumps(record_schema(), indent=2, ensure_ascii=False))
    return 0
