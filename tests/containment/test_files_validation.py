"""Every settings file is validated (issue 16, then 18): nothing kept in a folder an agent can write
(a seal in our cache once was) spares a file its validation. Each file below is refused with the
validation's own one-line error, however often it was read, in this process and in a fresh one."""

from __future__ import annotations

from pathlib import Path

import pytest

from acp_tui.settings.load import load_settings
from acp_tui.settings.schema import ConfigError
from tests.containment.test_readers_commands import acp_tui

AGENT = '[[agent]]\nname = "a"\ncommand = "x"\n'


def policy(table: str = "", rule: str = 'action = "allow"\n') -> str:
    return f"[policy.careful]\n{table}[[policy.careful.rule]]\n{rule}"


REFUSED = {
    "a literal not among its values": (
        policy('order = "deny first"\n') + AGENT,
        'policy "careful": "order" must be "first-match" or "deny-first"',
    ),
    "a literal in a rule": (
        policy(rule='action = "allow-always"\n') + AGENT,
        'policy "careful": rule 1: "action" must be "allow", "reject" or "ask"',
    ),
    "a number where a string goes": (AGENT + "args = [1]\n", 'agent "a": "args" must be a list of strings'),
    "a string where seconds go": (
        AGENT + 'handshake_timeout = "5"\n',
        'agent "a": "handshake_timeout" must be a positive number of seconds',
    ),
    "seconds out of range": (
        AGENT + "run_timeout = -1\n",
        'agent "a": "run_timeout" must be a positive number of seconds',
    ),
    "infinite seconds": (
        AGENT + "idle_timeout = inf\n",
        'agent "a": "idle_timeout" must be a positive number of seconds',
    ),
    "a boolean that is a number": ("bell = 1\n" + AGENT, '"bell" must be true or false'),
    "a blank name": (AGENT.replace('"a"', '"  "'), 'agent #1: "name" must be a non-empty string'),
    "a required field missing": (policy(rule='name = "r"\n') + AGENT, '"action" is required'),
    "an unknown key of an mcp server": (
        AGENT + '[[agent.mcp_servers]]\nname = "m"\ncommand = "c"\nshell = "sh -c x"\n',
        'unknown key "shell"',
    ),
    "an isolation that does not exist": (
        AGENT + 'isolation = "sandbox"\n',
        'agent "a": "isolation" must be "none" or "worktree"',
    ),
}


@pytest.mark.parametrize("case", REFUSED)
def test_a_refused_file_is_refused_every_time(tmp_path: Path, case: str) -> None:
    text, error = REFUSED[case]
    config = tmp_path / "agents.toml"
    config.write_text(text)
    raised = []
    for _ in range(2):
        with pytest.raises(ConfigError) as refused:
            load_settings(config)
        raised.append(str(refused.value))
    assert error in raised[0] and raised[0] == raised[1]


def test_a_refused_file_fails_in_a_fresh_process_with_the_one_line_error(tmp_path: Path) -> None:
    text, error = REFUSED["a literal not among its values"]
    config = tmp_path / "agents.toml"
    config.write_text(text)
    done = acp_tui(["policy", "check", "--config", str(config), "--policy", "careful", "x"], tmp_path)
    assert done.returncode == 2
    [line] = done.stderr.splitlines()
    assert line.endswith(f" policy check: error: {config}: {error}")
