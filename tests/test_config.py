"""Presets from TOML: what a valid file becomes, and the one line each mistake gets."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from acp_tui.core.model import PermissionOptionInfo
from acp_tui.policy.ask import PermissionAsk
from acp_tui.policy.rules import AskPolicy, Rule, RulePolicy
from acp_tui.settings import paths
from acp_tui.settings.load import load_file, load_settings
from acp_tui.settings.presets import demo_presets, parse_agent_spec
from acp_tui.settings.schema import DEFAULT_PROMPT, AgentPreset, ConfigError, Settings

SAMPLE = Path(__file__).parent.parent / "assets" / "agents.sample.toml"

VALID = """
prompt = "Say hi."

[[agent]]
name = "gemini"
command = "gemini"
args = ["--acp", "--model", "x"]
cwd = "~/src/project"
env = { GEMINI_API_KEY = "k-123" }
policy = "careful"
handshake_timeout = 90

[[agent]]
name = "local"
command = "python3"
cwd = "work"

[policy.careful]
default = "allow"

[[policy.careful.rule]]
name = "reads are fine"
kind = ["read", "search"]
action = "allow"

[[policy.careful.rule]]
title = "*.env*"
action = "reject"

[[policy.careful.rule]]
kind = "execute"
title = "Run *"
action = "reject"
"""


def write(tmp_path: Path, text: str, name: str = "agents.toml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def load_text(tmp_path: Path, text: str) -> Settings:
    """Load `text` as a file the user named `agents.toml`: messages name it so."""
    return load_file(write(tmp_path, text), label="agents.toml")


def test_a_valid_file_becomes_presets_and_named_policies(tmp_path: Path) -> None:
    path = write(tmp_path, VALID)
    settings = load_settings(path)

    assert settings.source == path
    assert settings.prompt == "Say hi."
    assert settings.selected == ()
    gemini, local = settings.presets
    assert gemini == AgentPreset(
        name="gemini",
        command="gemini",
        args=("--acp", "--model", "x"),
        cwd=os.path.expanduser("~/src/project"),  # ~ expanded
        env={"GEMINI_API_KEY": "k-123"},
        policy="careful",
        handshake_timeout=90.0,
    )
    assert local.args == () and local.env == {} and local.policy == "reject"
    assert local.cwd == str(tmp_path / "work")  # relative to the file's directory
    assert local.handshake_timeout == 60.0
    assert settings.policies == {
        "careful": RulePolicy(
            name="careful",
            default="allow",
            rules=(
                Rule(name="reads are fine", action="allow", kinds=("read", "search")),
                Rule(name="rule 2", action="reject", title="*.env*"),
                Rule(name="rule 3", action="reject", kinds=("execute",), title="Run *"),
            ),
        )
    }
    assert settings.policy_names == ("reject", "allow", "allow-once", "ask", "careful")


def test_the_named_policy_reaches_the_provider_config_and_decides_in_rule_order(tmp_path: Path) -> None:
    settings = load_settings(write(tmp_path, VALID))
    config = settings.provider_config(settings.preset("gemini"), trace_dir="/tmp/traces")

    assert config.name == "gemini"
    assert config.command == "gemini" and list(config.args) == ["--acp", "--model", "x"]
    assert dict(config.env) == {"GEMINI_API_KEY": "k-123"}
    assert config.handshake_timeout == 90.0
    assert config.trace_dir == "/tmp/traces"
    policy = config.permission_policy
    assert isinstance(policy, RulePolicy) and policy.name == "careful"

    options = (
        PermissionOptionInfo("a", "Allow", "allow_once"),
        PermissionOptionInfo("r", "Reject", "reject_once"),
    )

    async def decide(title: str, kind: str | None) -> tuple[str | None, str]:
        choice = await policy.decide(PermissionAsk(title=title, kind=kind, options=options))
        return choice.option_id, choice.rule

    import asyncio

    # "Read .env" is a read: the first rule matches before the title rule could reject it.
    assert asyncio.run(decide("Read .env", "read")) == ("a", "reads are fine")
    assert asyncio.run(decide("Edit .env.local", "edit")) == ("r", "rule 2")
    assert asyncio.run(decide("run tests", "execute")) == ("r", "rule 3")
    assert asyncio.run(decide("Edit README.md", "edit")) == ("a", "default")


def test_policy_override_and_the_builtin_policies(tmp_path: Path) -> None:
    settings = load_settings(write(tmp_path, VALID))
    gemini = settings.preset("gemini")

    assert settings.provider_config(gemini, policy_override="allow").permission_policy == "allow"
    assert settings.provider_config(settings.preset("local")).permission_policy == "reject"

    async def pick(ask: PermissionAsk) -> str | None:
        return None

    asked = settings.provider_config(gemini, policy_override="ask", ask_handler=pick).permission_policy
    assert isinstance(asked, AskPolicy) and asked.handler is pick

    with pytest.raises(ConfigError) as no_handler:
        settings.provider_config(gemini, policy_override="ask")
    assert (
        str(no_handler.value) == 'agent "gemini": policy "ask" needs someone to ask: it works in the app only'
    )

    with pytest.raises(ConfigError) as unknown:
        settings.provider_config(gemini, policy_override="lenient")
    assert (
        str(unknown.value)
        == 'agent "gemini": unknown policy "lenient" (expected reject, allow, allow-once, ask or careful)'
    )


def test_a_preset_alone_takes_builtin_policies_or_policy_objects() -> None:
    preset = AgentPreset("a", "cmd", policy="careful")
    with pytest.raises(ConfigError, match=r"Settings\.provider_config"):
        preset.provider_config()
    rules = RulePolicy("careful", rules=())
    assert preset.provider_config(policy=rules).permission_policy is rules
    assert preset.provider_config(policy="allow").permission_policy == "allow"


def test_the_sample_file_is_valid() -> None:
    settings = load_settings(SAMPLE)
    assert [p.name for p in settings.presets] == [
        "claude",
        "codex",
        "gemini",
        "vibe",
        "opencode",
        "kimi",
        "fast-agent",
        "goose",
        "pong",
    ]
    assert settings.preset("vibe").options == {"mode": "ask"}
    assert settings.preset("goose").env == {"GOOSE_MODE": "approve"}
    assert settings.preset("gemini").policy == "careful"
    # Confined, each real agent sees an empty home: its preset names where it keeps its own state.
    assert settings.preset("codex").sandbox_writable == ("~/.codex", "~/.npm")
    assert all(p.sandbox_writable for p in settings.presets if p.name != "pong")
    assert [r.name for r in settings.policies["careful"].rules] == [
        "never touch secrets",
        "reads are fine",
        "edit docs",
    ]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            '[[agent]]\nname = "gemini"\ncommand = "gemini"\nargs = "--acp"\n',
            'agents.toml: agent "gemini": "args" must be a list of strings',
        ),
        (
            '[[agent]]\nname = "gemini"\ncomand = "gemini"\n',
            'agents.toml: agent "gemini": unknown key "comand" (did you mean "command"?)',
        ),
        ('[[agent]]\nname = "gemini"\n', 'agents.toml: agent "gemini": "command" is required'),
        ('[[agent]]\nname = ""\ncommand = "x"\n', 'agents.toml: agent #1: "name" must be a non-empty string'),
        (
            '[[agent]]\nname = "a"\ncommand = "x"\n[[agent]]\ncommand = "y"\n',
            'agents.toml: agent #2: "name" is required',
        ),
        (
            '[[agent]]\nname = "a"\ncommand = "x"\n[[agent]]\nname = "a"\ncommand = "y"\n',
            'agents.toml: agent "a": duplicate name',
        ),
        (
            '[[agent]]\nname = "a"\ncommand = "x"\npolicy = "lenient"\n',
            'agents.toml: agent "a": unknown policy "lenient" (expected reject, allow, allow-once or ask)',
        ),
        (
            '[[agent]]\nname = "a"\ncommand = "x"\nenv = { TOKEN = 1 }\n',
            'agents.toml: agent "a": "env.TOKEN" must be a string',
        ),
        (
            '[[agent]]\nname = "a"\ncommand = "x"\nhandshake_timeout = true\n',
            'agents.toml: agent "a": "handshake_timeout" must be a positive number of seconds',
        ),
        (
            '[[agent]]\nname = "a"\ncommand = "x"\n[policy.allow]\n',
            'agents.toml: policy "allow": the name is reserved (reject, allow, allow-once, ask are built in)',
        ),
        (
            '[[agent]]\nname = "a"\ncommand = "x"\n[[policy.p.rule]]\nkind = ["wrte"]\naction = "allow"\n',
            'agents.toml: policy "p": rule 1: unknown kind "wrte" (expected read, edit, delete, move, '
            "search, execute, think, fetch or other)",
        ),
        (
            '[[agent]]\nname = "a"\ncommand = "x"\n[[policy.p.rule]]\nname = "ok"\naction = "maybe"\n',
            'agents.toml: policy "p": rule "ok": "action" must be "allow", "reject" or "ask"',
        ),
        (
            '[[agent]]\nname = "a"\ncommand = "x"\n[policy.p]\ndefault = "ask"\n',
            'agents.toml: policy "p": "default" must be "allow" or "reject"',
        ),
        ("agents = []\n", 'agents.toml: unknown key "agents" (did you mean "agent"?)'),
        ('prompt = "x"\n', "agents.toml: no agents: add at least one [[agent]] table"),
        ("[[agent]]\nname = \n", "agents.toml: invalid TOML: Invalid value (at line 2, column 8)"),
    ],
)
def test_each_mistake_is_one_line_naming_file_agent_and_field(
    tmp_path: Path, text: str, message: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        load_text(tmp_path, text)
    assert str(caught.value) == message
    assert "\n" not in str(caught.value)


def test_a_missing_or_unreadable_file_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as missing:
        load_settings(tmp_path / "nope.toml")
    assert str(missing.value) == f"{tmp_path / 'nope.toml'}: no such file"

    (tmp_path / "bad.toml").write_bytes(b'prompt = "\xff"\n')
    with pytest.raises(ConfigError, match=r"bad\.toml: not UTF-8 text$"):
        load_settings(tmp_path / "bad.toml")


def test_without_a_config_the_demo_set_runs(tmp_path: Path) -> None:
    settings = load_settings()
    assert settings.source is None
    assert settings.prompt == DEFAULT_PROMPT
    assert [p.name for p in settings.presets] == ["scribe", "pong", "tortoise"]
    personas = [p.args for p in settings.presets]
    assert personas == [
        ("-m", "acp_tui.demo.agent", "--persona", "essay"),
        ("-m", "acp_tui.demo.agent", "--persona", "pong"),
        ("-m", "acp_tui.demo.agent", "--persona", "slow"),
    ]
    assert all(p.command == sys.executable for p in settings.presets)
    assert settings.presets == demo_presets()


def test_the_demo_pong_writes_in_a_scratch_dir_made_only_when_a_run_is_configured(tmp_path: Path) -> None:
    pong = load_settings().preset("pong")
    scratch = paths.cache_dir() / "pong"
    assert pong.policy == "allow" and pong.cwd == str(scratch)
    assert not scratch.exists()  # loading settings touches nothing
    config = load_settings().provider_config(pong)
    assert config.cwd == str(scratch) and scratch.is_dir()


def test_the_user_config_file_replaces_the_demo_set(tmp_path: Path) -> None:
    user_file = paths.config_dir() / "agents.toml"
    user_file.parent.mkdir(parents=True)
    user_file.write_text('[[agent]]\nname = "mine"\ncommand = "my-agent"\n', encoding="utf-8")

    settings = load_settings()
    assert settings.source == user_file
    assert [p.name for p in settings.presets] == ["mine"]

    user_file.write_text('[[agent]]\nname = "mine"\n', encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load_settings()
    assert str(caught.value) == f'{user_file}: agent "mine": "command" is required'


def test_an_explicit_config_wins_over_the_user_config_file(tmp_path: Path) -> None:
    user_file = paths.config_file()
    user_file.parent.mkdir(parents=True)
    user_file.write_text("this is not toml", encoding="utf-8")
    settings = load_settings(write(tmp_path, VALID))
    assert [p.name for p in settings.presets] == ["gemini", "local"]


def test_agent_specs_parse_with_shell_quoting() -> None:
    preset = parse_agent_spec("mine=python3 agent.py --flag 'two words' key=value")
    assert preset == AgentPreset("mine", "python3", ("agent.py", "--flag", "two words", "key=value"))
    assert preset.policy == "reject" and preset.cwd is None
    assert parse_agent_spec("  pong ") == "pong"


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("x=", '--agent "x=": the command is empty'),
        ("=cmd", '--agent "=cmd": expected NAME=COMMAND ARGS (a name, then "=", then the command)'),
        (
            "python agent.py key=value",
            '--agent "python agent.py key=value": expected NAME=COMMAND ARGS'
            ' (a name, then "=", then the command)',
        ),
        ("x=cmd 'open", '--agent "x=cmd \'open": cannot split the command: No closing quotation'),
        ("", "--agent: empty; expected NAME or NAME=COMMAND ARGS"),
    ],
)
def test_bad_agent_specs(spec: str, message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_agent_spec(spec)
    assert str(caught.value) == message


def test_agent_specs_add_presets_and_select_existing_ones() -> None:
    settings = load_settings(None, ["extra=my-agent --acp", "pong"])
    assert [p.name for p in settings.presets] == ["scribe", "pong", "tortoise", "extra"]
    assert settings.selected == ("extra", "pong")
    assert [p.name for p in settings.selected_presets()] == ["extra", "pong"]
    assert settings.preset("extra").argv == ["my-agent", "--acp"]


@pytest.mark.parametrize(
    ("specs", "message"),
    [
        (
            ["nobody"],
            '--agent "nobody": unknown agent (known: scribe, pong, tortoise; no config file was found, give '
            "one with --config FILE; to add one: NAME=COMMAND ARGS)",
        ),
        (["pong=cmd"], '--agent "pong=cmd": an agent named "pong" already exists'),
        (["pong", "pong"], '--agent "pong": given twice'),
    ],
)
def test_agent_spec_conflicts(specs: list[str], message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        load_settings(None, specs)
    assert str(caught.value) == message


# The fields of the issues 10-13: options, MCP servers, timeouts, isolation, replay, rule matchers,
# policy order, app switches.

FULL = """
bell = false
toasts = false

