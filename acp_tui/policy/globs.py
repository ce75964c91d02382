"""Path globs, and the paths a tool call touches: what a path rule matches."""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Sequence

from acp_tui.policy.ask import PermissionAsk
from acp_tui.policy.shell import is_string_list

# Raw-input fields holding a path: Claude Code (`file_path`, `notebook_path`, `path`), the ACP
# TypeScript example (`path`), others (`filePath`, `paths`, `abs_path`); Codex's patch approval
# `changes` (keys are paths) and its exec approval `parsed_cmd[].path`.
PATH_FIELDS = ("path", "paths", "file_path", "filePath", "notebook_path", "abs_path")


def touched_paths(ask: PermissionAsk) -> list[str]:
    """The paths a tool call touches: its `locations`, then the path-like raw-input fields."""
    found = [path for path in ask.locations if path]
    raw = ask.raw_input
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
        parsed = raw.get("parsed_cmd")
        if isinstance(parsed, list):
            found.extend(
                item["path"]
                for item in parsed
                if isinstance(item, dict) and isinstance(item.get("path"), str)
            )
    return list(dict.fromkeys(found))


def paths_match(globs: Sequence[str], paths: Sequence[str], cwd: str | None, *, every: bool) -> bool:
    """`every`: each path matches a glob; otherwise one does. A glob starting with `/` or `~` is
    absolute; any other is taken from `cwd`, and a path outside `cwd` never matches it."""
    if not paths:
        return False
    compiled = [(_is_absolute(glob), path_glob(glob)) for glob in globs]

    def hit(path: str) -> bool:
        absolute, relative = _placed(path, cwd)
        for is_absolute, pattern in compiled:
            target = absolute if is_absolute else relative
            if target is not None and pattern.match(target):
                return True
        return False

    return all(hit(p) for p in paths) if every else any(hit(p) for p in paths)


def _is_absolute(glob: str) -> bool:
    return glob.startswith(("/", "~"))


def _placed(path: str, cwd: str | None) -> tuple[str | None, str | None]:
    """A path as (absolute, relative to cwd): either is None when it cannot be said (no cwd, or
    the path is outside it)."""
    path = os.path.expanduser(path)
    base = os.path.normpath(cwd) if cwd and os.path.isabs(cwd) else None  # a relative cwd says nothing
    if os.path.isabs(path):
        absolute: str | None = os.path.normpath(path)
    elif base is not None:
        absolute = os.path.normpath(os.path.join(base, path))
    else:
        absolute = None
    if absolute is not None:
        if base is None or os.path.commonpath([base, absolute]) != base:
            return absolute, None
        return absolute, os.path.relpath(absolute, base)
    relative = os.path.normpath(path)
    return None, None if relative == ".." or relative.startswith("../") else relative


@functools.lru_cache(maxsize=512)
def path_glob(glob: str) -> re.Pattern[str]:
    """A path glob as a regex: `**` spans directories (`a/**` is everything under a), `*` and `?`
    stay within one, `[...]` is a class; a trailing `/` means everything under it."""
    glob = os.path.expanduser(glob)
    if glob.endswith("/"):
        glob += "**"
    out, i, n = [], 0, len(glob)
    while i < n:
        if glob.startswith("**", i):
            if glob.startswith("**/", i):
                out.append("(?:.*/)?")
                i += 3
            else:
                out.append(".*")
                i += 2
            continue
        char = glob[i]
        i += 1
        if char == "*":
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        elif char == "[" and (end := glob.find("]", i + 1)) != -1:
            body = glob[i:end]
            negate = body.startswith(("!", "^"))
            body = re.escape(body[1:] if negate else body).replace("\\-", "-")
            out.append(f"[{'^/' if negate else ''}{body}]")
            i = end + 1
        else:
            out.append(re.escape(char))
    try:
        return re.compile("".join(out) + r"\Z")
    except re.error:  # a class such as `[b-a]`: the glob is taken literally
        return re.compile(re.escape(glob) + r"\Z")
