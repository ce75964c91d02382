"""`acp-tui policy import claude SETTINGS.json`: Claude Code's permission rules as a TOML policy.

Claude Code's `permissions.allow` / `ask` / `deny` hold rules such as `Bash(git status:*)`,
`Read(./src/**)`, `Edit`, `WebFetch`. Each becomes a rule of one policy with `order = "deny-first"`
(Claude Code tries deny, then ask, then allow rules). A translation is exact, or broader only where
that is safe (a deny may cover more than it said; an allow never does); any other rule is written as
a comment saying why it has no equivalent. The mapping is documented in docs/policy-lab.md.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from acp_tui.core.text import one_line, without_surrogates

ACTIONS = {"deny": "reject", "ask": "ask", "allow": "allow"}  # in Claude Code's order
EDIT_TOOLS = ("Edit", "Write", "MultiEdit", "NotebookEdit")
SEARCH_TOOLS = ("Grep", "Glob", "LS")
_RULE = re.compile(r"^(?P<tool>[A-Za-z_][A-Za-z0-9_]*)(?:\((?P<spec>.*)\))?$", re.DOTALL)


class ClaudeImportError(ValueError):
    """A settings file that cannot be read as Claude Code's, said in one line."""


@dataclass(frozen=True)
class Translated:
    """One Claude Code rule: the TOML fields of its rule, or the reason it has none."""

    source: str  # e.g. `deny Bash(git push:*)`
    fields: dict[str, Any] | None
    note: str | None = None  # why it has no equivalent, or how it is approximate


def translate_file(path: Path, *, name: str = "claude") -> str:
    from acp_tui.core.files import UnreadableFile, parse_json, read_text

    try:
        data = parse_json(read_text(path, what="settings file"))
    except UnreadableFile as exc:
        raise ClaudeImportError(str(exc)) from None
    except ValueError as exc:
        raise ClaudeImportError(f"{path}: not JSON: {exc}") from None
    permissions = data.get("permissions") if isinstance(data, dict) else None
    if not isinstance(permissions, dict):
        raise ClaudeImportError(f'{path}: no "permissions" object (a Claude Code settings.json has one)')
    for key in ACTIONS:
        value = permissions.get(key, [])
        if not isinstance(value, list) or not all(isinstance(rule, str) for rule in value):
            raise ClaudeImportError(f'{path}: "permissions.{key}" must be a list of strings')
    if not re.fullmatch(r"[A-Za-z0-9_-]+", name):
        raise ClaudeImportError(f'--name "{name}": letters, digits, "-" and "_" only')
    return to_toml(permissions, name=name, source=path, base=project_root(path))


def project_root(settings: Path) -> Path:
    """What Claude Code's `/path` rules are relative to: the project of `.claude/settings.json`."""
    folder = settings.resolve().parent
    return folder.parent if folder.name == ".claude" else folder


def translate(claude_action: str, rule: str, *, base: Path) -> Translated:
    action = ACTIONS[claude_action]
    source = f"{claude_action} {rule}"
    deny = action == "reject"
    match = _RULE.match(rule.strip())
    if match is None:
        return Translated(source, None, "not a rule Claude Code would read")
    tool, spec = match.group("tool"), match.group("spec")
    if spec is not None and spec.strip() in ("", "*"):
        spec = None  # `Bash(*)` is `Bash`
    fields: dict[str, Any] = {"name": source, "action": action}
    if tool == "Bash":
        fields["kind"] = ["execute"]
        globs = command_globs(spec) if spec is not None else []
        if globs:
            fields["command"] = globs
        return Translated(source, fields)
    if tool == "Read" or tool in EDIT_TOOLS:
        if tool == "Read":
            # Claude Code's Read rules cover every tool that reads files (Grep, Glob, LS too).
            fields["kind"] = ["read", "search"]
        else:
            # Edit rules cover every tool that changes files; an allow stays with `edit`.
            fields["kind"] = ["edit", "delete", "move"] if deny else ["edit"]
        if spec is not None:
            fields["path"] = [path_glob(spec, base)]
        return Translated(source, fields)
    if tool in SEARCH_TOOLS and spec is None:
        if not deny:
            return Translated(source, None, "rules tell searches apart only by kind (search): Grep, Glob, LS")
        fields["kind"] = ["search"]
        return Translated(source, fields, "covers every search tool (Grep, Glob, LS): they share a kind")
    if tool in ("WebFetch", "WebSearch") and spec is None:
        if tool == "WebFetch" or deny:
            fields["kind"] = ["fetch"]
            note = None if tool == "WebFetch" else "covers WebFetch too: both are `fetch` calls"
            return Translated(source, fields, note)
        return Translated(source, None, "WebSearch and WebFetch are both `fetch` calls: an allow covers both")
    if tool in ("WebFetch", "WebSearch"):
        if action == "allow":  # every fetch would be broader than the source
            return Translated(source, None, "rules do not match URLs or domains")
        fields["kind"] = ["fetch"]
        return Translated(
            source, fields, f"covers every fetch, not only {spec.strip()}: rules do not match URLs"
        )
    if tool.startswith("mcp__"):
        return Translated(source, None, "rules do not match MCP tool names (ACP calls do not carry them)")
    return Translated(source, None, f"no ACP tool kind stands for Claude Code's {tool} tool")


