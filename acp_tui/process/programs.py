"""Where a program lives: the files that running it reads of its own, wherever it is installed.

The sandbox shows an agent nothing of the user's but its workspace, so an agent installed in a home,
or under /tmp (a new user's clone and its venv), would not even start. `installation()` names what
it needs, read-only: the program (through the links that lead to it), the script an interpreter is
given, and, for each program or script, its interpreter (its `#!` line, through `env` on the
agent's PATH), each with the installation it lives in:
- a venv (a `pyvenv.cfg` beside its `bin`), its editable installs (PEP 610's `direct_url.json`), and
  the Python it was made from (the venv's `python` is a link to it);
- a Python installation (`lib/python3.X/os.py` beside its `bin`, the landmark Python itself uses);
- a `node_modules` tree (the outermost one: hoisted dependencies live there).
Only files are read here (no program runs), so a hostile file costs a refused path, never a spawn.
What lies in a folder the agent may write (its cwd, a preset's writable paths: `writable`) is named
as it is, and nothing it says is followed (its `#!` line, its links, a venv's records): the agent
wrote it, and would choose what else its next run is shown. `/` is no installation, though it may
look like one (`/bin/sh`, and `/lib/python3.X/os.py` through the link /lib -> usr/lib).
"""

from __future__ import annotations

import contextlib
import errno
import functools
import json
import os
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path
from urllib.parse import unquote, urlsplit

MAX_HOPS = 8  # interpreters of interpreters: `env` -> node -> ..., never a loop


def resolve(command: str, cwd: str, env: Mapping[str, str]) -> str:
    """The program as a plain spawn would find it (PATH of the agent's environment; a relative path
    from its cwd), or the OSError that spawn would raise."""
    if "/" in command:
        found: str | None = os.path.join(cwd, command)
        if not os.path.isfile(found or ""):
            found = None
    else:
        found = shutil.which(command, mode=os.F_OK, path=env.get("PATH", os.defpath))
    if found is None:
        raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), command)
    if not os.access(found, os.X_OK):
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), command)
    return found


def installation(
    program: str, args: Sequence[str], *, cwd: str, env: Mapping[str, str], writable: Sequence[str] = ()
) -> list[str]:
    """The paths `program args` reads of its own (see the module's doc), absolute, in no order;
    `writable`: the folders the agent may write, as they really are (no link on the way)."""
    found: dict[str, None] = {}
    todo = [program, *filter(None, [_script(args, cwd)])]
    for _ in range(MAX_HOPS):
        if not todo:
            break
        path = todo.pop()
        if path in found:
            continue
        found[path] = None
        real = os.path.realpath(path)
        if any(real == folder or real.startswith(folder.rstrip("/") + "/") for folder in writable):
            continue  # the agent's own: named, never followed
        found.update(dict.fromkeys(_installed_in(Path(path))))
        if (interpreter := _interpreter(path, env)) is not None:
            todo.append(interpreter)
    return list(found)


def _script(args: Sequence[str], cwd: str) -> str | None:
    """What an interpreter is given to run: its first argument that is no option, when it is a file."""
    first = next((arg for arg in args if not arg.startswith("-")), None)
    if first is None:
        return None
    path = os.path.join(cwd, first)
    return os.path.abspath(path) if os.path.isfile(path) else None


def _interpreter(path: str, env: Mapping[str, str]) -> str | None:
    """The program a `#!` line names (`env NAME` found on the agent's PATH), else None."""
    line = b""
    with contextlib.suppress(OSError), open(path, "rb") as file:
        line = file.readline(512)
    if not line.startswith(b"#!"):
        return None
    words = line[2:].decode("utf-8", "replace").split()
    if not words:
        return None
    if os.path.basename(words[0]) != "env":
        return words[0]
    # `env [-S] [NAME=VALUE...] PROGRAM ...`: the first word that is neither an option nor a setting.
    name = next((word for word in words[1:] if not word.startswith("-") and "=" not in word), None)
    return shutil.which(name, path=env.get("PATH", os.defpath)) if name else None


def _installed_in(path: Path) -> list[str]:
    """The installation `path` belongs to, as it is named and where its links lead."""
    places: list[Path] = []
    real = path.resolve()
    for program in dict.fromkeys((path, real)):
        prefix = program.parent.parent
        if program.parent.name != "bin" or prefix == Path("/"):
            continue
        if (prefix / "pyvenv.cfg").is_file():
            places += [prefix, *_editable_installs(prefix)]
        elif any(prefix.glob("lib/python3*/os.py")):
            places.append(prefix)
    if "node_modules" in real.parts:
        places.append(Path(*real.parts[: real.parts.index("node_modules") + 1]))
    return [str(place) for place in places]


def _editable_installs(venv: Path) -> list[Path]:
    """The project folders a venv's editable installs import from (`pip install -e`)."""
    projects: list[Path] = []
    for site in venv.glob("lib/python3*/site-packages"):
        with contextlib.suppress(OSError):
            projects += _editable_projects(str(site), site.stat().st_mtime_ns)
    return projects


@functools.lru_cache(maxsize=64)
def _editable_projects(site: str, changed: int) -> tuple[Path, ...]:
    """Read again only when the folder changed (`changed`, its mtime: a package came or went)."""
    projects = []
    for record in Path(site).glob("*.dist-info/direct_url.json"):
        with contextlib.suppress(OSError, ValueError, LookupError, TypeError, AttributeError):
            said = json.loads(record.read_text(encoding="utf-8"))
            url = urlsplit(said["url"])
            if said.get("dir_info", {}).get("editable") and url.scheme == "file":
                projects.append(Path(unquote(url.path)))
    return tuple(projects)
