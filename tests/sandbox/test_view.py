"""Issue 26, items 2, 4 and 9: what a confined agent sees is deny by default.

No unix socket of the host is there to connect to (a session's D-Bus, gpg's ssh agent, a keyring,
podman, docker, X11, any other) unless a preset names it; its home is empty, so no credential store
is readable, and one a preset opens in passing stays hidden; and an agent installed anywhere (under
/tmp, a new user's clone and its venv) still runs, with its private /tmp.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import subprocess
import uuid
import venv as venvs
from collections.abc import Iterator
from pathlib import Path

import pytest

from acp_tui import AcpProviderConfig, AcpSubagentProvider, SubagentRequest, SubagentStopReason
from acp_tui.process.programs import installation
from tests.sandbox.support import TRYING_AGENT, answer, need_bwrap, outside_tmp, trying

# The credential stores of issue 26 (item 4), each planted under a home; `XDG/` ones go under
# XDG_CONFIG_HOME, which the test points elsewhere.
CREDENTIAL_FILES = (
    "XDG/gh/hosts.yml",
    "XDG/git/credentials",
    ".config/git/credentials",
    ".config/gh/hosts.yml",
    ".npmrc",
    ".pypirc",
    ".cargo/credentials.toml",
    ".vault-token",
    ".docker/config.json",
    ".kube/config",
    ".aws/credentials",
    ".config/gcloud/application_default_credentials.json",
    ".azure/msal_token_cache.json",
    ".netrc",
    ".git-credentials",
    ".gnupg/private-keys-v1.d/key.key",
    ".password-store/site.gpg",
    ".local/share/keyrings/login.keyring",
    ".ssh/id_ed25519",
)


@pytest.fixture(autouse=True)
def confined() -> None:
    need_bwrap()


@contextlib.contextmanager
def listening(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(path))
        server.listen()
        try:
            yield
        finally:
            path.unlink()


# Item 2: sockets -----------------------------------------------------------------------------------


async def test_no_unix_socket_of_the_host_is_reachable_unless_a_preset_names_it(tmp_path: Path) -> None:
    tag = uuid.uuid4().hex[:8]
    with contextlib.ExitStack() as stack:
        home = stack.enter_context(outside_tmp("acp-tui-home-"))
        elsewhere = stack.enter_context(outside_tmp("acp-tui-app-"))
        # As root, the places a session really has them; else what we may write, named alike.
        run = Path("/run") if os.geteuid() == 0 else elsewhere / "run"
        runtime = run / f"acp-tui-user-{tag}"  # $XDG_RUNTIME_DIR, as /run/user/UID
        stack.callback(lambda: subprocess.run(["rm", "-rf", str(runtime)], check=False))
        sockets = {
            "bus": runtime / "bus",  # D-Bus: `systemd-run --user` runs anything outside
            "gpg-ssh": runtime / "gnupg" / "S.gpg-agent.ssh",
            "keyring": runtime / "keyring" / "control",
            "podman": runtime / "podman" / "podman.sock",
            "docker": run / f"acp-tui-docker-{tag}.sock",  # /var/run/docker.sock: root on the host
            "system-bus": run / "dbus" / f"acp-tui-{tag}",
            "x11": Path("/tmp/.X11-unix") / f"X{tag}",
            "gpg": home / ".gnupg" / "S.gpg-agent",
            "any": elsewhere / "app.sock",
        }
        for path in sockets.values():
            stack.enter_context(listening(path))
        env = {"HOME": str(home), "XDG_RUNTIME_DIR": str(runtime), "SSH_AUTH_SOCK": str(sockets["gpg-ssh"])}
        steps = [("unix", str(path)) for path in sockets.values()]
        plain = await answer(trying(sandbox="none", env=env), steps, tmp_path)
        inside = await answer(trying(env=env), [*steps, ("write", f"{runtime}/its-own")], tmp_path)
        named = await answer(trying(env=env, sandbox_sockets=[str(sockets["bus"])]), steps, tmp_path)
        assert not (runtime / "its-own").exists()
    assert plain == ["ok"] * len(sockets)
    assert inside == ["error:ENOENT"] * len(sockets) + ["ok"]  # its $XDG_RUNTIME_DIR is its own
    assert named == ["ok", *["error:ENOENT"] * (len(sockets) - 1)]


async def test_sandbox_sockets_naming_what_is_no_socket_is_refused_in_one_line(tmp_path: Path) -> None:
    config = trying(sandbox_sockets=[str(tmp_path)])
    run = await AcpSubagentProvider(config).start(SubagentRequest("[]", cwd=str(tmp_path)))
    result = await run.result()
    assert result.stop_reason is SubagentStopReason.ERROR
    assert result.error == f"sandbox: sandbox_sockets names {tmp_path}, which is not a unix socket"


# Item 4: credential stores ---------------------------------------------------------------------------


@pytest.mark.parametrize("opened", ["nothing", "the whole home"])
async def test_no_credential_store_is_readable_even_in_a_home_a_preset_opens(
    tmp_path: Path, opened: str
) -> None:
    with outside_tmp("acp-tui-home-") as home, outside_tmp("acp-tui-xdg-") as xdg:
        paths = [
            xdg / name.removeprefix("XDG/") if name.startswith("XDG/") else home / name
            for name in CREDENTIAL_FILES
        ]
        for path in paths:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("secret")
        (home / "notes.txt").write_text("notes")
        env = {"HOME": str(home), "XDG_CONFIG_HOME": str(xdg)}
        steps = [("read", str(path)) for path in [*paths, home / "notes.txt"]]
        readable = ["~", str(xdg)] if opened == "the whole home" else []
        plain = await answer(trying(sandbox="none", env=env), steps, tmp_path)
        inside = await answer(trying(env=env, sandbox_readable=readable), steps, tmp_path)
    assert plain == ["ok:secret"] * len(paths) + ["ok:notes"]
    leaked = [str(path) for path, said in zip(paths, inside, strict=False) if not said.startswith("error:")]
    assert leaked == []
    assert inside[-1] == ("ok:notes" if readable else "error:ENOENT")


async def test_a_preset_opens_its_agents_own_folders_and_nothing_else(tmp_path: Path) -> None:
    """As the sample presets do: Codex's ~/.codex writable, a file read-only, the rest of home unseen."""
    with outside_tmp("acp-tui-home-") as home:
        for name in (".codex/auth.json", ".gitconfig", ".gemini/settings.json"):
            (home / name).parent.mkdir(parents=True, exist_ok=True)
            (home / name).write_text(name)
        env = {"HOME": str(home)}
        config = trying(env=env, sandbox_writable=["~/.codex"], sandbox_readable=["~/.gitconfig"])
        steps = [
            ("read", f"{home}/.codex/auth.json"),
            ("write", f"{home}/.codex/sessions.jsonl"),
            ("read", f"{home}/.gitconfig"),
            ("write", f"{home}/.gitconfig"),
            ("read", f"{home}/.gemini/settings.json"),
        ]
        said = await answer(config, steps, tmp_path)
        assert (home / ".codex" / "sessions.jsonl").exists()
    assert said == ["ok:.codex/auth.json", "ok", "ok:.gitconfig", "error:EROFS", "error:ENOENT"]


