"""The carriers' URLs and client command lines, and what a remote launch carries. Podman runs for
real in test_podman.py; Docker's client (no Docker daemon here) and kubectl (no cluster at hand) are
checked here as argv only (docs/remote.md says so)."""

from __future__ import annotations

import shlex
from dataclasses import replace

import pytest

from acp_tui.process.carriers import client_command
from acp_tui.process.confined import SandboxSpec
from acp_tui.process.link import FAR_HOST_LIST
from acp_tui.process.shim import bootstrap
from acp_tui.runs.child import LOCAL, ChildStartError, Launch, RemoteCarrier, carrier_for, launch_for
from acp_tui.settings.load import parse_settings
from acp_tui.settings.provider_config import FAR_HOME, AcpProviderConfig
from acp_tui.settings.remote import RemoteError, parse_remote
from acp_tui.settings.schema import AgentPreset, ConfigError

FAR = ["python3", "-c", "x"]


def test_ssh_argv_user_port_options_then_host_and_one_quoted_command() -> None:
    remote = parse_remote("ssh://me@build-1.example:2222")
    argv = client_command(remote, ["-i", "/k", "-J", "jump"], FAR, connect_timeout=7)
    assert argv[:5] == ["ssh", "-i", "/k", "-J", "jump"]  # the user's first: for ssh, the first value wins
    assert argv[-4:] == ["me", "--", "build-1.example", "python3 -c x"]
    assert "BatchMode=yes" in argv and "ForwardAgent=no" in argv and "ConnectTimeout=7" in argv
    assert remote.where == "me@build-1.example"


def test_the_bootstrap_survives_a_login_shell() -> None:
    command = shlex.join(bootstrap())
    assert shlex.split(command) == bootstrap()
    assert not set('$`\\!\n"') & set(bootstrap()[2])


@pytest.mark.parametrize("engine", ["docker", "podman"])
def test_container_argv(engine: str) -> None:
    remote = parse_remote(f"{engine}://agent-box_1")
    assert client_command(remote, ["-u", "dev"], FAR, connect_timeout=5) == [
        engine, "exec", "-i", "-u", "dev", "--", "agent-box_1", *FAR,
    ]  # fmt: skip
    assert remote.where == f"{engine}:agent-box_1"


@pytest.mark.parametrize(
    ("url", "expected", "where"),
    [
        ("kubectl://team/agent-0", ["exec", "-i", "-n", "team", "agent-0", "--"], "pod team/agent-0"),
        ("kubectl://team/agent-0/main", ["exec", "-i", "-n", "team", "agent-0", "-c", "main", "--"],
         "pod team/agent-0/main"),
        ("kubectl://prod@eu/team/agent-0/", ["--context", "prod@eu", "exec", "-i", "-n", "team", "agent-0",
         "--"], "pod team/agent-0"),
        ("kubectl://prod/team/agent-0/main", ["--context", "prod", "exec", "-i", "-n", "team", "agent-0",
         "-c", "main", "--"], "pod team/agent-0/main"),
    ],
)  # fmt: skip
def test_kubectl_argv(url: str, expected: list[str], where: str) -> None:
    remote = parse_remote(url)
    assert client_command(remote, ["--kubeconfig", "/kc"], FAR, connect_timeout=5) == [
        "kubectl", "--kubeconfig", "/kc", *expected, *FAR,
    ]  # fmt: skip
    assert remote.where == where


@pytest.mark.parametrize(
    ("url", "says"),
    [
        ("ssh://u:secret@h", "no password in the URL"),
        ("ssh://-oProxyCommand=x", "expected ssh://[USER@]HOST[:PORT]"),
        ("ssh://h:70000", "Port out of range"),
        ("ssh://h/path", "expected ssh://[USER@]HOST[:PORT]"),
        ("docker://-it", "expected docker://CONTAINER"),
        ("docker://a/b", "expected docker://CONTAINER"),
        ("kubectl://onlyone", "expected kubectl://"),
        ("kubectl://NS/pod", "expected kubectl://"),
        ("telnet://h", 'unknown carrier "telnet"'),
        ("ssh://h?x=1", "no query or fragment"),
        ("ssh://h x", "no spaces or control characters"),
    ],
)
def test_bad_urls_are_one_line(url: str, says: str) -> None:
    with pytest.raises(RemoteError) as caught:
        parse_remote(url)
    assert says in str(caught.value) and "\n" not in str(caught.value)


def test_preset_keys_and_their_errors() -> None:
    settings = parse_settings(
        {"agent": [{"name": "far", "command": "agent", "remote": "ssh://h", "remote_options": ["-i", "k"],
                    "remote_cwd": "/srv/w"}]},
        label="agents.toml",
    )  # fmt: skip
    preset = settings.preset("far")
    config = preset.provider_config(policy="reject")
    assert (config.remote, tuple(config.remote_options), config.cwd) == ("ssh://h", ("-i", "k"), "/srv/w")
    assert preset.where == "h"
    for agent, says in [
        ({"remote": "ssh://u:p@h"}, 'agent "far": remote "ssh://u:p@h": no password in the URL'),
        ({"remote": "ssh://h", "remote_cwd": "w"}, '"remote_cwd" must be an absolute path there'),
        ({"remote": "ssh://h", "cwd": "/here"}, '"cwd" is a folder here'),
    ]:
        with pytest.raises(ConfigError) as caught:
            parse_settings({"agent": [{"name": "far", "command": "agent", **agent}]}, label="agents.toml")
        assert says in str(caught.value)


def test_a_local_preset_is_where_it_always_was() -> None:
    assert AgentPreset("here", "agent").where is None
    assert AgentPreset("here", "agent").provider_config(policy="reject").remote is None


def test_a_remote_launch_carries_the_presets_env_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    """Nothing of our environment travels: the far side lays the preset's env over its own,
    scrubbed there. The carrier is chosen in one place."""
    monkeypatch.setenv("OURS_ONLY", "here")
    config = AcpProviderConfig(
        "agent", env={"AGENT_API_KEY": "v"}, remote="ssh://h", remote_options=["-i", "k"],
        handshake_timeout=7, term_grace=0.2,
    )  # fmt: skip
    launch = launch_for(config, config.cwd_for(None))
    assert dict(launch.env) == {"AGENT_API_KEY": "v"} and launch.cwd == FAR_HOME
    assert carrier_for(config) == RemoteCarrier("ssh://h", ("-i", "k"), 7, 0.2)
    here = replace(config, remote=None)
    assert carrier_for(here) is LOCAL and launch_for(here, "/tmp").env["OURS_ONLY"] == "here"


async def test_a_host_list_is_refused_before_anything_starts() -> None:
    launch = Launch("agent", (), FAR_HOME, {}, SandboxSpec(network=("api.example.com",)))
    with pytest.raises(ChildStartError) as caught:
        await RemoteCarrier("ssh://h").start(launch)
    assert str(caught.value) == f"h: {FAR_HOST_LIST}"
