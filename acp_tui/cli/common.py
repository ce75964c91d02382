"""What the commands share: how an agent is named, where settings come from, and the fast exit."""

from __future__ import annotations

import contextlib
import math
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar

import click

from acp_tui.settings.load import load_settings
from acp_tui.settings.schema import AgentPreset, ConfigError, Settings


class PositiveNumber(click.FloatRange):
    """A number above 0 and finite (click's range lets `nan` and `inf` through)."""

    def __init__(self) -> None:
        super().__init__(min=0, min_open=True)

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        number = super().convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number.", param, ctx)
        return number


AGENT_HELP = "An agent: a preset NAME, or 'NAME=COMMAND ARGS' for a new one. Repeatable."
CONFIG_HELP = "Agent presets (TOML). Default: agents.toml in the user config dir, else the demo agents."


F = TypeVar("F", bound=Callable[..., Any])


def config_option() -> Callable[[F], F]:
    return click.option("--config", type=click.Path(dir_okay=False, path_type=Path), help=CONFIG_HELP)


@contextlib.contextmanager
def usage_errors(ctx: click.Context, *errors: type[Exception]) -> Iterator[None]:
    """`errors` (ConfigError by default), said as a usage error: one line, exit status 2."""
    caught = errors or (ConfigError,)
    try:
        yield
    except caught as exc:
        raise click.UsageError(str(exc), ctx) from None


def settings_of(ctx: click.Context, config: Path | None, agents: Sequence[str]) -> Settings:
    """The settings a command runs with; the group's `--config` and `--agent` count too."""
    parent: dict[str, Any] = ctx.find_root().obj or {}
    with usage_errors(ctx):
        return load_settings(config or parent.get("config"), (*parent.get("agents", ()), *agents))


def remote_option() -> Callable[[F], F]:
    return click.option(
        "--remote",
        metavar="URL",
        help="Run every agent there: ssh://[USER@]HOST[:PORT], docker://CONTAINER, podman://CONTAINER "
        "or kubectl://[CONTEXT/]NAMESPACE/POD[/CONTAINER]; command, args and env are the far side's.",
    )


def with_remote(ctx: click.Context, preset: AgentPreset, url: str | None) -> AgentPreset:
    """`--remote URL`: the preset run there (its local cwd has no meaning there), else as it is."""
    if url is None:
        return preset
    from dataclasses import replace

    preset = replace(preset, remote=url, cwd=None, create_cwd=False)
    try:
        preset.check_remote()
    except ConfigError as exc:
        raise click.UsageError(f"--remote: {exc}", ctx) from None
    return preset


class _Done:
    """Set once a headless command has disposed every run: all that is left is the teardown."""

    headless = False


done = _Done()


def exit_now(status: int) -> None:
    """Leave without tearing the interpreter down.

    With the protocol SDK (pydantic) loaded, the teardown costs 0.1-0.2 s, and `run` is measured by
    its wall time. By now every child is gone and only our output is left to flush. Only for a real
    process: a test runner calling `main([...])` carries on.
    """
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    os._exit(status)
