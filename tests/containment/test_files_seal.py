"""The settings seal fails closed (issue 16): it is a hash anyone can compute, so a forged one for a
file that validation refuses must not load it. Each file below is refused with the validation's own
one-line error, seal or no seal, in this process and in a fresh one."""

from __future__ import annotations

from pathlib import Path

import pytest

from acp_tui.settings import schema
from acp_tui.settings.schema import ConfigError, load_settings
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


@pytest.fixture(autouse=True)
def own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache-home"))


def forge_seal(config: Path) -> None:
    """What an agent that can write our cache can do: the seal computed as the code does."""
    seal = schema._seal_file(config)
    seal.parent.mkdir(parents=True, exist_ok=True)
    seal.write_text(schema._seal(config, config.read_bytes()))


@pytest.mark.parametrize("case", REFUSED)
def test_a_forged_seal_never_loads_what_validation_refuses(tmp_path: Path, case: str) -> None:
    text, error = REFUSED[case]
    config = tmp_path / "agents.toml"
    config.write_text(text)
    with pytest.raises(ConfigError) as unsealed:
        load_settings(config)
    assert error in str(unsealed.value)

    forge_seal(config)
    with pytest.raises(ConfigError) as sealed:
        load_settings(config)
    assert str(sealed.value) == str(unsealed.value)


def test_a_forged_seal_of_deny_first_fails_in_a_fresh_process_with_the_one_line_error(tmp_path: Path) -> None:
    text, error = REFUSED["a literal not among its values"]
    config = tmp_path / "agents.toml"
    config.write_text(text)
    forge_seal(config)
    done = acp_tui(["policy", "check", "--config", str(config), "--policy", "careful", "x"], tmp_path)
    assert done.returncode == 2
    [line] = done.stderr.splitlines()
    assert line.endswith(f" policy check: error: {config}: {error}")


def test_a_true_seal_still_spares_the_validation(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = tmp_path / "agents.toml"
    config.write_text(policy('order = "deny-first"\n') + AGENT + 'isolation = "worktree"\n')
    validated = load_settings(config)

    def validation(cls: object) -> object:
        raise AssertionError(f"{cls} validated again: the checks doubted a valid file")

    monkeypatch.setattr(schema, "_adapter", validation)
    again = load_settings(config)
    assert again == validated and again.policies["careful"].order == "deny-first"