def command_globs(spec: str) -> list[str]:
    """`git status:*` is a prefix at a word boundary (the command alone, or followed by arguments);
    anything else is a glob on the whole command, as Claude Code's own `*`."""
    spec = spec.strip()
    if spec.endswith(":*"):
        prefix = spec[:-2].rstrip()
        return [prefix, f"{prefix} *"] if prefix else []  # `Bash(:*)`: any command
    return [spec] if spec else []


def path_glob(spec: str, base: Path) -> str:
    """Claude Code's path forms: `//abs` absolute, `~/p` the home, `/p` the project root, `./p`
    and `p` the cwd."""
    spec = spec.strip()
    if spec.startswith("//"):
        return spec[1:]
    if spec.startswith("~"):
        return spec
    if spec.startswith("/"):
        return f"{base.as_posix().rstrip('/')}{spec}"
    return spec.removeprefix("./") or "**"


def to_toml(permissions: dict[str, Any], *, name: str, source: Path, base: Path) -> str:
    lines = [
        f"# Translated by `acp-tui policy import claude` from {one_line(str(source))}",
        '# Claude Code tries deny rules, then ask, then allow: order = "deny-first" does the same.',
        "# With no rule matching Claude Code asks a person; this policy rejects (a headless run has",
        "# nobody to ask). Paths written /like/this in Claude Code are taken from the project root:",
        f"# {one_line(base.as_posix())}",
        f"[policy.{name}]",
        'order = "deny-first"',
        'default = "reject"',
    ]
    for claude_action in ACTIONS:
        for rule in permissions.get(claude_action, []):
            translated = translate(claude_action, rule, base=base)
            lines.append("")
            if translated.fields is None:
                lines.append(f"# {one_line(translated.source)}: no equivalent: {translated.note}")
                continue
            if translated.note:
                lines.append(f"# {one_line(translated.source)}: approximate: {one_line(translated.note)}")
            lines.append(f"[[policy.{name}.rule]]")
            lines.extend(f"{key} = {_toml(value)}" for key, value in translated.fields.items())
    for key in ("defaultMode", "additionalDirectories", "disableBypassPermissionsMode"):
        if key in permissions:
            lines.append("")
            lines.append(f"# permissions.{key} = {one_line(json.dumps(permissions[key]))}: no equivalent")
    return "\n".join(lines) + "\n"


def _toml(value: Any) -> str:
    """A string or a list of strings as TOML basic strings."""
    if isinstance(value, list):
        return "[" + ", ".join(_toml(item) for item in value) + "]"
    return '"' + "".join(_toml_char(char) for char in without_surrogates(str(value))) + '"'


def _toml_char(char: str) -> str:
    if char in ('"', "\\"):
        return "\\" + char
    if ord(char) < 0x20 or ord(char) == 0x7F:  # TOML allows no control character in a string
        return f"\\u{ord(char):04X}"
    return char
