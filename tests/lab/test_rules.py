"""Rules on what a tool call will really do: command lines, paths, options offered; `ask` rules,
both orders of precedence, `allow-once`. Pure code first (property tests), then the raw inputs
real agents send, read off traces of real runs over stdio."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from acp_tui import AcpProviderConfig, AcpSubagentProvider, SubagentRequest
from acp_tui.core.model import PermissionOptionInfo
from acp_tui.lab.check import trace_requests
from acp_tui.lab.trace_file import load_trace
from acp_tui.policy.ask import ALLOW_KINDS, TOOL_KINDS, PermissionAsk, PermissionChoice, PermissionPolicy
from acp_tui.policy.globs import paths_match
from acp_tui.policy.names import FIXED_POLICIES
from acp_tui.policy.rules import AllowOncePolicy, Rule, RulePolicy, commands_match
from acp_tui.policy.shell import command_lines, simple_commands
from tests.core.test_foreign_agent import ts_agent, ts_config  # noqa: F401 - the fixture
from tests.helpers import demo, scripted

CWD = "/work/project"
OPTIONS = (
    PermissionOptionInfo("aa", "Always", "allow_always"),
    PermissionOptionInfo("a1", "Once", "allow_once"),
    PermissionOptionInfo("r1", "No", "reject_once"),
)


def ask(
    raw_input: Any = None, *, kind: str = "execute", locations: tuple[str, ...] = (), **kw: Any
) -> PermissionAsk:
    return PermissionAsk(
        title=kw.get("title", "a tool call"),
        kind=kind,
        options=kw.get("options", OPTIONS),
        raw_input=raw_input,
        locations=locations,
        cwd=kw.get("cwd", CWD),
    )


def decide(policy: PermissionPolicy, request: PermissionAsk) -> PermissionChoice:
    return asyncio.run(policy.decide(request))


# Property: reject never approves ----------------------------------------------------------------

texts = st.text(alphabet="ab /.*?[]!-_~$`();&|\n\"'", max_size=12)
globs = st.lists(
    st.sampled_from(["*", "**", "git *", "src/**", "/**", "~/**", "*.py", "[a-z]*", "a"]) | texts, max_size=3
)
option_kinds = st.sampled_from([*ALLOW_KINDS, "reject_once", "reject_always", "other", ""])
options = st.lists(
    st.builds(PermissionOptionInfo, st.sampled_from(["x", "y", "z"]), st.just("o"), option_kinds), max_size=5
).map(tuple)
raw_inputs = st.none() | st.dictionaries(
    st.sampled_from(
        ["command", "cmd", "argv", "args", "path", "paths", "file_path", "changes", "parsed_cmd"]
    ),
    texts | st.lists(texts, max_size=3) | st.dictionaries(texts, st.none(), max_size=2),
    max_size=4,
)
asks = st.builds(
    PermissionAsk,
    title=texts,
    kind=st.none() | st.sampled_from(TOOL_KINDS),
    options=options,
    raw_input=raw_inputs,
    locations=st.lists(texts, max_size=3).map(tuple),
    cwd=st.none() | st.sampled_from([CWD, "/", "relative"]),
)


def rules(actions: list[str]) -> st.SearchStrategy[tuple[Rule, ...]]:
    rule = st.builds(
        Rule,
        name=st.sampled_from(["r1", "r2"]),
        action=st.sampled_from(actions),
        kinds=st.lists(st.sampled_from(TOOL_KINDS), max_size=2).map(tuple),
        title=st.none() | st.sampled_from(["*", "a*"]),
        commands=globs.map(tuple),
        paths=globs.map(tuple),
        offered=st.lists(option_kinds, max_size=2).map(tuple),
    )
    return st.lists(rule, max_size=4).map(tuple)


def approves(request: PermissionAsk, choice: PermissionChoice) -> bool:
    """The chosen id is one an allow-shaped option carries (an id offered twice counts as both)."""
    return choice.option_id is not None and any(
        o.option_id == choice.option_id and o.kind in ALLOW_KINDS for o in request.options
    )


@settings(max_examples=300, deadline=None)
@given(
    request=asks, policy_rules=rules(["reject", "ask"]), order=st.sampled_from(["first-match", "deny-first"])
)
def test_reject_never_approves_under_any_matchers(
    request: PermissionAsk, policy_rules: tuple[Rule, ...], order: Any
) -> None:
    """Only reject and ask rules and a reject default: nothing is ever approved, whatever matches."""
    policy = RulePolicy("strict", policy_rules, default="reject", order=order)
    assert not approves(request, decide(policy, request))
    assert not approves(request, decide(FIXED_POLICIES["reject"], request))


@settings(max_examples=300, deadline=None)
@given(request=asks, policy_rules=rules(["reject", "ask", "allow"]))
def test_deny_first_a_matching_reject_rule_always_wins(
    request: PermissionAsk, policy_rules: tuple[Rule, ...]
) -> None:
    policy = RulePolicy("p", policy_rules, default="allow", order="deny-first")
    if any(rule.action == "reject" and rule.matches(request) for rule in policy_rules):
        assert not approves(request, decide(policy, request))


@settings(max_examples=200, deadline=None)
@given(request=asks)
def test_allow_once_never_picks_allow_always(request: PermissionAsk) -> None:
    choice = decide(AllowOncePolicy(), request)
    lasting = {o.option_id for o in request.options if o.kind == "allow_always"}
    assert choice.option_id not in lasting
    if approves(request, choice):
        assert any(o.option_id == choice.option_id and o.kind == "allow_once" for o in request.options)


@settings(max_examples=300, deadline=None)
@given(line=texts, extra=texts)
def test_an_allowed_command_line_never_hides_another_command(line: str, extra: str) -> None:
    """If `allow git status*` matches `LINE; EXTRA`, then EXTRA itself was a git status."""
    composed = f"git status; {extra}"
    if commands_match(["git status*"], [composed], every=True):
        assert all(c.startswith("git status") for c in simple_commands(composed) or ["x"])
    assert not commands_match(["git status*"], [f"git status $({line})"], every=True)


# Precedence -------------------------------------------------------------------------------------

PUSH = ask({"command": "git push origin main"})
RULES = (
    Rule("pushes are fine", "allow", commands=("git push*",)),
    Rule("no git writes", "reject", commands=("git push*", "git commit*")),
)


def test_first_match_takes_rules_in_file_order() -> None:
    assert decide(RulePolicy("p", RULES), PUSH) == PermissionChoice(
        "a1" if False else "aa", "pushes are fine"
    )


def test_deny_first_tries_reject_rules_then_ask_then_allow() -> None:
    policy = RulePolicy("p", RULES, order="deny-first")
    assert decide(policy, PUSH) == PermissionChoice("r1", "no git writes")
    with_ask = RulePolicy(
        "p", (RULES[0], Rule("check pushes", "ask", commands=("git *",))), order="deny-first"
    )
    assert decide(with_ask, PUSH) == PermissionChoice("r1", "check pushes (ask: reject)", ask=True)
    # No rule matches: the default decides, in either order.
    status = ask({"command": "ls"})
    assert decide(policy, status) == PermissionChoice("r1", "default")


def test_an_ask_rule_asks_a_person_when_there_is_one() -> None:
    asked: list[str] = []

    async def person(request: PermissionAsk) -> str | None:
        asked.append(request.title)
        return "a1"

    policy = RulePolicy("p", (Rule("check", "ask", kinds=("execute",)),), ask_handler=person)
    assert decide(policy, PUSH) == PermissionChoice("a1", "check (asked)")
    assert asked == ["a tool call"]


def test_offered_matches_the_option_kinds_on_offer() -> None:
    only_lasting = (
        PermissionOptionInfo("aa", "Always", "allow_always"),
        PermissionOptionInfo("r", "No", "reject_once"),
    )
    policy = RulePolicy("p", (Rule("once only", "allow", offered=("allow_once",)),))
    assert decide(policy, ask(options=OPTIONS)).rule == "once only"
    assert decide(policy, ask(options=only_lasting)) == PermissionChoice("r", "default")


# Commands ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw_input", "lines"),
    [
        ({"command": "git status", "description": "Show status"}, ["git status"]),  # Claude Code Bash
        ({"command": ["bash", "-lc", "git push origin"], "cwd": CWD}, ["git push origin"]),  # Codex exec
        ({"command": ["/usr/bin/zsh", "-c", "ls"]}, ["ls"]),
        ({"command": ["git", "commit", "-m", "a b"]}, ["git commit -m 'a b'"]),
        ({"command": "git", "args": ["log", "--oneline"]}, ["git log --oneline"]),  # terminal/create shape
        ({"cmd": "make test"}, ["make test"]),
        ({"argv": ["npm", "test"]}, ["npm test"]),
        ({"path": "/x"}, []),
        ("git status", []),  # not an object: no fields to read
        (None, []),
    ],
)
def test_command_lines_come_from_the_fields_agents_send(raw_input: Any, lines: list[str]) -> None:
    assert command_lines(raw_input) == lines


@pytest.mark.parametrize(
    ("line", "allowed", "rejected"),
    [
        ("git status", True, False),
        ("git status --short", True, False),
        ("git status && git push origin", False, True),
        ("git status; rm -rf /", False, False),
        ("git status | cat", False, False),
        ("git status $(git push)", False, True),  # a reject rule sees into substitutions
        ("git status `rm x`", False, False),
        ("FOO=1 git push", False, True),
        ("git  push   origin", False, True),
        ("'git' push", False, True),
        ("git status 'unbalanced", False, False),
        ("git status#; git push", False, True),
        ("bash -c 'git push'", False, True),  # a reject rule sees into `sh -c`
        ("sudo git push", False, True),
        ("env X=1 git push", False, True),
        ("git status 2>&1", True, False),  # a redirection, not a background job
    ],
)
def test_command_globs_follow_the_shell(line: str, allowed: bool, rejected: bool) -> None:
    allow = Rule("status", "allow", commands=("git status", "git status *"))
    reject = Rule("push", "reject", commands=("git push*",))
    request = ask({"command": line})
    assert allow.matches(request) is allowed
    assert reject.matches(request) is rejected


def test_a_call_without_a_command_matches_no_command_rule() -> None:
    for action in ("allow", "reject", "ask"):
        assert not Rule("r", action, commands=("*",)).matches(ask({"path": "x"}))  # type: ignore[arg-type]


# Paths ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("glob", "path", "hit"),
    [
        ("src/**", f"{CWD}/src/a.py", True),
        ("src/**", f"{CWD}/src/deep/er/a.py", True),
        ("src/**", "src/a.py", True),  # a relative path is taken from the cwd
        ("src/**", f"{CWD}/srcs/a.py", False),
        ("src/*.py", f"{CWD}/src/deep/a.py", False),
        ("**/*.py", f"{CWD}/a.py", True),
        ("**/*.py", f"{CWD}/x/y/a.py", True),
        ("**", "/etc/passwd", False),  # outside the cwd: no relative glob matches it
        ("**", f"{CWD}/../other/x", False),
        ("**", "../x", False),
        ("**", f"{CWD}-evil/x", False),  # a sibling whose name starts like the cwd
        ("/etc/**", "/etc/passwd", True),
        ("/etc/**", f"{CWD}/etc/passwd", False),
        ("src/", f"{CWD}/src/x", True),
        ("[ab].txt", f"{CWD}/a.txt", True),
        ("[!ab].txt", f"{CWD}/a.txt", False),
        ("[b-a].txt", f"{CWD}/[b-a].txt", False),  # a reversed range matches nothing, as in bash
    ],
)
def test_path_globs(glob: str, path: str, hit: bool) -> None:
    assert paths_match([glob], [path], CWD, every=False) is hit


def test_allow_needs_every_path_reject_needs_one() -> None:
    touched = ask({"changes": {f"{CWD}/src/a.py": {}, "/etc/hosts": {}}}, kind="edit")
    assert not Rule("src", "allow", paths=("src/**",)).matches(touched)
    assert Rule("src", "reject", paths=("src/**",)).matches(touched)
    assert Rule("src and etc", "allow", paths=("src/**", "/etc/*")).matches(touched)


@settings(max_examples=500, deadline=None)
@given(
    request=asks,
    globs=st.lists(
        st.sampled_from(["**", "/**", "~/**", "*", "[", "[!", "a/", ""]) | texts, min_size=1, max_size=3
    ),
    action=st.sampled_from(["allow", "reject", "ask"]),
)
def test_matching_never_raises(request: PermissionAsk, globs: list[str], action: Any) -> None:
    Rule("r", action, commands=tuple(globs), paths=tuple(globs), title="*").matches(request)
    Rule("r", action, paths=tuple(globs)).matches(request)


def test_a_relative_cwd_places_nothing() -> None:
    """As no cwd: an absolute path only meets absolute globs, a relative one only relative globs."""
    absolute = ask(None, kind="edit", locations=("/w/a",), cwd="relative")
    assert not Rule("r", "reject", paths=("**",)).matches(absolute)
    assert Rule("r", "reject", paths=("/w/*",)).matches(absolute)
    relative = ask(None, kind="edit", locations=("b",), cwd="relative")
    assert Rule("r", "reject", paths=("**",)).matches(relative)
    assert not Rule("r", "reject", paths=("/**",)).matches(relative)


def test_without_a_cwd_only_absolute_globs_match_absolute_paths() -> None:
    request = ask(None, kind="edit", locations=("/w/src/a.py",), cwd=None)
    assert not Rule("r", "reject", paths=("**",)).matches(request)
    assert Rule("r", "reject", paths=("/w/**",)).matches(request)


# Real raw inputs, read off traces of real runs --------------------------------------------------


async def traced(config: AcpProviderConfig, cwd: Path, trace_dir: Path) -> list[PermissionAsk]:
    config = AcpProviderConfig(**{**config.__dict__, "trace_dir": str(trace_dir)})
    run = await AcpSubagentProvider(config).start(SubagentRequest("go", cwd=str(cwd)))
    await run.result()
    assert run.trace_path is not None
    return [request.ask for request in trace_requests(Path(run.trace_path), load_trace(run.trace_path))]


async def test_rules_on_the_demo_agents_edit(tmp_path: Path) -> None:
    [request] = await traced(demo("pong"), tmp_path, tmp_path / "traces")
    assert request.locations == (str(tmp_path / "proof.txt"),) and request.cwd == str(tmp_path)
    assert Rule("proof", "allow", kinds=("edit",), paths=("proof.txt",)).matches(request)
    assert Rule("anything here", "allow", paths=("**",)).matches(request)
    assert not Rule("src only", "allow", paths=("src/**",)).matches(request)
    assert not Rule("commands", "reject", commands=("*",)).matches(request)


async def test_rules_on_the_typescript_example_agents_edit(ts_agent: Path, tmp_path: Path) -> None:  # noqa: F811
    [request] = await traced(ts_config(ts_agent), tmp_path, tmp_path / "traces")
    assert request.raw_input["path"] == "/home/user/project/config.json"
    assert request.locations == ("/home/user/project/config.json",)
    # Its path is outside the run's cwd: no relative glob matches it, an absolute one does.
    assert not Rule("here", "allow", paths=("**",)).matches(request)
    assert Rule("configs", "reject", paths=("/home/user/project/*.json",)).matches(request)


@pytest.mark.parametrize(
    ("raw_input", "status", "push"),
    [
        ({"command": "git status", "description": "Show the working tree status"}, True, False),
        ({"command": "git push --force", "description": "Push"}, False, True),
        (
            {
                "call_id": "c1",
                "command": ["bash", "-lc", "git status"],
                "cwd": "/w",
                "parsed_cmd": [{"type": "unknown", "cmd": "git status"}],
            },
            True,
            False,
        ),
        (
            {
                "call_id": "c2",
                "command": ["bash", "-lc", "git status && git push"],
                "cwd": "/w",
                "parsed_cmd": [{"type": "unknown", "cmd": "git status && git push"}],
            },
            False,
            True,
        ),
    ],
)
async def test_rules_on_claude_and_codex_shaped_commands(
    tmp_path: Path, raw_input: dict[str, Any], status: bool, push: bool
) -> None:
    config = scripted(permission="normal", permission_kind="execute", permission_raw=json.dumps(raw_input))
    [request] = await traced(config, tmp_path, tmp_path / "traces")
    assert request.raw_input == raw_input and request.kind == "execute"
    assert (
        Rule("status", "allow", kinds=("execute",), commands=("git status", "git status *")).matches(request)
        is status
    )
    assert Rule("push", "reject", commands=("git push*",)).matches(request) is push


async def test_codex_shaped_read_paths_come_from_parsed_cmd(tmp_path: Path) -> None:
    raw = {
        "command": ["cat", "src/a.py"],
        "parsed_cmd": [{"type": "read", "cmd": "cat src/a.py", "name": "a.py", "path": "src/a.py"}],
    }
    config = scripted(
        permission="normal",
        permission_kind="read",
        permission_raw=json.dumps(raw),
        permission_paths=str(tmp_path / "src" / "a.py"),
    )
    [request] = await traced(config, tmp_path, tmp_path / "traces")
    assert Rule("reads in src", "allow", kinds=("read",), paths=("src/**",)).matches(request)
    assert Rule("cat", "allow", commands=("cat *",)).matches(request)
    assert sys.executable  # the scripted agent ran under our interpreter


# The config file ---------------------------------------------------------------------------------

RULES_TOML = """
[[agent]]
name = "a"
command = "x"

