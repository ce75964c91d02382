"""`acp-tui` as its command line runs it, for streaming.py's keys on a pty: at quit, before anything
is disposed, each pane's answer as shown (`RunPane.answer.text`) is written to the file that
`ACP_TUI_BENCH_ANSWERS` names (JSON, agent -> text), so that the benchmark can check it is exact.

    python pty_app.py [acp-tui's options]
"""

import json
import os
from pathlib import Path

from acp_tui.cli.main import main
from acp_tui.ui.app import SupervisorApp

_quit = SupervisorApp.action_quit


def write_answers(app: SupervisorApp) -> None:
    answers = {pane.agent: pane.answer.text for pane in app.main_screen.panes()}
    Path(os.environ["ACP_TUI_BENCH_ANSWERS"]).write_text(json.dumps(answers))


async def action_quit(self: SupervisorApp) -> None:
    write_answers(self)
    await _quit(self)


SupervisorApp.action_quit = action_quit  # type: ignore[method-assign]

if __name__ == "__main__":
    main()
