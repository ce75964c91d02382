"""Reading a settings file: TOML, validated by pydantic against the declarations of `settings.schema`,
every problem a `ConfigError` of one line naming the file (or option), the agent or policy, and the
field.

Where presets come from: `--config PATH`, else `agents.toml` in the user config dir
(`settings.paths`), else the bundled demo set; `--agent` specs add to (or select from) them. The
demo set and `--agent` specs never load pydantic, `tomllib` nor the policies' modules: only a file
read does (the app's first frame waits for neither).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import Field, fields, replace
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from acp_tui.settings import paths
from acp_tui.settings.presets import demo_presets, parse_agent_spec, with_agent_specs
from acp_tui.settings.schema import (
    CLAUDE_COMMAND,
    CODEX_COMMAND,
    OPTION_KINDS,
    AgentPreset,
    ConfigError,
    McpServer,
    Settings,
    one_of,
)

if TYPE_CHECKING:
    from acp_tui.policy.rules import Rule, RulePolicy


def load_settings(
    path: Path | str | None = None, agents: Sequence[str] = (), *, policies_only: bool = False
) -> Settings:
    """The presets of `path` (else the user config file, else the demo set), plus `agents` specs.
    `policies_only`: the file may hold no agent (`policy check` reads it for its policies); nor need
    it when an agent is given inline (`--agent 'NAME=COMMAND'`: what `policy import` writes is a file
    of policies alone)."""
    policies_only = policies_only or any(not isinstance(parse_agent_spec(spec), str) for spec in agents)
    if path is not None:
        settings = load_file(Path(os.path.expanduser(path)), label=str(path), policies_only=policies_only)
    else:
        user_file = paths.config_file()
        if user_file.exists():
            settings = load_file(user_file, policies_only=policies_only)
        else:
            settings = Settings(presets=demo_presets())
    return with_agent_specs(settings, agents)


def load_file(path: Path, *, label: str | None = None, policies_only: bool = False) -> Settings:
    label = label or str(path)
    import tomllib

    from acp_tui.core.files import UnreadableFile, read_text

    try:
        text = read_text(path, label=label)
        data = tomllib.loads(text)
    except UnreadableFile as exc:
        raise ConfigError(str(exc)) from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{label}: invalid TOML: {exc}") from None
    except RecursionError:  # tomllib recurses into nested arrays and tables
        raise ConfigError(f"{label}: invalid TOML: nested too deeply") from None
    return parse_settings(data, label=label, source=path, policies_only=policies_only)


def parse_settings(
    data: Mapping[str, Any], *, label: str, source: Path | None = None, policies_only: bool = False
) -> Settings:
    """Validate a parsed TOML document. A relative `cwd` is taken from the directory of `source`."""
    from acp_tui.policy.names import policy_names
    from acp_tui.settings.file_tables import SettingsFile

    base_dir = source.parent if source is not None else None
    top = _validate(SettingsFile, data, f"{label}: ")
    policies = {name: _parse_policy(name, raw, label) for name, raw in top.policy.items()}
    if not top.agent and not policies_only:
        raise ConfigError(f"{label}: no agents: add at least one [[agent]] table")
    known = policy_names(policies)
    presets: list[AgentPreset] = []
    for number, raw in enumerate(top.agent, start=1):
        preset = _parse_agent(number, raw, label, base_dir)
        if any(p.name == preset.name for p in presets):
            raise ConfigError(f'{label}: agent "{preset.name}": duplicate name')
        if preset.policy not in known:
            raise ConfigError(
                f'{label}: agent "{preset.name}": unknown policy "{preset.policy}" (expected {one_of(known)})'
            )
        presets.append(preset)
    return Settings(
        presets=tuple(presets),
        policies=policies,
        prompt=top.prompt,
        source=source,
        notify=top.notify or ("all" if top.bell else "off"),
        toasts=top.toasts,
        warm=top.warm,
        warm_idle=top.warm_idle,
        keep_sessions=top.keep_sessions,
        export_dir=_resolve(top.export_dir, base_dir) if top.export_dir is not None else None,
    )


def _parse_agent(number: int, raw: Mapping[str, Any], label: str, base_dir: Path | None) -> AgentPreset:
    name = raw.get("name")
    named = name.strip() if isinstance(name, str) else ""
    where = f'{label}: agent "{named}": ' if named else f"{label}: agent #{number}: "
    replay = raw.get("replay")
    if replay is not None and "command" in raw:
        raise ConfigError(f'{where}"command" and "replay" are exclusive (replay PATH runs acp-tui replay)')
    if replay is not None and raw.get("provider", "acp") != "acp":
        raise ConfigError(f'{where}"replay" plays an ACP trace: it takes no "provider"')
    if raw.get("provider") == "codex":  # `codex app-server` unless the preset names its own
        raw = {"command": CODEX_COMMAND[0], "args": list(CODEX_COMMAND[1:]), **raw}
    if raw.get("provider") == "claude":  # the Claude Code CLI the SDK bundles, unless named
        raw = {"command": CLAUDE_COMMAND, **raw}
    if raw.get("provider") == "a2a":
        raw = _a2a_agent(raw, where)
    elif "url" in raw or "headers" in raw:
        raise ConfigError(f'{where}"url" and "headers" are for an A2A agent (provider = "a2a")')
    if replay is not None:
        # The shorthand: the recorded trace, played by `acp-tui replay`, is the agent. (A `replay`
        # that is no path is left as is, for the validation to name.)
        raw = {**raw, "command": sys.executable}
        if isinstance(replay, str) and replay.strip():
            replay = raw["replay"] = str(_resolve(replay, base_dir))
            args = raw.get("args", [])
            extra = args if isinstance(args, list) else [args]  # a wrong `args` is still reported
            raw["args"] = ["-m", "acp_tui", "replay", replay, *extra]
    preset: AgentPreset = _validate(AgentPreset, raw, where)
    for number, server in enumerate(preset.mcp_servers, start=1):
        _check_mcp_server(server, f"{where}mcp server #{number}: ")
    try:
        preset.check_remote()
    except ConfigError as exc:
        raise ConfigError(f"{where}{exc}") from None
    if preset.cwd is None:
        return preset
    return replace(preset, cwd=str(_resolve(preset.cwd, base_dir)))


def _a2a_agent(raw: Mapping[str, Any], where: str) -> Mapping[str, Any]:
    """An A2A agent runs elsewhere, reached at its `url`: which is also its `command` (what it
    is, in panes and records). Nothing of what we would start or confine applies."""
    if "url" not in raw:
        raise ConfigError(f'{where}"url" is required for an A2A agent (provider = "a2a")')
    for key in ("command", "args", "env", "sandbox", "mcp_servers", "options"):
        if key in raw:
            raise ConfigError(f'{where}an A2A agent runs elsewhere, at its "url": it takes no "{key}"')
    url = raw["url"]
    return {**raw, "command": url if isinstance(url, str) and url.strip() else "a2a"}  # a bad url is named


def _resolve(path: str, base_dir: Path | None) -> Path:
    """`~` expanded; a relative path is taken from the directory of the settings file."""
    expanded = Path(os.path.expanduser(path))
    if not expanded.is_absolute() and base_dir is not None:
        expanded = base_dir / expanded
    return expanded


def _check_mcp_server(server: McpServer, where: str) -> None:
    if server.type == "stdio":
        if server.command is None:
            raise ConfigError(f'{where}"command" is required (or type = "http" / "sse" with a url)')
        if server.url is not None or server.headers:
            raise ConfigError(f'{where}"url" and "headers" need type = "http" or "sse"')
    else:
        if server.url is None:
            raise ConfigError(f'{where}"url" is required for type "{server.type}"')
        if server.command is not None or server.args or server.env:
            raise ConfigError(f'{where}"command", "args" and "env" are for stdio servers only')


def _parse_policy(name: str, raw: Any, label: str) -> RulePolicy:
    from acp_tui.policy.names import BUILTIN
    from acp_tui.policy.rules import RulePolicy
    from acp_tui.settings.file_tables import PolicyTable

    where = f'{label}: policy "{name}": '
    if name in BUILTIN:
        raise ConfigError(f"{where}the name is reserved ({', '.join(BUILTIN)} are built in)")
    if not isinstance(raw, dict):
        raise ConfigError(f"{where}must be a table ([policy.{name}])")
    table = _validate(PolicyTable, raw, where, name=name)
    rules = tuple(_parse_rule(number, r, where) for number, r in enumerate(table.rule, start=1))
    return RulePolicy(name=name, rules=rules, default=table.default, order=table.order)


def _parse_rule(number: int, raw: Any, policy_where: str) -> Rule:
    from acp_tui.policy.ask import TOOL_KINDS
    from acp_tui.policy.rules import Rule
    from acp_tui.settings.file_tables import RuleTable

    rule_name = raw.get("name") if isinstance(raw, dict) else None
    named = isinstance(rule_name, str) and rule_name.strip()
    where = f'{policy_where}rule "{rule_name}": ' if named else f"{policy_where}rule {number}: "
    table = _validate(RuleTable, raw, where)
    for kind in table.kind:
        if kind not in TOOL_KINDS:
            raise ConfigError(f'{where}unknown kind "{kind}" (expected {one_of(TOOL_KINDS)})')
    for kind in table.option:
        if kind not in OPTION_KINDS:
            raise ConfigError(f'{where}unknown option kind "{kind}" (expected {one_of(OPTION_KINDS)})')
    return Rule(
        name=table.name or f"rule {number}",
        action=table.action,
        kinds=table.kind,
        title=table.title,
        commands=table.command,
        paths=table.path,
        offered=table.option,
    )


# Validation: the declarations, checked by pydantic, said in one line ---------------------------


@cache
def _adapter(cls: Any) -> Any:
    from pydantic import TypeAdapter

    return TypeAdapter(cls)


def _validate(cls: Any, raw: Any, where: str, **fill: str) -> Any:
    """`raw` as a `cls`, or a `ConfigError` about the first problem: `<where>"<field>" <says>`."""
    if isinstance(raw, Mapping):
        _check_keys(raw, _keys(cls), where)
    from pydantic import ValidationError

    try:
        return _adapter(cls).validate_python(raw)
    except ValidationError as exc:
        raise ConfigError(where + _say(cls, exc.errors()[0], fill)) from None


def _say(cls: Any, error: Mapping[str, Any], fill: Mapping[str, str]) -> str:
    loc: tuple[Any, ...] = tuple(error.get("loc", ()))
    declared = {f.name: f for f in fields(cls)}
    if not loc or loc[0] not in declared:
        if error.get("type") == "unexpected_keyword_argument" and loc:
            return _unknown_key(str(loc[-1]), _keys(cls))
        return " ".join(str(error.get("msg", "invalid")).split())
    name, rest = str(loc[0]), loc[1:]
    item = _item_class(declared[name])
    if item is not None and len(rest) >= 2 and isinstance(rest[0], int):  # inside a nested table
        return f"mcp server #{rest[0] + 1}: " + _say(item, {**error, "loc": rest[1:]}, fill)
    if error.get("type") == "missing":
        return declared[name].metadata.get("required") or f'"{name}" is required'
    if len(rest) == 1 and isinstance(rest[0], str) and str(declared[name].type).startswith("dict["):
        # a value of a table of strings (a string elsewhere names the member of a union)
        return f'"{name}.{rest[0]}" must be a string'
    says = declared[name].metadata.get("says") or "is invalid"
    return f'"{name}" ' + says.format(**fill)


def _item_class(declared: Field[Any]) -> type[Any] | None:
    return McpServer if declared.name == "mcp_servers" else None


@cache
def _keys(cls: Any) -> tuple[str, ...]:
    """The keys a table of the file may have: the declared fields but the internal ones."""
    return tuple(f.name for f in fields(cls) if not f.metadata.get("internal"))


def _check_keys(raw: Mapping[str, Any], allowed: Sequence[str], where: str) -> None:
    for key in raw:
        if key not in allowed:
            raise ConfigError(f"{where}{_unknown_key(str(key), allowed)}")


def _unknown_key(key: str, allowed: Sequence[str]) -> str:
    import difflib

    close = difflib.get_close_matches(key, allowed, n=1)
    hint = f' (did you mean "{close[0]}"?)' if close else f" (expected {one_of(allowed)})"
    return f'unknown key "{key}"{hint}'
