"""The child's environment: the parent's minus credential-shaped names, plus the config's own `env`."""

from __future__ import annotations

import dataclasses
import os
import string

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from acp_tui import AcpProviderConfig, AcpSubagentProvider, SubagentRequest, SubagentStopReason
from acp_tui.process.environment import child_environment, is_credential_name
from tests.helpers import CREDENTIAL_MARKERS, CREDENTIAL_PARTS, credential_shaped, scripted

NAME_CHARS = string.ascii_letters + string.digits + "_"


def any_case(word: str) -> st.SearchStrategy[str]:
    return st.tuples(*(st.sampled_from((c.lower(), c.upper())) for c in word)).map("".join)


affix = st.text(alphabet=NAME_CHARS, max_size=12)
part = st.text(alphabet=string.ascii_letters + string.digits, min_size=1, max_size=8)
any_case_marker = st.sampled_from(CREDENTIAL_MARKERS).flatmap(any_case)
marked_names = st.builds(lambda pre, marker, post: pre + marker + post, affix, any_case_marker, affix)
# A short word as a whole part: `DB_PASS`, `REDISCLI_AUTH`, `OP_SESSION_me`, `MYSQL_PWD`.
part_names = st.builds(
    lambda before, word, after: "_".join([*before, word, *after]),
    st.lists(part, max_size=2),
    st.sampled_from(CREDENTIAL_PARTS).flatmap(any_case),
    st.lists(part, max_size=2),
) | st.builds(lambda first, pwd: f"{first}_{pwd}", part, any_case("PWD"))
credential_names = (marked_names | part_names).filter(credential_shaped)  # not a session's own name
plain_names = st.text(alphabet=NAME_CHARS, min_size=1, max_size=20).filter(lambda n: not credential_shaped(n))
names = st.one_of(plain_names, credential_names)
values = st.text(alphabet=string.printable.strip() + " ", max_size=16)

# Issue 26's names, and the other ways credentials are named.
CREDENTIALS = [
    "PGPASSWORD", "MYSQL_PWD", "SMTP_PASSWORD", "REDISCLI_AUTH", "DB_PASS", "pass", "HTPASSWD",
    "GPG_PASSPHRASE", "GOOGLE_APPLICATION_CREDENTIALS", "SESSION_COOKIE", "BW_SESSION", "OP_SESSION_me",
    "npm_config__auth", "DB_PWD_FILE", "XDG_SESSION_TOKEN", "ANTHROPIC_API_KEY",
]  # fmt: skip
# Names with a credential word inside another, or the session's own: agents need some of them.
NOT_CREDENTIALS_HERE = [
    "PWD", "OLDPWD", "XDG_SESSION_TYPE", "XDG_SESSION_ID", "DBUS_SESSION_BUS_ADDRESS", "DESKTOP_SESSION",
    "SESSION_MANAGER", "GDMSESSION", "SSH_AUTH_SOCK", "GPG_AGENT_INFO", "GIT_AUTHOR_NAME", "XAUTHORITY",
    "PASSENGER_APP_ENV", "BYPASS_CACHE", "SSH_ASKPASS", "PGPASSFILE", "PATH", "HOME",
]  # fmt: skip


@pytest.mark.parametrize("name", CREDENTIALS)
def test_passwords_auth_sessions_and_cookies_are_credentials(name: str) -> None:
    assert credential_shaped(name)
    assert is_credential_name(name)


@pytest.mark.parametrize("name", NOT_CREDENTIALS_HERE)
def test_words_inside_other_words_and_the_sessions_own_names_are_not(name: str) -> None:
    assert not credential_shaped(name)
    assert not is_credential_name(name)


@settings(max_examples=300, deadline=None)
@given(credential_names)
def test_credential_names_are_recognised_in_any_case_at_any_position(name: str) -> None:
    assert is_credential_name(name)


@settings(max_examples=300, deadline=None)
@given(plain_names)
def test_other_names_are_not_credentials(name: str) -> None:
    assert not is_credential_name(name)


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(names, values, max_size=12), st.dictionaries(names, values, max_size=6))
def test_scrub_then_overlay(parent: dict[str, str], overlay: dict[str, str]) -> None:
    env = child_environment(overlay, parent)

    for name, value in parent.items():
        if name in overlay:
            continue
        if credential_shaped(name):
            assert name not in env, f"{name} leaked to the child"
        else:
            assert env[name] == value, f"{name} was not inherited"
    for name, value in overlay.items():  # the overlay wins, credential-shaped or not
        assert env[name] == value
    assert set(env) == {n for n in parent if not credential_shaped(n)} | set(overlay)


def test_the_parent_environment_is_os_environ_by_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ACP_TUI_TEST_PLAIN", "kept")
    monkeypatch.setenv("ACP_TUI_TEST_Api_Key", "dropped")
    env = child_environment({})
    assert env["ACP_TUI_TEST_PLAIN"] == "kept"
    assert "ACP_TUI_TEST_Api_Key" not in env
    assert env["PATH"] == os.environ["PATH"]


# End to end: what a real child process sees ------------------------------------------------------------


async def child_sees(name: str, config: AcpProviderConfig | None = None) -> str:
    config = config or scripted(echo_env=name)
    run = await AcpSubagentProvider(config).start(SubagentRequest("env?"))
    result = await run.result()
    assert result.stop_reason is SubagentStopReason.COMPLETED, result.error
    return result.output


@pytest.mark.parametrize(
    "name",
    ["ACP_TUI_TEST_API_KEY", "acp_tui_test_token", "ACP_TUI_X_SeCrEt_Y", "ACP_TUI_PGPASSWORD", "A_PWD"],
)
async def test_a_child_never_sees_a_credential_from_our_environment(
    monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    monkeypatch.setenv(name, "from-the-parent")
    assert await child_sees(name) == "<unset>"


async def test_a_child_sees_a_credential_passed_explicitly_in_config_env(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ACP_TUI_TEST_API_KEY", "from-the-parent")
    config = dataclasses.replace(
        scripted(echo_env="ACP_TUI_TEST_API_KEY"), env={"ACP_TUI_TEST_API_KEY": "for-this-agent"}
    )
    # The child echoes what it got; values from `env` are masked on our side, so an exact match
    # with the explicit value is what shows as the mask.
    assert await child_sees("ACP_TUI_TEST_API_KEY", config) == "***"


async def test_a_child_inherits_other_variables_and_the_overlay_wins(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ACP_TUI_TEST_PLAIN", "from-the-parent")
    assert await child_sees("ACP_TUI_TEST_PLAIN") == "from-the-parent"
    config = dataclasses.replace(
        scripted(echo_env="ACP_TUI_TEST_PLAIN"), env={"ACP_TUI_TEST_PLAIN": "overlaid"}
    )
    assert await child_sees("ACP_TUI_TEST_PLAIN", config) == "***"  # the overlay's value, masked
