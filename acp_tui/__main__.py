"""`python -m acp_tui` and the `acp-tui` console script: the command line (`acp_tui.cli`).

`acp-tui` alone, the supervisor on the configured presets, opens without importing click
(`ui.launch`: ~10 ms of its first frame); anything on the command line, shell completion, and a
config that does not load go through the command line's group, which says what is wrong in its
one line.
"""

from __future__ import annotations

import os
import sys

COMPLETE = "_ACP_TUI_COMPLETE"  # how a shell asks click for completions


def main() -> None:
    if len(sys.argv) == 1 and COMPLETE not in os.environ:
        from acp_tui.settings.load import load_settings
        from acp_tui.settings.schema import ConfigError
        from acp_tui.ui.launch import interrupted, supervisor

        try:
            app = supervisor(load_settings, None)
        except ConfigError:
            pass  # the group reads it again and says why it cannot, as it says every usage error
        except KeyboardInterrupt:
            interrupted()
        else:
            try:
                app.run()
            except KeyboardInterrupt:
                interrupted()
            sys.exit(app.return_code or 0)
    from acp_tui.cli.main import main as command_line

    command_line()


if __name__ == "__main__":
    main()
