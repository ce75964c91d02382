"""Credentials and files: what reaches a child, and what of it ever comes back out.

Three presets run side by side, headless (`acp-tui run`, in-process) and in the app; each has its own
secrets in `env`, and each child leaks them back through every channel it has (tests/scripted_agent.py
expands `${NAME}` from its own environment, so no secret is on any command line):
- alpha: its answer, a stderr line, a permission request's title, a stdout line that is no JSON, an
  update the schema rejects (the SDK logs it) and an unknown stop reason (the run's error);
- bravo: a JSON-RPC error message for session/prompt;
- charlie: a last stderr line, then it exits (the run's error quotes that line).
Our own environment carries credential-shaped variables too (any case, any position).

Asserted: each child got exactly the parent's environment minus every credential-shaped name, plus its
own preset's `env` and nobody else's; its cwd is the configured one; the client declared no fs or
terminal capability and touched no file an agent asked about; and no secret value appears in results,
headless output (stdout, forwarded stderr), traces, exports, the log file, or the app's screen,
while the masked leaks (`***`) show the agents did try.
"""

from __future__ import annotations

import json
import logging
import os
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import acp_tui.acp.client  # noqa: F401  (the SDK import, before any --timeout matters)
from acp_tui.cli.main import main
from acp_tui.settings import paths
from acp_tui.settings.schema import AgentPreset, Settings
from tests.helpers import SCRIPTED_AGENT, credential_shaped, our_live_processes

MASK = "***"
SECRETS = {
    "alpha": {"ALPHA_API_KEY": "alpha-secret-7f3a9c21d4e8", "SHARED_TOKEN": "alpha-shared-55e0c1a9"},
    "bravo": {"BRAVO_TOKEN": "bravo-secret-0b61e2f94a77"},
    "charlie": {"charlie_secret_x": "charlie-secret-93d7aa0f12"},
}
PARENT_CREDENTIALS = {  # credential-shaped names in our own environment: no child may see them
    "ACP_TUI_SEC_API_KEY": "parent-api-key-4c1d",
    "acp_tui_sec_token": "parent-token-8e2b",
    "ACP_TUI_X_SeCrEt_Y": "parent-secret-1f9a",
    "KEYRING_ACP_TUI": "parent-keyring-77ab",
    "ACP_TUI_MONKEY": "parent-monkey-3d3d",
    "SHARED_TOKEN": "parent-shared-6a6a",  # alpha sets its own value for this name
    "ACP_TUI_PGPASSWORD": "parent-password-2b2b",
    "ACP_TUI_MYSQL_PWD": "parent-pwd-9c9c",
    "ACP_TUI_REDIS_AUTH": "parent-auth-5e5e",
    "ACP_TUI_BW_SESSION": "parent-session-4f4f",
}
PLAIN = {"ACP_TUI_SEC_PLAIN": "plain-value-reaches-everyone"}
EVERY_SECRET_VALUE = [v for env in SECRETS.values() for v in env.values()] + list(PARENT_CREDENTIALS.values())


def presets(tmp_path: Path) -> tuple[AgentPreset, ...]:
    outside = tmp_path / "outside"
    outside.mkdir(exist_ok=True)
    (outside / "private.txt").write_text("private: not for agents\n")
    alpha_cwd = tmp_path / "alpha-cwd"
    alpha_cwd.mkdir(exist_ok=True)
    alpha = AgentPreset(
        "alpha",
        sys.executable,
        (
            SCRIPTED_AGENT,
            f"env_dump={tmp_path / 'alpha-env.json'}",
            f"record={tmp_path / 'alpha-frames.jsonl'}",
            "echo_env=ALPHA_API_KEY",
            "stderr=alpha says ${ALPHA_API_KEY}",
            "permission=normal",
            "permission_title=write ${ALPHA_API_KEY} to disk",
            "noise=${ALPHA_API_KEY} in a line that is no JSON",
            "invalid_update=${ALPHA_API_KEY}",
            "stop=weird-${SHARED_TOKEN}",
            "fs=1",
            f"fs_read={outside / 'private.txt'}",
            f"fs_write={alpha_cwd / 'written.txt'}",
            f"fs_touch={alpha_cwd / 'touched.txt'}",
        ),
        cwd=str(alpha_cwd),
        env=dict(SECRETS["alpha"]),
    )
    bravo = AgentPreset(
        "bravo",
        sys.executable,
        (
            SCRIPTED_AGENT,
            f"env_dump={tmp_path / 'bravo-env.json'}",
            "fail=session/prompt:-32000:bad credentials ${BRAVO_TOKEN}",
        ),
        env=dict(SECRETS["bravo"]),
    )
    charlie = AgentPreset(
        "charlie",
        sys.executable,
        (
            SCRIPTED_AGENT,
            f"env_dump={tmp_path / 'charlie-env.json'}",
            "exit_message=charlie leaves with ${charlie_secret_x}",
            "exit=3",
            "exit_at=prompt-start",
        ),
        env=dict(SECRETS["charlie"]),
    )
    return alpha, bravo, charlie


