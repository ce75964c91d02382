"""The command line itself: entry points, one-line usage errors (exit 2, nothing spawned), the app."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any, ClassVar

import click
import pytest
from click.testing import CliRunner, Result

import acp_tui
from acp_tui.cli.main import SUBCOMMANDS, main
from acp_tui.settings.schema import Settings
from tests.helpers import SCRIPTED_AGENT


def invoke(*args: str, stdin: str | None = None) -> Result:
    return CliRunner().invoke(main, list(args), input=stdin, catch_exceptions=False)


def scripted_spec(name: str, *options: str) -> str:
    return f"{name}={shlex.join([sys.executable, SCRIPTED_AGENT, *options])}"


def test_version() -> None:
    result = invoke("--version")
    assert result.exit_code == 0
    assert result.stdout == f"acp-tui, version {acp_tui.__version__}\n"


@pytest.mark.parametrize(
    "argv",
    [
        [sys.executable, "-m", "acp_tui", "--version"],
        [str(Path(sys.executable).parent / "acp-tui"), "--version"],
    ],
    ids=["python -m acp_tui", "console script"],
)
def test_both_entry_points_work(argv: list[str]) -> None:
    done = subprocess.run(argv, capture_output=True, text=True, timeout=30, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().endswith(acp_tui.__version__)


def test_each_command_is_imported_when_invoked_yet_help_lists_every_one_with_its_short_help() -> None:
    """The app's start pays for no subcommand's module; `--help` still names them all."""
    loaded = subprocess.run(
        [sys.executable, "-c", "import sys; import acp_tui.cli.main; print(*sorted(sys.modules))"],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    ).stdout.split()
    cli = [name for name in loaded if name.startswith("acp_tui.cli.")]
    assert cli == ["acp_tui.cli.common", "acp_tui.cli.main"]
    listed = invoke("--help").stdout.split("Commands:\n")[1].splitlines()
    assert [line.split()[0] for line in listed] == sorted(SUBCOMMANDS)
    with click.Context(main) as ctx:
        for name, line in zip(sorted(SUBCOMMANDS), listed, strict=True):
            command = main.get_command(ctx, name)
            assert command is not None and command.name == name
            assert line.split(maxsplit=1)[1].rstrip(".") in command.get_short_help_str(limit=200)


def test_run_help_lists_every_option() -> None:
    result = invoke("run", "--help")
    assert result.exit_code == 0
    for option in (
        "--prompt",
        "--agent",
        "--config",
        "--policy",
        "--cwd",
        "--env",
        "--timeout",
        "--format",
        "--trace",
        "--option",
    ):
        assert option in result.stdout


BAD_CONFIG = '[[agent]]\nname = "gemini"\ncommand = "gemini"\nargs = "--acp"\n'
ASK_CONFIG = '[[agent]]\nname = "asker"\ncommand = "true"\npolicy = "ask"\n'


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--config", "{bad}"], '{bad}: agent "gemini": "args" must be a list of strings'),
        (
            ["--agent", "nobody"],
            '--agent "nobody": unknown agent (known: scribe, pong, tortoise, marker; no config file was'
            " found, give one with --config FILE; to add one: NAME=COMMAND ARGS)",
        ),
        (
            ["--policy", "ask"],
            "--policy ask needs someone to answer each request: use it in the app (acp-tui)",
        ),
        (
            ["--policy", "lenient"],
            '--policy "lenient": unknown policy (expected one of: reject, allow, allow-once)',
        ),
        (["--env", "NOVALUE"], '--env "NOVALUE": expected KEY=VALUE'),
        (["--timeout", "0"], "Invalid value for '--timeout': 0.0 is not in the range x>0."),
        (
            ["--format", "xml"],
            "Invalid value for '--format': 'xml' is not one of 'text', 'json', 'markdown'.",
        ),
        (
            ["--cwd", "/nonexistent/dir"],
            "Invalid value for '--cwd': Directory '/nonexistent/dir' does not exist.",
        ),
        (["--frobnicate"], "No such option '--frobnicate'. (Did you mean one of: '--format', '--remote'?)"),
        (
            ["--agent", "x=cmd 'open"],
            '--agent "x=cmd \'open": cannot split the command: No closing quotation',
        ),
        (
            ["--config", "{ask}"],
            'agent "asker": policy "ask" needs someone to ask: it works in the app only;'
            " choose another with --policy",
        ),
    ],
)
def test_usage_and_config_errors_are_one_line_exit_2_and_spawn_nothing(
    tmp_path: Path, args: list[str], message: str
) -> None:
    (tmp_path / "bad.toml").write_text(BAD_CONFIG, encoding="utf-8")
    (tmp_path / "ask.toml").write_text(ASK_CONFIG, encoding="utf-8")
    marker = tmp_path / "spawned"
    args = [a.format(bad=tmp_path / "bad.toml", ask=tmp_path / "ask.toml") for a in args]
    message = message.format(bad=tmp_path / "bad.toml")
    # The first agent would leave a mark if it were ever started.
    spawn_mark = f"marker=sh -c {shlex.quote(f'touch {marker}')}"
    agents = [] if "--config" in args else ["--agent", spawn_mark]

    result = invoke("run", "--prompt", "hi", *agents, *args)

    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr == f"acp-tui run: error: {message}\n"  # one line
    assert not marker.exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([], "Missing option '--prompt'. (see 'acp-tui run --help')"),
        (["--prompt", "   "], "the prompt is empty"),
    ],
)
def test_a_missing_or_empty_prompt_is_a_usage_error(args: list[str], message: str) -> None:
    result = invoke("run", *args)
    assert result.exit_code == 2
    assert result.stderr == f"acp-tui run: error: {message}\n"


def test_an_empty_prompt_on_stdin_is_a_usage_error() -> None:
    result = invoke("run", "--prompt", "-", stdin="\n")
    assert result.exit_code == 2
    assert result.stderr == "acp-tui run: error: the prompt is empty\n"


def test_options_before_run_apply_to_it(tmp_path: Path) -> None:
    config = tmp_path / "agents.toml"
    config.write_text(
        f'[[agent]]\nname = "from-file"\ncommand = {json.dumps(sys.executable)}\n'
        f'args = [{json.dumps(SCRIPTED_AGENT)}, "text=filed"]\n',
        encoding="utf-8",
    )
    result = invoke(
        "--config",
        str(config),
        "--agent",
        scripted_spec("extra", "text=added"),
        "run",
        "--prompt",
        "x",
        "--format",
        "json",
        "--agent",
        "from-file",
    )
    assert result.exit_code == 0, result.stderr
    outputs = {r["name"]: r["output"] for r in map(json.loads, result.stdout.splitlines())}
    assert outputs == {"extra": "added", "from-file": "filed"}


class FakeApp:
    """Stands in for the Textual app: the command line's part ends at handing it the settings."""

    seen: ClassVar[list[Settings]] = []  # every instance made, across instances
    return_code = 0

    def __init__(self, settings: Settings, **seams: object) -> None:
        self.seen.append(settings)

    def run(self) -> None:
        pass


