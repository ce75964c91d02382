"""Globs (the standard library's `fnmatch`, linear for them), and the paths a tool call touches: what
path (and command) rules match.

No glob may cost more than linear time: the text an agent sends (a 200 KB path, `aaaa…` against
`*a*a*a*b`) must not stall the event loop that decides it. `fnmatch` compiles a star between two
pieces to an atomic group (Python 3.11 and later), which never backtracks.
"""

from __future__ import annotations

import fnmatch
import functools
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass

from acp_tui.policy.ask import PermissionAsk
from acp_tui.policy.shell import command_lines, is_string_list, redirect_paths

# Raw-input fields holding a path: Claude Code (`file_path`, `notebook_path`, `path`), the ACP
# TypeScript example (`path`), others (`filePath`, `paths`, `abs_path`); Codex's patch approval
# `changes` (keys are paths) and its exec approval `parsed_cmd[].path`.
PATH_FIELDS = ("path", "paths", "file_path", "filePath", "notebook_path", "abs_path")

# Longer than the kernel takes: no real file, so a path rule does not need to read it. An allow
# rule never matches one, a reject rule always does.
PATH_MAX = 4096


# Wildcards: `*`, `?`, `[...]` ---------------------------------------------------------------------


@functools.lru_cache(maxsize=1024)
def wildcard(glob: str) -> re.Pattern[str]:
    """`glob` compiled: `*` matches any run of characters, `?` one character, `[...]` one of a class
    (`[!...]` or, as in bash, `[^...]`: not of it); a newline is a character like any other; a
    reversed range (`[b-a]`) matches nothing, as in bash."""
    return re.compile(fnmatch.translate(_caret_classes(glob)))


def _caret_classes(glob: str) -> str:
    """bash's `[^...]` as fnmatch's `[!...]` (fnmatch takes the `^` as a member). A class is found as
    fnmatch finds it: a `]` right after the opening (or its `!`/`^`) is a member."""
    parts, i = [], 0
    while (opening := glob.find("[", i)) >= 0:
        j = opening + 1 + (glob[opening + 1 : opening + 2] in ("!", "^"))
        j += glob[j : j + 1] == "]"
        closing = glob.find("]", j)
        if closing < 0:
            break
        caret = glob[opening + 1 : opening + 2] == "^"
        parts += [glob[i:opening], "[!" if caret else "[", glob[opening + 1 + caret : closing + 1]]
        i = closing + 1
    return "".join(parts) + glob[i:]


# Path globs: `**` spans directories ---------------------------------------------------------------


class _Dirs:
    """The unit of a path glob that matches any number of whole segments (none included)."""


_DIRS = _Dirs()
Unit = re.Pattern[str] | str | _Dirs  # a segment's glob, a segment written literally, or `**`


@dataclass(frozen=True)
class PathGlob:
    """A path glob as sequences of units, one per segment: a `wildcard` matches one segment, `_DIRS`
    any number of them. Matched segment by segment, greedily (a `**` gives back one segment at a
    time, never more: linear in the segments for each unit)."""

    alternatives: tuple[tuple[Unit, ...], ...]

    def match(self, path: str) -> bool:
        segments = path.split("/")
        return any(_match_segments(units, segments) for units in self.alternatives)


def _match_segments(units: tuple[Unit, ...], segments: list[str]) -> bool:
    """The two-pointer wildcard match over segments: on a mismatch, the last `**` takes one more
    segment; it never goes back further, so the cost is at most len(units) x len(segments)."""
    unit = segment = 0
    star, taken = -1, 0
    while segment < len(segments):
        here = units[unit] if unit < len(units) else None
        if isinstance(here, _Dirs):
            star, taken = unit, segment
            unit += 1
        elif here is not None and _fits(here, segments[segment]):
            unit += 1
            segment += 1
        elif star >= 0:
            unit, taken = star + 1, taken + 1
            segment = taken
        else:
            return False
    return all(isinstance(rest, _Dirs) for rest in units[unit:])


def _fits(unit: re.Pattern[str] | str, segment: str) -> bool:
    return unit == segment if isinstance(unit, str) else unit.match(segment) is not None


_WILD = re.compile(r"[*?\[]")


@functools.lru_cache(maxsize=512)
def path_glob(glob: str) -> PathGlob:
    """A path glob: a segment `**` spans directories (`a/**/b`: none or more between; a last `**`:
    one or more, so `a/**` is everything under a), `**` inside a segment (`a**b`) too; `*`, `?` and
    `[...]` stay within one segment; a trailing `/` means everything under it."""
    glob = os.path.expanduser(glob)
    if glob.endswith("/"):
        glob += "**"
    segments = glob.split("/")
    alternatives: list[tuple[Unit, ...]] = [()]
    for index, segment in enumerate(segments):
        if segment == "**":
            last = index == len(segments) - 1
            options: list[tuple[Unit, ...]] = [(wildcard("*"), _DIRS) if last else (_DIRS,)]
        else:
            options = _segment_units(segment)
        alternatives = [done + option for done in alternatives for option in options]
    return PathGlob(tuple(alternatives))


def _segment_units(segment: str) -> list[tuple[Unit, ...]]:
    """`X**Y` within a segment: either one segment `X*Y`, or `X*`, any segments, then `*Y`."""
    head, stars, tail = segment.partition("**")
    if not stars:
        return [(segment,) if not _WILD.search(segment) else (wildcard(segment),)]
    within = _segment_units(f"{head}*{tail}")
    across = [(wildcard(f"{head}*"), _DIRS, *rest) for rest in _segment_units(f"*{tail}")]
    return within + across


