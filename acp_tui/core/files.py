"""Files we read for the user and files we write: the one place that touches them.

Reading a file the user named (a config, a trace, records, settings to import): any failure is one
line naming the file, never a traceback; JSON nested absurdly deep or holding `NaN` is refused the
same way.

Writing: an agent can plant a symbolic link at any name it can guess (a trace's, an export's, a
marker's), so nothing here follows one. A new file is created with `O_CREAT | O_EXCL | O_NOFOLLOW`
(a name already taken, by a link or anything else, is never opened); a file that is replaced is
written to a fresh temporary file beside it and renamed into place (a rename replaces a link, it
does not write through it). Folders of ours are made without following a link at their last step.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import stat
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import IO, Any

MAX_JSON_DEPTH = 128  # deeper is no record, trace or settings file of ours


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


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _finite(text: str) -> float:
    value = float(text)
    if math.isinf(value):  # `1e999` is Infinity spelled as a number
        raise ValueError(f"{text[:24]} is out of range for a number")
    return value


# Made once: `json.loads` with options makes a decoder (and its scanner) at every call, and the
# transport parses every frame an agent writes (dozens a second each).
_strict = json.JSONDecoder(parse_constant=_no_constant, parse_float=_finite)


def parse_json(text: str) -> Any:
    """`json.loads`, strictly: no `NaN` / `Infinity` (nor a number too large for a float), nesting
    at most MAX_JSON_DEPTH deep. Raises ValueError (with a short reason) for anything else."""
    if text.count("[") + text.count("{") > MAX_JSON_DEPTH:
        # Cheap to rule out first; json's own recursion would give RecursionError far deeper.
        try:
            value = _strict.decode(text)
        except RecursionError:
            raise ValueError(f"nested deeper than {MAX_JSON_DEPTH}") from None
        if json_depth(value) > MAX_JSON_DEPTH:
            raise ValueError(f"nested deeper than {MAX_JSON_DEPTH}")
        return value
    return _strict.decode(text)


class JsonError(ValueError):
    """Text that is not JSON, or JSON we refuse, in a few words (`reason`): `not JSON`, or what is
    refused (`NaN`, a number out of range, nesting too deep). `line`: where, in a file read line by
    line."""

    def __init__(self, reason: str, line: int | None = None) -> None:
        super().__init__(reason if line is None else f"line {line}: {reason}")
        self.reason = reason
        self.line = line


def json_value(text: str) -> Any:
    """One JSON value, strictly (`parse_json`), or a `JsonError` saying why not."""
    try:
        return parse_json(text)
    except json.JSONDecodeError:
        raise JsonError("not JSON") from None
    except ValueError as exc:
        raise JsonError(str(exc)) from None


def json_values(text: str) -> list[tuple[int, Any]]:
    """What a file of JSON holds, each value with the number of the line it starts on: one document
    (over one line or pretty-printed over several), else one value a line (JSON lines; blank lines
    are skipped). The first line that is not JSON raises a `JsonError` naming it."""
    try:
        return [(1, parse_json(text))]
    except json.JSONDecodeError:
        pass  # JSON lines, or broken: read line by line, which names the bad line
    except ValueError as exc:
        raise JsonError(str(exc)) from None
    values = []
    # Lines end at "\n" only: JSON leaves U+2028 and U+0085 unescaped, which splitlines() splits at.
    for number, line in enumerate(text.split("\n"), start=1):
        if line.strip():
            try:
                values.append((number, json_value(line)))
            except JsonError as exc:
                raise JsonError(exc.reason, number) from None
    return values


def json_depth(value: Any) -> int:
    """How deep containers nest in `value`, without recursion."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            item = item.values()
        elif not isinstance(item, list):
            continue
        deepest = max(deepest, depth)
        stack.extend((child, depth + 1) for child in item if isinstance(child, dict | list))
    return deepest


# Writing ---------------------------------------------------------------------------------------

_APPEND = os.O_WRONLY | os.O_CREAT | os.O_APPEND | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
_NEW_FILE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


def open_new(path: str | Path, *, mode: int = 0o600, encoding: str = "utf-8") -> IO[str]:
    """A new text file at `path`, opened for writing; FileExistsError when the name is taken
    (whatever takes it: a file, a folder, a link)."""
    fd = os.open(path, _NEW_FILE, mode)
    return os.fdopen(fd, "w", encoding=encoding, errors="backslashreplace")


