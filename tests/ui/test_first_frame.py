"""The first frame pays for nothing the first round needs: no ACP SDK, and no pydantic with the demo agents.

The cause of a threefold regression of the first frame (issue 20) was the SDK and pydantic imported
before it. Here the real `acp-tui` runs in a real pseudo-terminal; a hook in the child takes the
list of its modules at the first frame Textual writes to the terminal (`App._display`), before
anything else can run. Everything that loads the SDK starts after that frame (`on_ready`), so the
list is the same at every run.

With a config file pydantic validates it before the app starts (that is `settings.load`'s job, and
the reason a file's first start costs more); the SDK still waits for the first frame.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.ui.test_terminal import in_a_pty

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a Linux pty")

# Run in the child: note the modules and the CSS read at the first frame painted, then go on as
# `acp-tui` does.
CHILD = """
import json, sys
from textual.app import App

noted, display = sys.argv[1], App._display

def first_display(self, screen, renderable):
    display(self, screen, renderable)
    if renderable is not None and not hasattr(App, "_noted"):
        App._noted = True
        css = sorted(name for _, name in self.stylesheet.source)
        with open(noted, "w") as f:
            json.dump({"modules": sorted(sys.modules), "css": css}, f)

App._display = first_display
from acp_tui.__main__ import main
sys.argv = ["acp-tui", *sys.argv[2:]]
main()
"""


def first_frame(tmp_path: Path, *args: str) -> dict[str, list[str]]:
    """The modules imported and the CSS read (`Class.DEFAULT_CSS`, files) at the first frame."""
    noted = tmp_path / "first-frame.json"
    with in_a_pty(["-c", CHILD, str(noted), *args], tmp_path) as terminal:
        terminal.wait_for(lambda: noted.exists() and b"send to:" in terminal.seen())
        terminal.type(b"\x03")  # ctrl+c: no run is live, so it quits at once (spares disposed)
        terminal.process.wait(timeout=20)
    found: dict[str, list[str]] = json.loads(noted.read_text())
    return found


def modules_at_first_frame(tmp_path: Path, *args: str) -> list[str]:
    return first_frame(tmp_path, *args)["modules"]


def sdk_or_pydantic(modules: list[str]) -> list[str]:
    """The SDK, pydantic, and anyio's backend (a run's task group loads it: ~30 ms)."""
    return [
        name for name in modules if name == "acp" or name.startswith(("acp.", "pydantic", "anyio._backends"))
    ]


def test_nothing_of_the_sdk_nor_pydantic_before_the_first_frame_with_the_demo_agents(tmp_path: Path) -> None:
    modules = modules_at_first_frame(tmp_path)
    assert "acp_tui.ui.screens.main_screen" in modules  # the frame was the app's
    assert sdk_or_pydantic(modules) == []


def test_with_a_config_file_the_sdk_still_waits_for_the_first_frame(tmp_path: Path) -> None:
    config = tmp_path / "agents.toml"
    config.write_text(f'warm = false\n\n[[agent]]\nname = "echo"\ncommand = {json.dumps(sys.executable)}\n')
    modules = modules_at_first_frame(tmp_path, "--config", str(config))
    assert "pydantic" in modules  # the file was validated
    assert [name for name in sdk_or_pydantic(modules) if not name.startswith("pydantic")] == []
    # An option is the command line's (click): its subcommands still wait until one is invoked.
    assert [name for name in modules if name.startswith("acp_tui.cli.")] == [
        "acp_tui.cli.common",
        "acp_tui.cli.main",
    ]


def test_the_first_frame_imports_no_pane_nor_markdown_nor_a_screen_it_does_not_show(tmp_path: Path) -> None:
    """Before a round there is no pane to draw: the pane's modules (Markdown's parser and renderer
    among them) and the screens not shown come with the first round, or when opened; `acp-tui`
    alone opens without the command line's parser (click) nor any of its subcommands; the runs'
    vocabulary (`core.model`, `core.events`), the policies, the agents' questions and the
    slash-command menu wait until one is needed, the prompt's text box until right after the frame;
    so do the core's config of a run, the settings file's own tables, the log (routed after the
    frame), the spares' keeper and the sessions' store. The check boxes are ours, not Textual's
    Checkbox (its module and CSS wait for a dialog that asks for one)."""
    found = first_frame(tmp_path)
    modules = found["modules"]
    assert [name for name in modules if name.startswith(("acp_tui.cli", "click"))] == []
    panes = (
        "acp_tui.ui.widgets.pane_view",
        "acp_tui.ui.widgets.run_pane",
        "acp_tui.ui.widgets.answer_document",
    )
    assert [
        name for name in modules if name in panes or name.startswith(("markdown_it", "rich.markdown"))
    ] == []
    screens = [name for name in modules if name.startswith("acp_tui.ui.screens.")]
    assert sorted(screens) == [
        "acp_tui.ui.screens.grid_screen",
        "acp_tui.ui.screens.main_screen",
        "acp_tui.ui.screens.round_diffs",
    ]
    later = (
        "acp_tui.core.model",
        "acp_tui.core.events",
        "acp_tui.policy",
        "acp_tui.core.elicitation",
        "acp_tui.ui.widgets.command_menu",
        "acp_tui.ui.slash",
        "secrets",
        "acp_tui.settings.provider_config",
        "acp_tui.settings.file_tables",
        "acp_tui.settings.logs",
        "logging.handlers",
        "acp_tui.session.warm",
        "acp_tui.session.saved",  # the sessions kept: opened at the first record
        "acp_tui.ui.widgets.prompt_area",  # the prompt's text box: its stand-in draws the first frame
        "textual.widgets._text_area",
        "textual.document",
    )
    assert [name for name in modules if name.startswith(later)] == []
    assert "textual.widgets._toggle_button" not in modules
    # Nor the CSS of what it does not show (the menu, the text box), nor all of Button's for one button.
    shown_later = (
        "CommandMenu.DEFAULT_CSS",
        "Button.DEFAULT_CSS",
        "TextArea.DEFAULT_CSS",
        "ToggleButton.DEFAULT_CSS",
    )
    assert [name for name in found["css"] if name in shown_later] == []