# Item 9: an agent installed anywhere ------------------------------------------------------------------


async def test_an_agent_installed_under_tmp_runs_confined_and_its_tmp_stays_private(tmp_path: Path) -> None:
    """A venv under /tmp (as a new user's clone makes it): its program, the venv and the Python it
    was made from are shown read-only; the rest of /tmp is still the agent's own."""
    venv = tmp_path / "venv"  # tmp_path lies under /tmp
    venvs.create(venv, symlinks=True)
    program = venv / "bin" / "trying-agent"
    program.write_text(f"#!{venv}/bin/python\n" + Path(TRYING_AGENT).read_text())
    program.chmod(0o755)
    (tmp_path / "secret.txt").write_text("the user's")
    config = AcpProviderConfig(command=str(program), sandbox="workspace", term_grace=0.3, cancel_grace=0.5)
    its_own = Path(f"/tmp/acp-tui-its-own-{uuid.uuid4().hex}")
    steps = [
        ("procs",),
        ("read", f"{tmp_path}/secret.txt"),
        ("write", f"{venv}/planted"),
        ("write", str(its_own)),
    ]
    with outside_tmp("acp-tui-work-") as work:
        said = await answer(config, steps, work)
    assert said == ["ok:2", "error:ENOENT", "error:EROFS", "ok"]
    assert not (venv / "planted").exists() and not its_own.exists()


