"""Every folder of ours from one module (`settings.paths`), and what a reload keeps
(`settings.reload`), without an app."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from acp_tui.core.model import ConfigOptionInfo
from acp_tui.settings import paths
from acp_tui.settings.reload import Choices, reloaded
from acp_tui.settings.schema import AgentPreset, Settings


def test_acp_tui_home_roots_every_folder_and_is_inherited(tmp_path: Path) -> None:
    with paths.rooted_at(tmp_path / "home"):
        home = tmp_path / "home"
        assert paths.config_file() == home / "config" / "agents.toml"
        assert paths.worktrees_dir() == home / "cache" / "worktrees"
        assert paths.demo_scratch_dir() == home / "cache" / "pong"
        assert (paths.traces_dir(), paths.exports_dir()) == (
            home / "state" / "traces",
            home / "state" / "exports",
        )
        assert paths.log_file() == home / "log" / "acp-tui.log"
        assert paths.own_folders()[0] == home  # hidden from a sandboxed agent, as the platform's are
        code = "from acp_tui.settings import paths; print(paths.cache_dir())"
        child = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
        assert child.stdout.strip() == str(home / "cache")
        assert not home.exists()  # asking creates nothing


def test_without_acp_tui_home_the_folders_are_the_platforms(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != paths.HOME_VARIABLE}
    env["XDG_STATE_HOME"] = str(tmp_path / "state")
    code = "from acp_tui.settings import paths; print(paths.traces_dir()); print(paths.log_file())"
    child = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)
    assert child.stdout.splitlines() == [
        str(tmp_path / "state" / "acp-tui" / "traces"),
        str(tmp_path / "state" / "acp-tui" / "log" / "acp-tui.log"),
    ]


def test_a_reload_keeps_f2_choices_the_command_line_agents_and_offers_of_unchanged_commands() -> None:
    old = Settings(
        presets=(
            AgentPreset("a", "agent-a", policy="reject"),
            AgentPreset("b", "agent-b", policy="reject"),
            AgentPreset("c", "agent-c"),
            AgentPreset("given", "from-the-command-line"),
        ),
        source=Path("agents.toml"),
        selected=("a", "given"),
    )
    new = Settings(
        presets=(
            AgentPreset("a", "agent-a", policy="allow"),
            AgentPreset("b", "agent-b2", policy="allow"),
            AgentPreset("d", "agent-d"),
        ),
        source=Path("agents.toml"),
    )
    offered = (ConfigOptionInfo("mode", "Mode", "mode", "ask", ("ask", "auto")),)
    chosen = Choices(
        policies={"a": "reject", "b": "allow-once", "c": "reject"},
        options={"a": {"mode": "auto"}, "c": {"mode": "ask"}},
        sandboxes={"b": "workspace", "c": "workspace"},
        offered={"a": offered, "b": offered},
    )
    settings, kept, overruled = reloaded(old, new, chosen)
    assert settings.names == ("a", "b", "d", "given") and settings.selected == ("a", "given")
    # a: the file's policy followed the file; b: the file changed it, so it overrules F2's pick;
    # the new agent gets the file's.
    assert kept.policies == {"a": "allow", "b": "allow", "d": "reject", "given": "reject"}
    assert overruled == ["b allow (not allow-once)"]
    assert kept.options == {"a": {"mode": "auto"}} and kept.sandboxes == {"b": "workspace"}
    assert kept.offered == {"a": offered}  # b's command changed: what it offers is forgotten
