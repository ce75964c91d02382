"""`acp-tui policy import claude`: Claude Code's permission rules as a TOML policy that loads."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from acp_tui.core.model import PermissionOptionInfo
from acp_tui.policy.ask import PermissionAsk
from acp_tui.policy.rules import Rule, RulePolicy
from acp_tui.settings.load import parse_settings

REPO = Path(__file__).resolve().parents[2]
AGENT = '\n[[agent]]\nname = "a"\ncommand = "x"\n'
OPTIONS = (PermissionOptionInfo("y", "Yes", "allow_once"), PermissionOptionInfo("n", "No", "reject_once"))
SETTINGS = {
    "permissions": {
        "allow": [
            "Bash(git status:*)",
            "Bash(npm run test)",
            "Read(./src/**)",
            "Edit(/docs/**)",
            "WebFetch",
            "Grep",
            "mcp__github__list_issues",
        ],
        "ask": ["Bash(git commit:*)", "WebFetch(domain:example.com)"],
        "deny": ["Bash(git push:*)", "Read(~/.ssh/**)", "Edit(//etc/**)", "WebSearch", "Task(reviewer)"],
        "defaultMode": "acceptEdits",
    }
}


def imported(tmp_path: Path) -> subprocess.CompletedProcess[str]:
    project = tmp_path / "project"
    (project / ".claude").mkdir(parents=True)
    settings = project / ".claude" / "settings.json"
    settings.write_text(json.dumps(SETTINGS))
    return subprocess.run(
        [sys.executable, "-m", "acp_tui", "policy", "import", "claude", str(settings)],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        timeout=30,
        check=False,
    )


def test_a_dozen_claude_rules_become_a_policy(tmp_path: Path) -> None:
    done = imported(tmp_path)
    assert done.returncode == 0, done.stderr
    root = (tmp_path / "project").resolve().as_posix()
    data = tomllib.loads(done.stdout)
    policy = data["policy"]["claude"]
    assert (policy["order"], policy["default"]) == ("deny-first", "reject")
    assert policy["rule"] == [
        {
            "name": "deny Bash(git push:*)",
            "action": "reject",
            "kind": ["execute"],
            "command": ["git push", "git push *"],
        },
        {
            "name": "deny Read(~/.ssh/**)",
            "action": "reject",
            "kind": ["read", "search"],
            "path": ["~/.ssh/**"],
        },
        {
            "name": "deny Edit(//etc/**)",
            "action": "reject",
            "kind": ["edit", "delete", "move"],
            "path": ["/etc/**"],
        },
        {"name": "deny WebSearch", "action": "reject", "kind": ["fetch"]},
        {
            "name": "ask Bash(git commit:*)",
            "action": "ask",
            "kind": ["execute"],
            "command": ["git commit", "git commit *"],
        },
        {"name": "ask WebFetch(domain:example.com)", "action": "ask", "kind": ["fetch"]},
        {
            "name": "allow Bash(git status:*)",
            "action": "allow",
            "kind": ["execute"],
            "command": ["git status", "git status *"],
        },
        {
            "name": "allow Bash(npm run test)",
            "action": "allow",
            "kind": ["execute"],
            "command": ["npm run test"],
        },
        {"name": "allow Read(./src/**)", "action": "allow", "kind": ["read", "search"], "path": ["src/**"]},
        {"name": "allow Edit(/docs/**)", "action": "allow", "kind": ["edit"], "path": [f"{root}/docs/**"]},
        {"name": "allow WebFetch", "action": "allow", "kind": ["fetch"]},
    ]
    comments = [
        line for line in done.stdout.splitlines() if line.startswith("# ") and ": no equivalent" in line
    ]
    assert comments == [
        "# deny Task(reviewer): no equivalent: no ACP tool kind stands for Claude Code's Task tool",
        "# allow Grep: no equivalent: rules tell searches apart only by kind (search): Grep, Glob, LS",
        "# allow mcp__github__list_issues: no equivalent: "
        "rules do not match MCP tool names (ACP calls do not carry them)",
        '# permissions.defaultMode = "acceptEdits": no equivalent',
    ]
    assert "# deny WebSearch: approximate: covers WebFetch too" in done.stdout
    assert (
        "# ask WebFetch(domain:example.com): approximate: covers every fetch, not only domain:example.com"
        in done.stdout
    )


def test_the_policy_loads_and_decides_as_claude_code_would(tmp_path: Path) -> None:
    done = imported(tmp_path)
    toml = done.stdout + '\n[[agent]]\nname = "a"\ncommand = "x"\npolicy = "claude"\n'
    policy = parse_settings(tomllib.loads(toml), label="imported.toml").policies["claude"]
    assert isinstance(policy, RulePolicy) and all(isinstance(rule, Rule) for rule in policy.rules)
    options = (PermissionOptionInfo("y", "Yes", "allow_once"), PermissionOptionInfo("n", "No", "reject_once"))

    def decided(command: str) -> str:
        import asyncio

        request = PermissionAsk("Bash", "execute", options, raw_input={"command": command}, cwd="/w")
        return asyncio.run(policy.decide(request)).rule

    assert decided("git status --short") == "allow Bash(git status:*)"
    assert decided("git status && git push origin") == "deny Bash(git push:*)"  # deny first
    assert decided("git commit -m x") == "ask Bash(git commit:*) (ask: reject)"
    assert decided("rm -rf /") == "default"


def test_a_file_that_is_not_claude_settings_is_one_line_and_status_2(tmp_path: Path) -> None:
    bad = tmp_path / "settings.json"
    bad.write_text('{"permissions": {"allow": "Bash"}}')
    done = subprocess.run(
        [sys.executable, "-m", "acp_tui", "policy", "import", "claude", str(bad)],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        timeout=30,
        check=False,
    )
    assert done.returncode == 2 and done.stdout == ""
    [line] = done.stderr.splitlines()
    assert line.endswith(f'{bad}: "permissions.allow" must be a list of strings'), line


@settings(max_examples=300, deadline=None)
@given(
    st.dictionaries(
        st.sampled_from(["allow", "ask", "deny"]),
        st.lists(
            st.one_of(
                st.text(max_size=12),
                st.builds(
                    "{}({})".format,
                    st.sampled_from(["Bash", "Read", "Edit", "Write", "WebFetch", "Grep", "mcp__x", "Task"]),
                    st.text(max_size=10),
                ),
            ),
            max_size=4,
        ),
    )
)
def test_any_claude_rules_give_a_policy_the_config_loads(permissions: dict[str, list[str]]) -> None:
    from acp_tui.lab.import_claude import to_toml

    text = to_toml(permissions, name="claude", source=Path("settings.json"), base=Path("/project"))
    toml = text + '\n[[agent]]\nname = "a"\ncommand = "x"\n'
    policy = parse_settings(tomllib.loads(toml), label="imported.toml").policies["claude"]
    assert policy.order == "deny-first"


def test_a_domain_deny_or_ask_becomes_a_broader_fetch_rule_an_allow_stays_a_comment() -> None:
    """Claude Code's `WebFetch(domain:x)`: a deny (or ask) covering every fetch is broader, which
    is safe; an allow covering every fetch would be broader too, which is not: it stays a comment."""
    from acp_tui.lab.import_claude import to_toml

    permissions = {
        "deny": ["WebFetch(domain:evil.example)"],
        "ask": ["WebFetch(domain:maybe.example)"],
        "allow": ["WebFetch(domain:docs.example)", "WebSearch(anything)"],
    }
    text = to_toml(permissions, name="claude", source=Path("settings.json"), base=Path("/project"))
    assert "# deny WebFetch(domain:evil.example): approximate: covers every fetch, not only" in text
    assert "# allow WebFetch(domain:docs.example): no equivalent: rules do not match URLs" in text
    assert "# allow WebSearch(anything): no equivalent: rules do not match URLs" in text
    policy = parse_settings(tomllib.loads(text + AGENT), label="imported.toml").policies["claude"]
    assert policy.rules == (
        Rule("deny WebFetch(domain:evil.example)", "reject", kinds=("fetch",)),
        Rule("ask WebFetch(domain:maybe.example)", "ask", kinds=("fetch",)),
    )
    fetch = PermissionAsk("Fetch https://docs.example/x", "fetch", OPTIONS, cwd="/w")
    assert asyncio.run(policy.decide(fetch)).rule == "deny WebFetch(domain:evil.example)"


def test_a_spec_with_a_newline_stays_inside_its_comment() -> None:
    from acp_tui.lab.import_claude import to_toml

    text = to_toml(
        {"deny": ['WebFetch(domain:x\n[[policy.claude.rule]]\nname = "y"\naction = "allow")']},
        name="claude",
        source=Path("settings.json"),
        base=Path("/project"),
    )
    policy = parse_settings(tomllib.loads(text + AGENT), label="imported.toml").policies["claude"]
    assert [rule.action for rule in policy.rules] == ["reject"]
