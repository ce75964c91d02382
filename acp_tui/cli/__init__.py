"""The command line, click only: each command imports what it runs when it runs."""

from acp_tui.cli.main import main

__all__ = ["main"]