# Placing paths -------------------------------------------------------------------------------------


def paths_match(globs: Sequence[str], paths: Sequence[str], cwd: str | None, *, every: bool) -> bool:
    """`every`: each path matches a glob; otherwise one does. A glob starting with `/` or `~` is
    absolute; any other is taken from `cwd`, and a path outside `cwd` never matches it. A path is
    matched as written and where its links lead: `every` needs both to match, otherwise either does.
    A path longer than PATH_MAX matches when `every` is false, never when it is true."""
    if not paths:
        return False
    compiled = [(_is_absolute(glob), path_glob(glob)) for glob in globs]

    def placed_hit(absolute: str | None, relative: str | None) -> bool:
        for is_absolute, pattern in compiled:
            target = absolute if is_absolute else relative
            if target is not None and pattern.match(target):
                return True
        return False

    def hit(path: str) -> bool:
        if _too_long(path, cwd):
            return not every
        matched = [placed_hit(absolute, relative) for absolute, relative in _placed(path, cwd)]
        return all(matched) if every else any(matched)

    return all(hit(p) for p in paths) if every else any(hit(p) for p in paths)


def _is_absolute(glob: str) -> bool:
    return glob.startswith(("/", "~"))


def _too_long(path: str, cwd: str | None) -> bool:
    if len(path) > PATH_MAX:  # before any other work: a 200 KB path costs nothing more
        return True
    size = len(path.encode("utf-8", "surrogatepass"))
    return size > PATH_MAX or (not path.startswith(("/", "~")) and size + len(cwd or "") + 1 > PATH_MAX)


def _placed(path: str, cwd: str | None) -> list[tuple[str | None, str | None]]:
    """A path as (absolute, relative to cwd), as written and, when it differs, where its links
    lead; either part is None when it cannot be said (no cwd, or the path is outside it)."""
    path = os.path.expanduser(path)
    base = cwd if cwd and os.path.isabs(cwd) else None  # a relative cwd says nothing
    if not os.path.isabs(path) and base is None:
        relative = os.path.normpath(path)
        return [(None, None if relative == ".." or relative.startswith("../") else relative)]
    joined = os.path.join(base, path) if base else path
    written = _within(os.path.normpath(joined), os.path.normpath(base) if base else None)
    led = _within(_resolved(joined), _resolved(base) if base else None)
    return [written] if led == written else [written, led]


def _within(absolute: str, base: str | None) -> tuple[str, str | None]:
    if base is None or os.path.commonpath([base, absolute]) != base:
        return absolute, None
    return absolute, os.path.relpath(absolute, base)


def _resolved(path: str) -> str:
    """Where an absolute path leads: the links of its longest existing prefix followed, `..` taken
    after them as the kernel does; the rest, which no link can be part of, as written. The one
    place a policy reads the file system: a link the agent planted (`src/link -> /outside`) must
    not make a write outside its cwd look inside it."""
    parts = path.split("/")
    # Existence only shrinks along a path's prefixes: find the longest existing one by halves.
    low, high = 1, len(parts)
    while low < high:
        middle = (low + high + 1) // 2
        if os.path.lexists("/".join(parts[:middle]) or "/"):
            low = middle
        else:
            high = middle - 1
    try:
        head = os.path.realpath("/".join(parts[:low]) or "/")
    except (OSError, ValueError):  # a NUL in the path: no file has that name
        head = "/".join(parts[:low]) or "/"
    return os.path.normpath(os.path.join(head, *parts[low:]))


# What a tool call touches ------------------------------------------------------------------------


@dataclass(frozen=True)
class Touched:
    """The paths a tool call touches: those it names, and those its command line redirects to."""

    named: list[str]  # `locations` (and `diff` content), then the path-like raw-input fields
    redirected: list[str]  # the files its command line's redirections open
    known: bool  # every redirection's file is known (none expands, none follows a `cd`)


def touched_paths(ask: PermissionAsk) -> Touched:
    found = [path for path in ask.locations if path]
    raw = ask.raw_input
    command_cwd: str | None = None
    if isinstance(raw, dict):
        for name in PATH_FIELDS:
            value = raw.get(name)
            if isinstance(value, str) and value:
                found.append(value)
            elif is_string_list(value):
                found.extend(item for item in value if item)
        changes = raw.get("changes")
        if isinstance(changes, dict):
            found.extend(key for key in changes if isinstance(key, str) and key)
        # Codex runs its command in its raw input's `cwd`: relative paths of the command are from there.
        if isinstance(raw.get("cwd"), str) and os.path.isabs(raw["cwd"]):
            command_cwd = raw["cwd"]
        parsed = raw.get("parsed_cmd")
        if isinstance(parsed, list):
            found.extend(
                _from(command_cwd, item["path"])
                for item in parsed
                if isinstance(item, dict) and isinstance(item.get("path"), str)
            )
    redirected, known = redirect_paths(command_lines(raw))
    redirected = [_from(command_cwd, path) for path in redirected]
    return Touched(list(dict.fromkeys(found)), list(dict.fromkeys(redirected)), known)


def _from(cwd: str | None, path: str) -> str:
    return os.path.join(cwd, path) if cwd and not path.startswith("~") else path