def test_no_command_opens_the_app_with_the_loaded_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    import acp_tui.ui.app

    FakeApp.seen.clear()
    monkeypatch.setattr(acp_tui.ui.app, "make_app", FakeApp)
    result = invoke("--agent", "extra=my-agent --acp", "--agent", "pong")
    assert result.exit_code == 0
    (settings,) = FakeApp.seen
    assert [p.name for p in settings.presets] == ["scribe", "pong", "tortoise", "extra"]
    assert settings.selected == ("extra", "pong")


def test_the_app_refuses_a_bad_config_in_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import acp_tui.ui.app

    def never(settings: Settings) -> Any:
        raise AssertionError("the app must not start half-configured")

    monkeypatch.setattr(acp_tui.ui.app, "make_app", never)
    bad = tmp_path / "agents.toml"
    bad.write_text(BAD_CONFIG, encoding="utf-8")
    result = invoke("--config", str(bad))
    assert result.exit_code == 2
    assert result.stderr == f'acp-tui: error: {bad}: agent "gemini": "args" must be a list of strings\n'


@pytest.mark.parametrize("command", [[], ["run"]])
def test_dash_h_works_like_dash_dash_help(command: list[str]) -> None:
    short, long = invoke(*command, "-h"), invoke(*command, "--help")
    assert short.exit_code == long.exit_code == 0
    assert short.stdout == long.stdout and "Usage:" in short.stdout