async def test_a_program_run_by_a_system_shell_shows_nothing_more_of_the_machine() -> None:
    """A `#!/bin/sh` wrapper: where /bin and /lib are links into /usr, `/` has `bin/sh` and
    `lib/python3.X/os.py`, the landmarks of a Python installation, and was shown whole."""
    python = shutil.which("python3", path="/usr/bin:/bin")
    if python is None:
        pytest.skip("no python3 in /usr/bin to run the trying agent with")
    with outside_tmp("acp-tui-tools-") as tools, outside_tmp("acp-tui-other-") as other:
        wrapper = tools / "agent"
        text = f"#!/bin/sh\nexec {python} {TRYING_AGENT}\n"
        wrapper.write_text(text)
        wrapper.chmod(0o755)
        (other / "secret.txt").write_text("the user's")
        config = AcpProviderConfig(command=str(wrapper), sandbox="workspace", sandbox_readable=[TRYING_AGENT])
        with outside_tmp("acp-tui-work-") as work:
            said = await answer(config, [("read", f"{other}/secret.txt"), ("read", str(wrapper))], work)
    assert said == ["error:ENOENT", f"ok:{text}"]


async def test_what_the_agent_wrote_never_chooses_what_a_later_run_sees() -> None:
    """The script its interpreter is given lies in its cwd: a `#!` line it writes there named what
    the next run's sandbox showed, read-only (a folder of the user's, here)."""
    with outside_tmp("acp-tui-work-") as work, outside_tmp("acp-tui-other-") as other:
        (other / "secret.txt").write_text("the user's")
        script = work / "agent.py"
        script.write_text(Path(TRYING_AGENT).read_text())
        config = trying(args=[script.name])
        planted = f"#!{other}\n{script.read_text()}"
        first = await answer(config, [("put", str(script), planted), ("read", f"{other}/secret.txt")], work)
        again = await answer(config, [("read", f"{other}/secret.txt")], work)
    assert first == ["ok", "error:ENOENT"]
    assert again == ["error:ENOENT"]


@pytest.mark.parametrize("key", ["sandbox_readable", "sandbox_writable", "sandbox_sockets"])
async def test_a_path_opened_where_the_agent_writes_never_leads_out_through_its_link(key: str) -> None:
    """A preset opens `data` in the cwd, which is not there yet: the agent makes it a link to a
    folder of the user's (or a socket), and the next run would show that."""
    with contextlib.ExitStack() as stack:
        work, other = (stack.enter_context(outside_tmp(f"acp-tui-{name}-")) for name in ("work", "other"))
        (other / "secret.txt").write_text("the user's")
        target = other / "app.sock" if key == "sandbox_sockets" else other
        if key == "sandbox_sockets":
            stack.enter_context(listening(target))
        config = trying(**{key: ["data"]})
        first = await answer(config, [("link", str(target), "data")], work)
        run = await AcpSubagentProvider(config).start(SubagentRequest("[]", cwd=str(work)))
        again = await run.result()
    assert first == ["ok"]
    assert again.stop_reason is SubagentStopReason.ERROR
    assert again.error == (
        f"sandbox: {key} names {work}/data, which leads out of {work} (a link there, which the agent "
        "could have made)"
    )


