"""A codex preset where presets run: the app (its pane, the `ask` dialog), `acp-tui run` (its
record) and its follow-up (`--continue`); a preset of a provider not built yet."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from acp_tui.cli.main import main
from acp_tui.settings.schema import AgentPreset
from acp_tui.ui.app import SupervisorApp
from acp_tui.ui.screens.permission_screen import PermissionScreen
from tests.standins.openai_responses import ResponsesStandIn, answer, command
from tests.ui.helpers import all_finished, panes, settings, wait_until


def codex_preset(codex: str, home: Path, workdir: Path, *, policy: str = "reject") -> AgentPreset:
    return AgentPreset(
        "cx",
        codex,
        ("app-server",),
        cwd=str(workdir),
        provider="codex",
        policy=policy,
        env={"CODEX_HOME": str(home)},
    )


async def test_the_ask_policy_opens_the_same_dialog_for_a_codex_approval(
    codex: str, codex_home: Path, stand_in: ResponsesStandIn, tmp_path: Path
) -> None:
    stand_in.script(command("echo hi > out.txt"), answer("Done."))
    app = SupervisorApp(settings(codex_preset(codex, codex_home, tmp_path, policy="ask")))
    async with app.run_test(size=(150, 40)) as pilot:
        await pilot.press("enter")
        pane = panes(app)["cx"]
        await wait_until(pilot, lambda: pane.attempt.state == "needs-you")
        await pilot.press("a")
        await wait_until(pilot, lambda: isinstance(app.screen, PermissionScreen))
        assert isinstance(app.screen, PermissionScreen)
        assert app.screen.ask.title == "Run echo hi > out.txt"
        assert app.screen.ask.options[0].option_id == "accept"
        await pilot.press("1")
        await wait_until(pilot, all_finished(app))
        assert pane.attempt.result is not None and pane.attempt.result.output == "Done."
        [record] = pane.attempt.result.permissions
        assert (record.decision, record.option_id, record.rule) == ("allow_once", "accept", "ask")
    assert (tmp_path / "out.txt").exists()


def agents_file(tmp_path: Path, *presets: str) -> Path:
    path = tmp_path / "agents.toml"
    path.write_text("".join(f"[[agent]]\n{preset}\n" for preset in presets))
    return path


def test_run_records_a_codex_turn_and_continues_it(
    codex: str, codex_home: Path, stand_in: ResponsesStandIn, tmp_path: Path
) -> None:
    stand_in.script(answer("Blue, noted."), answer("It was blue."))
    preset = f'name = "cx"\nprovider = "codex"\ncommand = "{codex}"\nenv = {{ CODEX_HOME = "{codex_home}" }}'
    config = str(agents_file(tmp_path, preset))
    runner = CliRunner()
    first = runner.invoke(main, ["run", "--config", config, "--format", "json", "--prompt", "remember blue"])
    assert first.exit_code == 0, first.output
    record = json.loads(first.stdout)
    assert (record["provider"], record["command"], record["output"]) == (
        "codex",
        [codex, "app-server"],
        "Blue, noted.",
    )
    assert record["session_id"] and record["continuation"] == "resume"
    saved = tmp_path / "first.jsonl"
    saved.write_text(first.stdout)
    args = [
        "run",
        "--config",
        config,
        "--format",
        "json",
        "--continue",
        str(saved),
        "--prompt",
        "which colour?",
    ]
    second = runner.invoke(main, args)
    assert second.exit_code == 0, second.output
    follow_up = json.loads(second.stdout)
    assert (follow_up["output"], follow_up["session_id"]) == ("It was blue.", record["session_id"])