[policy.careful]
order = "deny-first"
[[policy.careful.rule]]
name = "status"
action = "allow"
command = ["git status", "git status *"]
[[policy.careful.rule]]
name = "src"
action = "ask"
kind = "edit"
path = "src/**"
option = ["allow_once"]
[[policy.careful.rule]]
name = "no pushes"
action = "reject"
command = "git push*"
"""


def test_rules_with_the_new_fields_load_from_the_config_file() -> None:
    import tomllib

    from acp_tui.settings.load import parse_settings

    policy = parse_settings(tomllib.loads(RULES_TOML), label="agents.toml").policies["careful"]
    assert policy.order == "deny-first"
    assert policy.rules == (
        Rule("status", "allow", commands=("git status", "git status *")),
        Rule("src", "ask", kinds=("edit",), paths=("src/**",), offered=("allow_once",)),
        Rule("no pushes", "reject", commands=("git push*",)),
    )
    assert policy.describe() == [
        "1. no pushes: reject command git push*",
        "2. src: ask kind edit and path src/** and offered allow_once",
        "3. status: allow command git status or git status *",
        "otherwise: reject (deny-first: reject rules, then ask, then allow)",
    ]


@pytest.mark.parametrize(
    ("line", "says"),
    [
        ("command = 3", '"command" must be a glob or a list of globs'),
        ('path = [""]', '"path" must be a glob or a list of globs'),
        ('option = "allow_sometimes"', 'unknown option kind "allow_sometimes"'),
        ('colour = "red"', 'unknown key "colour"'),
    ],
)
def test_mistakes_in_the_new_fields_are_one_line(line: str, says: str) -> None:
    import tomllib

    from acp_tui.settings.load import parse_settings
    from acp_tui.settings.schema import ConfigError

    toml = f'[[agent]]\nname = "a"\ncommand = "x"\n[[policy.p.rule]]\nname = "r"\naction = "allow"\n{line}\n'
    with pytest.raises(ConfigError) as caught:
        parse_settings(tomllib.loads(toml), label="agents.toml")
    assert str(caught.value).startswith('agents.toml: policy "p": rule "r": ') and says in str(caught.value)


async def test_a_live_run_is_decided_by_what_its_command_will_do(tmp_path: Path) -> None:
    import dataclasses

    policy = RulePolicy("careful", (Rule("no pushes", "reject", commands=("git push*",)),), default="allow")
    raw = {"command": "git push origin main", "description": "Push"}
    config = scripted(permission="normal", permission_kind="execute", permission_raw=json.dumps(raw))
    run = await AcpSubagentProvider(dataclasses.replace(config, permission_policy=policy)).start(
        SubagentRequest("go", cwd=str(tmp_path))
    )
    [record] = (await run.result()).permissions
    assert (record.decision, record.rule) == ("reject_once", "no pushes")
    assert record.raw_input == raw


async def test_allow_once_over_real_stdio_skips_the_lasting_option_offered_first() -> None:
    run = await AcpSubagentProvider(scripted(policy="allow-once", permission="allow_always_first")).start(
        SubagentRequest("go")
    )
    [record] = (await run.result()).permissions
    assert (record.decision, record.option_id, record.rule) == ("allow_once", "a1", "allow-once")
    allow_only = await AcpSubagentProvider(scripted(policy="allow-once", permission="allow_only")).start(
        SubagentRequest("go")
    )
    [record] = (await allow_only.result()).permissions
    assert (record.decision, record.option_id) == ("allow_once", "a1")
