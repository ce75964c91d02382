"""Reading a file the user named (a config, a trace, records, settings to import): any failure is
one line naming the file, never a traceback."""

from __future__ import annotations

from pathlib import Path


class UnreadableFile(ValueError):
    """The file could not be read as UTF-8 text; the message says why, in one line."""


def read_text(path: str | Path, *, label: str | None = None, what: str = "file") -> str:
    """The file's text. `label` is how the user named it (default: the path); `what`, what it
    should have been, for a directory given instead."""
    label = label or str(path)
    try:
        return Path(path).read_bytes().decode("utf-8")
    except FileNotFoundError:
        raise UnreadableFile(f"{label}: no such file") from None
    except IsADirectoryError:
        raise UnreadableFile(f"{label}: is a directory, not a {what}") from None
    except OSError as exc:
        raise UnreadableFile(f"{label}: cannot read it: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise UnreadableFile(f"{label}: not UTF-8 text") from None