def write_config(tmp_path: Path) -> Path:
    lines = []
    for preset in presets(tmp_path):
        lines += [
            "[[agent]]",
            f"name = {json.dumps(preset.name)}",
            f"command = {json.dumps(preset.command)}",
            f"args = {json.dumps(list(preset.args))}",
        ]
        if preset.cwd:
            lines.append(f"cwd = {json.dumps(preset.cwd)}")
        lines.append(f"env = {{ {', '.join(f'{k} = {json.dumps(v)}' for k, v in preset.env.items())} }}")
    config = tmp_path / "agents.toml"
    config.write_text("\n".join(lines) + "\n")
    return config


@pytest.fixture
def hostile_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Credentials in our own environment, our cwd a fresh dir, and the root logger put back
    afterwards (the commands route it to their log file). Our own folders are the test's
    (tests/conftest.py)."""
    for name, value in {**PARENT_CREDENTIALS, **PLAIN}.items():
        monkeypatch.setenv(name, value)
    here = tmp_path / "here"
    here.mkdir()
    monkeypatch.chdir(here)
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    yield here
    for handler in list(root.handlers):
        root.removeHandler(handler)
        handler.close()
    for handler in handlers:
        root.addHandler(handler)
    root.setLevel(level)


def leaks_in(text: str) -> list[str]:
    return [value for value in EVERY_SECRET_VALUE if value in text]


def check_child_environments(tmp_path: Path, default_cwd: Path) -> None:
    for name, own in SECRETS.items():
        dump = json.loads((tmp_path / f"{name}-env.json").read_text())
        env: dict[str, str] = dump["env"]
        for var, value in own.items():
            assert env.get(var) == value, f"{name} did not get its own {var}"
        others = {var for other, secrets in SECRETS.items() if other != name for var in secrets}
        assert not (others & set(env)), f"{name} got another preset's env: {others & set(env)}"
        shaped = {var for var in env if credential_shaped(var)}
        assert shaped == set(own), (
            f"{name} got credential-shaped variables it was not given: {shaped - set(own)}"
        )
        assert not [v for v in PARENT_CREDENTIALS.values() if v in env.values()]
        assert env.get("ACP_TUI_SEC_PLAIN") == PLAIN["ACP_TUI_SEC_PLAIN"]  # the rest is inherited
        expected_cwd = tmp_path / "alpha-cwd" if name == "alpha" else default_cwd
        assert dump["cwd"] == str(expected_cwd), f"{name} ran in {dump['cwd']}"


def check_no_file_touched(tmp_path: Path) -> None:
    assert list((tmp_path / "alpha-cwd").iterdir()) == []
    frames = [json.loads(line) for line in (tmp_path / "alpha-frames.jsonl").read_text().splitlines()]
    initialize = next(f for f in frames if f.get("method") == "initialize")
    capabilities = initialize["params"].get("clientCapabilities", {})
    assert not re.search(r"\btrue\b", json.dumps(capabilities)), capabilities  # no fs, no terminal
    # The agent's requests: 1001 the permission, then fs/read, fs/write, terminal/create.
    answers = {f["id"]: f for f in frames if "method" not in f}
    assert [answers[i]["error"]["code"] for i in (1002, 1003, 1004)] == [-32601, -32601, -32601]
    assert "not for agents" not in json.dumps(frames)


def check_result_fields(record: dict[str, Any]) -> None:
    """What each run's result says, masked (from a run record: export or `--format json`)."""
    name = record["name"]
    if name == "alpha":
        assert record["output"].endswith(MASK), record["output"]  # echo_env: the key itself, masked
        assert record["error"] == f"agent sent an unknown stop reason: 'weird-{MASK}'"
        [permission] = record["permissions"]
        assert permission["title"] == f"write {MASK} to disk"
    elif name == "bravo":
        assert record["stop_reason"] == "error"
        assert f"bad credentials {MASK}" in record["error"]
    else:
        assert record["error"] == f"agent exited with code 3: charlie leaves with {MASK}"