@pytest.mark.parametrize("where", ["home", "above it"])
async def test_a_cwd_that_holds_the_home_is_refused(where: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Started where a shell starts, in the home: its cwd writable would be `~/.bashrc`,
    `~/.gitconfig`, `~/.config/systemd/user`, all that the user's shell and git run unconfined."""
    with outside_tmp("acp-tui-top-") as top:
        home = top / "home"
        home.mkdir()
        cwd = home if where == "home" else top
        monkeypatch.setenv("HOME", str(home))  # not the preset's env, which the error would mask
        run = await AcpSubagentProvider(trying()).start(
            SubagentRequest(json.dumps([["write", f"{home}/.bashrc"]]), cwd=str(cwd))
        )
        result = await run.result()
        assert not (home / ".bashrc").exists()
    assert result.stop_reason is SubagentStopReason.ERROR
    assert result.error == (
        f"sandbox: the agent's cwd {cwd} holds a home ({home}), whose files your shell and git run "
        "(~/.bashrc, ~/.gitconfig): give it a folder of its work"
    )


def test_an_installation_holds_the_venv_its_python_its_editable_projects_and_node_modules(
    tmp_path: Path,
) -> None:
    python = tmp_path / "python3.12" / "bin" / "python3.12"  # a Python installation, by its landmark
    (python.parent.parent / "lib" / "python3.12").mkdir(parents=True)
    (python.parent.parent / "lib" / "python3.12" / "os.py").write_text("")
    python.parent.mkdir()
    python.write_bytes(b"\x7fELF")
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "pyvenv.cfg").write_text(f"home = {python.parent}\n")
    (venv / "bin" / "python").symlink_to(python)
    (venv / "bin" / "agent").write_text(f"#!{venv}/bin/python\nimport agent\n")
    record = venv / "lib" / "python3.12" / "site-packages" / "agent-1.0.dist-info" / "direct_url.json"
    record.parent.mkdir(parents=True)
    project = tmp_path / "agent project"
    record.write_text(json.dumps({"url": project.as_uri(), "dir_info": {"editable": True}}))
    assert set(installation(str(venv / "bin" / "agent"), [], cwd=str(tmp_path), env={})) >= {
        str(venv / "bin" / "agent"),
        str(venv),
        str(python.parent.parent),
        str(project),
    }
    modules = tmp_path / "app" / "node_modules"
    (modules / "pkg" / "bin").mkdir(parents=True)
    (modules / "pkg" / "bin" / "agent.js").write_text("#!/usr/bin/env -S node --no-warnings\n")
    (modules / ".bin").mkdir()
    (modules / ".bin" / "agent").symlink_to("../pkg/bin/agent.js")
    node = tmp_path / "node" / "bin" / "node"
    node.parent.mkdir(parents=True)
    node.write_bytes(b"\x7fELF")
    node.chmod(0o755)
    found = installation(
        str(modules / ".bin" / "agent"), [], cwd=str(tmp_path), env={"PATH": str(node.parent)}
    )
    assert set(found) >= {str(modules), str(node)}


async def test_as_root_what_only_root_may_read_of_the_system_is_hidden(tmp_path: Path) -> None:
    """Root reads what root owns, capabilities or not: /etc/shadow and ssh's host keys are absent."""
    if os.geteuid() != 0:
        pytest.skip("not root: what only root may read is unreadable to the agent anyway")
    shadow = Path("/etc/shadow")
    steps = [("read", str(shadow)), ("read", "/etc/passwd")]
    plain = await answer(trying(sandbox="none"), steps, tmp_path)
    inside = await answer(trying(), steps, tmp_path)
    # Its first line only: other tests add users as this runs (the unprivileged ones).
    assert plain[0].startswith("ok:" + shadow.read_text().partition("\n")[0]) and plain[1].startswith(
        "ok:root:"
    )
    assert inside[0].startswith("error:") and inside[1] == plain[1]


def test_a_root_only_file_gone_since_it_was_seen_does_not_stop_the_next_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The system's root-only files are found once; one gone since (useradd's /etc/subuid.lock
    held for a moment) is not hidden again: bwrap could not lay a file there."""
    need_bwrap()
    from acp_tui.process import sandbox

    fleeting = tmp_path / "subuid.lock"
    seen = (*sandbox._system(), sandbox._Mount(str(fleeting), "hide", rank=0))
    monkeypatch.setattr(sandbox, "_system", lambda: seen)
    confinement = sandbox.confine("true", [], cwd=str(tmp_path), env=os.environ)
    try:
        assert str(fleeting) not in confinement.argv
        # bwrap exits as soon as its sandbox's init reports the exit code, before that init has
        # ended; reading the output to its end waits for every holder of the pipe, the init too.
        done = subprocess.run(confinement.argv, preexec_fn=confinement.preexec, capture_output=True)
        assert done.returncode == 0, done.stderr
    finally:
        confinement.close()
