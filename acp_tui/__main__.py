"""`python -m acp_tui`: the same command line as `acp-tui`."""

from acp_tui.cli.main import main

if __name__ == "__main__":
    main()