def test_headless_run_keeps_every_credential_where_it_belongs(
    tmp_path: Path, hostile_environment: Path
) -> None:
    config, traces = write_config(tmp_path), tmp_path / "traces"
    runner = CliRunner()
    result = runner.invoke(
        main,
        [
            "run",
            "--config",
            str(config),
            "--prompt",
            "leak it all",
            "--format",
            "json",
            "--trace",
            str(traces),
        ],
        catch_exceptions=False,
    )
    text_run = runner.invoke(
        main, ["run", "--config", str(config), "--prompt", "again"], catch_exceptions=False
    )
    assert result.exit_code == 1, result.output  # none of the three completes
    assert our_live_processes() == []

    check_child_environments(tmp_path, default_cwd=hostile_environment)
    check_no_file_touched(tmp_path)
    records = {r["name"]: r for r in map(json.loads, result.stdout.splitlines())}
    assert set(records) == set(SECRETS)
    for record in records.values():
        check_result_fields(record)
    # The forwarded stderr (the agents' lines and our own notes about them) is masked too.
    assert f"[alpha] alpha says {MASK}" in result.stderr
    assert f"[charlie] charlie leaves with {MASK}" in result.stderr
    assert "[alpha] [acp-tui] not a JSON-RPC message" in result.stderr

    surfaces = {
        "stdout (json)": result.stdout,
        "stderr (json run)": result.stderr,
        "stdout (text)": text_run.stdout,
        "stderr (text run)": text_run.stderr,
    }
    for trace in traces.glob("*.jsonl"):
        surfaces[f"trace {trace.name}"] = trace.read_text()
    assert len([s for s in surfaces if s.startswith("trace")]) == 3
    assert paths.log_file().exists(), "the SDK's complaint about the invalid update should be in the log"
    surfaces["log file"] = paths.log_file().read_text()
    assert "ValidationError" in surfaces["log file"] or "validation error" in surfaces["log file"]
    leaked = {where: leaks_in(text) for where, text in surfaces.items() if leaks_in(text)}
    assert not leaked, f"secret values written out: {leaked}"


async def test_the_app_keeps_every_credential_off_screen_exports_traces_and_logs(
    tmp_path: Path, hostile_environment: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from textual.widgets import Log

    from acp_tui.settings.logs import route_logging
    from acp_tui.ui.app import SupervisorApp
    from acp_tui.ui.screens.permission_log_screen import PermissionLogScreen
    from acp_tui.ui.screens.trace_screen import TraceScreen
    from tests.ui.helpers import all_finished, panes, wait_until

    settings = Settings(presets=presets(tmp_path), prompt="leak it all")
    # What `acp-tui` (ui.launch) has the app do at its first frame: the log file masks every preset's env.
    log = route_logging([v for p in settings.presets for v in p.env.values()], path=tmp_path / "app.log")
    traces, exports = paths.traces_dir(), tmp_path / "exports"
    exports.mkdir()
    app = SupervisorApp(settings)
    app.export_dir = exports
    screens: dict[str, str] = {}
    async with app.run_test(size=(200, 60)) as pilot:
        await pilot.press("ctrl+t")  # protocol traces on
        app.query_one("#prompt").focus()
        await pilot.press("enter")
        await wait_until(pilot, all_finished(app))
        found = panes(app)
        for name, pane in found.items():
            pane.focus()
            await pilot.press("e")  # show its stderr
            screens[f"{name} answer"] = pane.answer.text
            screens[f"{name} stderr"] = pane.shown("stderr")
            screens[f"{name} error"] = pane.shown("error")
            screens[f"{name} stats"] = pane.shown("stats")
        screens["main screen"] = app.export_screenshot()
        found["alpha"].focus()
        await pilot.press("l")
        await wait_until(pilot, lambda: isinstance(app.screen, PermissionLogScreen))
        screens["permission log"] = app.export_screenshot()
        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, PermissionLogScreen))
        found["alpha"].focus()
        await pilot.press("t")
        await wait_until(pilot, lambda: isinstance(app.screen, TraceScreen) and app.screen.loaded)
        screens["trace screen"] = "\n".join(str(line) for line in app.screen.query_one(Log).lines)
        screens["trace screen shot"] = app.export_screenshot()
        await pilot.press("escape")
        await pilot.press("ctrl+s")  # export the session
        await wait_until(pilot, lambda: len(list(exports.iterdir())) == 3)  # .md, .jsonl, -compare.md
        results = {name: pane.attempt.result for name, pane in found.items()}
    assert our_live_processes() == []

    check_child_environments(tmp_path, default_cwd=hostile_environment)
    check_no_file_touched(tmp_path)
    [jsonl] = exports.glob("*.jsonl")
    [markdown] = exports.glob("*[0-9].md")
    [comparison] = exports.glob("*-compare.md")
    for record in map(json.loads, jsonl.read_text().splitlines()):
        check_result_fields(record)
    assert screens["alpha stderr"].count(MASK) >= 2  # its own line and our note about the noise
    assert f"charlie leaves with {MASK}" in screens["charlie error"]

    surfaces = {
        **screens,
        "export jsonl": jsonl.read_text(),
        "export markdown": markdown.read_text(),
        "export comparison": comparison.read_text(),
    }
    surfaces["results"] = repr(results)
    trace_files = list(traces.glob("*.jsonl"))
    assert len(trace_files) == 3
    surfaces.update({f"trace {t.name}": t.read_text() for t in trace_files})
    assert log.exists(), "the SDK's complaint about the invalid update should be in the log"
    surfaces["log file"] = log.read_text()
    leaked = {where: leaks_in(text) for where, text in surfaces.items() if leaks_in(text)}
    assert not leaked, f"secret values shown or written out: {leaked}"


