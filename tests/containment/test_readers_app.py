"""The app's readers (issue 16): ctrl+r on a config nested too deeply or holding NaN says so in one
line and keeps the settings; the trace screen reads a hostile trace in a thread and shows each bad
line as what is wrong with it, between the frames."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Log

from acp_tui.settings.load import load_settings
from acp_tui.ui.app import SupervisorApp
from acp_tui.ui.screens.trace_screen import TraceScreen
from tests.ui.helpers import wait_until

SIZE = (150, 40)
AGENT = '[[agent]]\nname = "a"\ncommand = "x"\n'


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        (f"x = {'[' * 5000}{']' * 5000}\n" + AGENT, "invalid TOML: nested too deeply"),
        (AGENT + "handshake_timeout = nan\n", '"handshake_timeout" must be a positive number of seconds'),
        (AGENT + "run_timeout = inf\n", '"run_timeout" must be a positive number of seconds'),
    ],
)
async def test_ctrl_r_on_a_hostile_config_says_why_in_one_line_and_keeps_the_settings(
    tmp_path: Path, content: str, reason: str
) -> None:
    config = tmp_path / "agents.toml"
    config.write_text(AGENT, encoding="utf-8")
    app = SupervisorApp(load_settings(config))
    notes: list[str] = []
    notify = app.notify

    def noted(message: str, **kwargs: Any) -> None:
        notes.append(message)
        notify(message, **kwargs)

    app.notify = noted  # type: ignore[method-assign]
    async with app.run_test(size=SIZE) as pilot:
        old = app.settings
        config.write_text(content, encoding="utf-8")
        await pilot.press("ctrl+r")
        await wait_until(pilot, lambda: any("Config not reloaded" in note for note in notes))
        [line] = notes
        assert "\n" not in line and line.endswith(reason)
        assert app.settings is old and app.is_running


def trace_line(frame: object, t: object = 0) -> str:
    return '{"t": ' + str(t) + ', "dir": "in", "frame": ' + str(frame) + "}"


async def test_the_trace_screen_shows_bad_lines_as_errors_between_the_frames(tmp_path: Path) -> None:
    good = json.dumps({"jsonrpc": "2.0", "method": "session/update", "params": {}})
    path = tmp_path / "agent-20250101-000000-1.jsonl"
    path.write_text(
        "\n".join(
            [
                trace_line(good),
                "[1, 2, 3]",  # JSON, but no trace line
                "not json at all",
                trace_line('"a string frame"'),
                trace_line('{"a": ' * 5000 + "1" + "}" * 5000),
                trace_line(good, t="NaN"),
                trace_line(good, t="1e999"),
                trace_line(good, t=2.5),
            ]
        )
        + "\n",
        encoding="utf-8",
    )
    app = SupervisorApp(load_settings(None, ["a=x"]))
    async with app.run_test(size=SIZE) as pilot:
        await app.push_screen(TraceScreen("agent", str(path)))
        await wait_until(pilot, lambda: isinstance(app.screen, TraceScreen) and app.screen.loaded)
        lines = list(app.screen.query_one(Log).lines)
    assert len(lines) == 8
    assert "session/update" in lines[0] and "session/update" in lines[7] and "2.500" in lines[7]
    assert lines[1:7] == [
        '✗ line 2: not a trace line (expected {"t", "dir", "frame"})',
        "✗ line 3: not JSON",
        '✗ line 4: "frame" must be a JSON-RPC message (an object)',
        "✗ line 5: nested deeper than 128",
        "✗ line 6: NaN is not a JSON number",
        "✗ line 7: 1e999 is out of range for a number",
    ]
