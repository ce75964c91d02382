"""The app in a browser (`acp-tui serve`): needs the `web` extra (textual-serve)."""