def test_a_record_logged_before_the_log_is_routed_is_written_first_and_masked(
    tmp_path: Path, hostile_environment: Path
) -> None:
    """`acp-tui` routes its log after the first frame: what was logged before is held as it is
    (never formatted) and written first, masked like every other record."""
    from acp_tui.settings.logs import route_logging

    secret = "early-secret-4411"
    held = logging.LogRecord("acp", logging.WARNING, __file__, 1, "before the frame: %s", (secret,), None)
    log = route_logging([secret], path=tmp_path / "acp-tui.log", held=[held])
    logging.getLogger("acp").warning("after the frame: %s", secret)
    written = log.read_text()
    assert secret not in written
    assert written.index(f"before the frame: {MASK}") < written.index(f"after the frame: {MASK}")


@pytest.mark.parametrize("where", ["request", "preset", "neither"])
async def test_the_child_runs_in_the_configured_cwd(
    tmp_path: Path, where: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The request's cwd, else the preset's, else ours."""
    from acp_tui import AcpProviderConfig, AcpSubagentProvider, SubagentRequest

    ours, preset_cwd, request_cwd = (tmp_path / d for d in ("ours", "preset", "request"))
    for d in (ours, preset_cwd, request_cwd):
        d.mkdir()
    monkeypatch.chdir(ours)
    dump = tmp_path / "env.json"
    config = AcpProviderConfig(
        command=sys.executable,
        args=[SCRIPTED_AGENT, f"env_dump={dump}"],
        cwd=str(preset_cwd) if where in ("request", "preset") else None,
    )
    request = SubagentRequest("cwd?", cwd=str(request_cwd) if where == "request" else None)
    run = await AcpSubagentProvider(config).start(request)
    assert (await run.result()).stop_reason == "completed"
    expected = {"request": request_cwd, "preset": preset_cwd, "neither": ours}[where]
    assert json.loads(dump.read_text())["cwd"] == str(expected)
    assert os.listdir(expected) == []  # nothing of ours written where the agent works


async def test_a_credential_that_json_or_repr_would_escape_is_masked_in_traces_and_logs(
    tmp_path: Path, hostile_environment: Path
) -> None:
    """A value with characters JSON and repr() escape (non-ASCII, a quote, a backslash) is written in
    traces and logs in its escaped spelling: masking must catch that spelling too, or the file holds
    the secret one decode away (the trace screen decodes it, for one)."""
    from acp_tui import AcpProviderConfig, AcpSubagentProvider, SubagentRequest
    from acp_tui.settings.logs import route_logging
    from tests.helpers import read_trace

    secret = 'clé\\"secrète-7781'
    spellings = {
        "as is": secret,
        "JSON": json.dumps(secret)[1:-1],
        "JSON, UTF-8": json.dumps(secret, ensure_ascii=False)[1:-1],
        "repr": repr(secret)[1:-1],
    }
    log = route_logging([secret], path=tmp_path / "acp-tui.log")
    config = AcpProviderConfig(
        command=sys.executable,
        args=[SCRIPTED_AGENT, "echo_env=ODD_KEY", "stderr=key ${ODD_KEY}", "invalid_update=${ODD_KEY}"],
        env={"ODD_KEY": secret},
        trace_dir=str(tmp_path / "traces"),
    )
    run = await AcpSubagentProvider(config).start(SubagentRequest("hi"))
    result = await run.result()
    assert (result.output, result.stderr_tail) == (MASK, [f"key {MASK}"])
    [trace] = (tmp_path / "traces").glob("*.jsonl")
    surfaces = {
        "trace file": trace.read_text(),
        "trace, decoded": json.dumps(read_trace(trace), ensure_ascii=False),
        "log file": log.read_text(),
    }
    leaked = {
        where: [name for name, spelling in spellings.items() if spelling in text]
        for where, text in surfaces.items()
    }
    assert not any(leaked.values()), f"the secret, spelled otherwise: {leaked}"