def write_new(path: str | Path, text: str, *, mode: int = 0o600) -> None:
    """Write `text` to a new file at `path` (see `open_new`)."""
    with open_new(path, mode=mode) as file:
        file.write(text)


def append_line(path: str | Path, line: str, *, mode: int = 0o600) -> None:
    """Append `line` (and a newline) to `path`, made if missing; a link there is never followed."""
    fd = os.open(path, _APPEND, mode)
    try:
        os.write(fd, (line + "\n").encode("utf-8", "backslashreplace"))
    finally:
        os.close(fd)


def replace_file(path: str | Path, text: str, *, mode: int = 0o600) -> None:
    """Write `text` to `path` through a temporary file renamed over it: a link at `path` is
    replaced, never written through."""
    path = Path(path)
    fd, scratch = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", errors="backslashreplace") as file:
            file.write(text)
        os.chmod(scratch, mode)
        os.replace(scratch, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(scratch)
        raise


def create_unique(
    directory: str | Path, stem: str, suffixes: Iterable[str]
) -> tuple[Path, dict[str, IO[str]]]:
    """New files `stem<suffix>` in `directory`, one per suffix, all created at once under one free
    stem (`stem`, `stem-2`, `stem-3`, ...): never an existing name, never through a link."""
    directory = Path(directory)
    suffixes = list(suffixes)
    for n in range(1, 10_000):
        base = directory / (stem if n == 1 else f"{stem}-{n}")
        opened: dict[str, IO[str]] = {}
        try:
            for suffix in suffixes:
                opened[suffix] = open_new(f"{base}{suffix}")
        except FileExistsError:
            for suffix, file in opened.items():
                file.close()
                with contextlib.suppress(OSError):
                    os.unlink(f"{base}{suffix}")
            continue
        return base, opened
    raise FileExistsError(f"{directory}: no free name for {stem}")


def private_dir(path: str | Path) -> Path:
    """A folder of ours at `path`, made if missing (0700), that is a real folder owned by us: a
    link or someone else's folder there raises OSError instead of being written into."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with contextlib.suppress(FileExistsError):
        os.mkdir(path, 0o700)
    info = os.lstat(path)
    if not stat.S_ISDIR(info.st_mode):
        raise NotADirectoryError(f"{path}: not a folder (a link or a file is there)")
    if hasattr(os, "geteuid") and info.st_uid != os.geteuid():
        raise PermissionError(f"{path}: not our folder (owned by uid {info.st_uid})")
    return path


_O_PATH = getattr(os, "O_PATH", None)


def restore_owner_bits(top: str | Path) -> None:
    """u+rwx on `top` and on every folder under it, following no link: an agent may `chmod 555`
    a folder of its own (a worktree, a git directory) or folders in it, and nothing in them could
    be deleted."""
    give_owner_rwx(str(top))
    for _, folders, _, folder_fd in os.fwalk(top, follow_symlinks=False):
        for name in folders:  # before fwalk goes into them (top-down)
            give_owner_rwx(name, folder_fd)


def give_owner_rwx(name: str, dir_fd: int | None = None) -> None:
    """u+rwx on the folder `name` (relative to `dir_fd`), never through a link; quietly not, when
    it cannot be (gone, not ours)."""
    with contextlib.suppress(OSError):
        if _O_PATH is None:  # no O_PATH (macOS): lchmod is there instead
            mode = os.lstat(name, dir_fd=dir_fd).st_mode
            if stat.S_ISDIR(mode) and mode & 0o700 != 0o700:
                os.chmod(name, stat.S_IMODE(mode) | 0o700, dir_fd=dir_fd, follow_symlinks=False)
            return
        # A handle on the folder itself (a link is refused), then its mode changed through it.
        fd = os.open(name, _O_PATH | os.O_NOFOLLOW | os.O_DIRECTORY | os.O_CLOEXEC, dir_fd=dir_fd)
        try:
            mode = stat.S_IMODE(os.fstat(fd).st_mode)
            if mode & 0o700 != 0o700:
                os.chmod(f"/proc/self/fd/{fd}", mode | 0o700)
        finally:
            os.close(fd)