[[agent]]
name = "codex"
command = "codex-acp"
env = { OPENAI_API_KEY = "sk-secret-1" }
options = { mode = "read-only", model = "gpt-5-mini" }
run_timeout = 600
idle_timeout = 90.5
isolation = "worktree"

[[agent.mcp_servers]]
name = "fs"
command = "mcp-fs"
args = ["--root", "."]
env = { FS_TOKEN = "fs-secret-2" }

[[agent.mcp_servers]]
name = "docs"
type = "http"
url = "https://mcp.example.com/mcp"
headers = { Authorization = "Bearer hdr-secret-3" }

[[agent]]
name = "again"
replay = "runs/one.jsonl"
args = ["--speed", "0"]

[policy.lab]
order = "deny-first"

[[policy.lab.rule]]
name = "git status"
kind = "execute"
command = "git status*"
action = "allow"

[[policy.lab.rule]]
path = ["src/**", "tests/**"]
option = "allow_once"
action = "ask"
"""


def test_the_new_fields_become_presets_policies_and_switches(tmp_path: Path) -> None:
    settings = load_settings(write(tmp_path, FULL))
    codex, again = settings.presets
    assert settings.notify == "off" and settings.toasts is False
    assert codex.options == {"mode": "read-only", "model": "gpt-5-mini"}
    assert codex.run_timeout == 600.0 and codex.idle_timeout == 90.5
    assert codex.isolation == "worktree" and again.isolation == "none"
    assert again.command == sys.executable
    assert again.args == ("-m", "acp_tui", "replay", str(tmp_path / "runs" / "one.jsonl"), "--speed", "0")
    assert again.replay == str(tmp_path / "runs" / "one.jsonl")

    config = settings.provider_config(codex)
    assert dict(config.options) == {"mode": "read-only", "model": "gpt-5-mini"}
    assert config.run_timeout == 600.0 and config.idle_timeout == 90.5
    assert list(config.mcp_servers) == [
        {
            "name": "fs",
            "command": "mcp-fs",
            "args": ["--root", "."],
            "env": [{"name": "FS_TOKEN", "value": "fs-secret-2"}],
        },
        {
            "type": "http",
            "name": "docs",
            "url": "https://mcp.example.com/mcp",
            "headers": [{"name": "Authorization", "value": "Bearer hdr-secret-3"}],
        },
    ]
    assert sorted(codex.secrets()) == ["Bearer hdr-secret-3", "fs-secret-2", "sk-secret-1"]
    assert settings.policies["lab"] == RulePolicy(
        name="lab",
        order="deny-first",
        rules=(
            Rule(name="git status", action="allow", kinds=("execute",), commands=("git status*",)),
            Rule(name="rule 2", action="ask", paths=("src/**", "tests/**"), offered=("allow_once",)),
        ),
    )


def test_notify_and_budget_usd(tmp_path: Path) -> None:
    settings = load_text(tmp_path, AGENT + "budget_usd = 0.05\n")
    assert settings.notify == "all" and settings.preset("a").budget_usd == 0.05
    assert load_text(tmp_path, 'notify = "bell"\n' + AGENT).notify == "bell"
    assert load_text(tmp_path, "bell = false\n" + AGENT).notify == "off"  # the older switch
    assert load_text(tmp_path, 'bell = false\nnotify = "all"\n' + AGENT).notify == "all"
    assert load_text(tmp_path, AGENT + "budget_usd = 2\n").preset("a").budget_usd == 2.0


def test_defaults_are_the_cores(tmp_path: Path) -> None:
    from acp_tui.acp.provider import AcpProviderConfig

    preset = load_settings(write(tmp_path, '[[agent]]\nname = "a"\ncommand = "x"\n')).preset("a")
    core = AcpProviderConfig(command="x")
    config = preset.provider_config()
    assert (config.handshake_timeout, config.run_timeout, config.idle_timeout) == (
        core.handshake_timeout,
        core.run_timeout,
        core.idle_timeout,
    )
    assert config.options == {} and list(config.mcp_servers) == []
    assert preset.isolation == "none" and preset.replay is None


def test_repr_never_shows_a_secret(tmp_path: Path) -> None:
    settings = load_settings(write(tmp_path, FULL))
    shown = repr(settings) + repr(settings.presets) + repr(settings.provider_config(settings.presets[0]))
    for secret in ("sk-secret-1", "fs-secret-2", "hdr-secret-3"):
        assert secret not in shown


AGENT = '[[agent]]\nname = "a"\ncommand = "x"\n'


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (AGENT + "options = 3\n", '"options" must be a table of option ids to value ids'),
        (AGENT + "options = { mode = 1 }\n", '"options.mode" must be a string'),
        (AGENT + "run_timeout = 0\n", '"run_timeout" must be a positive number of seconds'),
        (AGENT + 'idle_timeout = "5"\n', '"idle_timeout" must be a positive number of seconds'),
        (AGENT + "idle_timeout = true\n", '"idle_timeout" must be a positive number of seconds'),
        (AGENT + 'isolation = "container"\n', '"isolation" must be "none" or "worktree"'),
        (AGENT + 'replay = ""\n', '"command" and "replay" are exclusive (replay PATH runs acp-tui replay)'),
        ('[[agent]]\nname = "a"\nreplay = 5\n', '"replay" must be a non-empty path'),
        (AGENT + 'mcp_servers = "fs"\n', '"mcp_servers" must be an array of tables ([[agent.mcp_servers]])'),
        (AGENT + '[[agent.mcp_servers]]\ncommand = "m"\n', 'mcp server #1: "name" is required'),
        (
            AGENT + '[[agent.mcp_servers]]\nname = "m"\ncomand = "m"\n',
            'mcp server #1: unknown key "comand" (did you mean "command"?)',
        ),
        (
            AGENT + '[[agent.mcp_servers]]\nname = "m"\ntype = "ws"\nurl = "u"\n',
            'mcp server #1: "type" must be "stdio", "http" or "sse"',
        ),
        (
            AGENT + '[[agent.mcp_servers]]\nname = "m"\n',
            'mcp server #1: "command" is required (or type = "http" / "sse" with a url)',
        ),
        (
            AGENT + '[[agent.mcp_servers]]\nname = "m"\ntype = "sse"\n',
            'mcp server #1: "url" is required for type "sse"',
        ),
        (
            AGENT + '[[agent.mcp_servers]]\nname = "m"\ntype = "http"\nurl = "u"\ncommand = "c"\n',
            'mcp server #1: "command", "args" and "env" are for stdio servers only',
        ),
        (
            AGENT + '[[agent.mcp_servers]]\nname = "m"\ncommand = "c"\nurl = "u"\n',
            'mcp server #1: "url" and "headers" need type = "http" or "sse"',
        ),
        (
            AGENT + '[[agent.mcp_servers]]\nname = "m"\ncommand = "c"\nenv = { K = 1 }\n',
            'mcp server #1: "env.K" must be a string',
        ),
        (
            AGENT + '[[agent.mcp_servers]]\nname = "m"\ntype = "http"\nurl = "u"\nheaders = []\n',
            'mcp server #1: "headers" must be a table of strings',
        ),
    ],
)
def test_each_new_agent_field_mistake_is_one_line(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        load_text(tmp_path, text)
    assert str(caught.value) == f'agents.toml: agent "a": {message}'


POLICY = AGENT + "[[policy.p.rule]]\n"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            AGENT + '[policy.p]\norder = "last-match"\n',
            'policy "p": "order" must be "first-match" or "deny-first"',
        ),
        (
            POLICY + 'action = "allow"\ncommand = 3\n',
            'policy "p": rule 1: "command" must be a glob or a list of globs',
        ),
        (
            POLICY + 'action = "allow"\npath = [""]\n',
            'policy "p": rule 1: "path" must be a glob or a list of globs',
        ),
        (
            POLICY + 'action = "allow"\noption = "allow_sometimes"\n',
            'policy "p": rule 1: unknown option kind "allow_sometimes" (expected allow_once, allow_always,'
            " reject_once or reject_always)",
        ),
        (POLICY + 'kind = "read"\n', 'policy "p": rule 1: "action" is required (allow, reject or ask)'),
        (
            POLICY + 'action = "ask"\ncmd = "x"\n',
            'policy "p": rule 1: unknown key "cmd" (did you mean "command"?)',
        ),
        (
            AGENT + 'bell = "yes"\n',
            'agent "a": unknown key "bell" (expected name, command, args, cwd, provider, url, headers,'
            " env, policy, handshake_timeout, options, mcp_servers, run_timeout, idle_timeout, isolation,"
            " max_file_bytes, sandbox, sandbox_writable, sandbox_readable, sandbox_hidden, sandbox_sockets,"
            " sandbox_network, remote, remote_options, remote_cwd, warm, budget_usd or replay)",
        ),
        ('bell = "yes"\n' + AGENT, '"bell" must be true or false'),
        ('notify = "loud"\n' + AGENT, '"notify" must be "off", "bell" or "all"'),
        (AGENT + "budget_usd = 0\n", 'agent "a": "budget_usd" must be a positive number of US dollars'),
        (AGENT + 'budget_usd = "5"\n', 'agent "a": "budget_usd" must be a positive number of US dollars'),
        ("toasts = 1\n" + AGENT, '"toasts" must be true or false'),
    ],
)
def test_each_new_policy_and_app_field_mistake_is_one_line(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        load_text(tmp_path, text)
    assert str(caught.value) == f"agents.toml: {message}"
    assert "\n" not in str(caught.value)


def test_option_specs() -> None:
    from acp_tui.settings.presets import parse_option_specs, with_options

    assert parse_option_specs(["mode=ask", "model = gpt-5", "mode=auto"]) == {
        "mode": "auto",
        "model": "gpt-5",
    }
    for bad in ("mode", "=ask", "mode=", "a b=c"):
        with pytest.raises(ConfigError) as caught:
            parse_option_specs([bad])
        assert str(caught.value) == f'--option "{bad}": expected ID=VALUE (e.g. mode=ask)'
    preset = AgentPreset("a", "x", options={"mode": "ask", "model": "m1"})
    assert with_options(preset, {"model": "m2"}).options == {"mode": "ask", "model": "m2"}
    assert with_options(preset, {}) is preset


def test_a_file_is_validated_each_time_and_the_demo_set_and_agent_specs_load_no_pydantic(
    tmp_path: Path,
) -> None:
    """Nothing is kept to spare a file's validation (a mistake is caught however often the file was
    read before); only a file loads pydantic: the demo set and `--agent` specs start without it."""
    import subprocess

    path = write(tmp_path, FULL)
    first = load_settings(path)
    assert load_settings(path) == first
    assert first.presets[0].run_timeout == 600.0 and isinstance(first.presets[0].run_timeout, float)
    assert not paths.cache_dir().exists()  # nothing written to spare the next load

    probe = (
        "import sys; from acp_tui.settings.load import load_settings;"
        " load_settings(sys.argv[1] or None, sys.argv[2:]); print('pydantic' in sys.modules)"
    )
    for args, loaded in (([str(path)], "True"), ([""], "False"), (["", "mine=my-agent --acp"], "False")):
        done = subprocess.run(
            [sys.executable, "-c", probe, *args], capture_output=True, text=True, check=True
        )
        assert done.stdout.strip() == loaded, args

    path.write_text(FULL.replace("run_timeout = 600", "run_timeout = -1"), encoding="utf-8")
    with pytest.raises(ConfigError, match='"run_timeout" must be a positive number of seconds'):
        load_settings(path)
