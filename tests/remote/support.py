"""A real far side for the remote tests: Debian's sshd, started here, a key and an unprivileged user
made here (one per test process: two workers never share one), and a network namespace (with a veth
pair) whose link a test can cut.

Everything is made as root (CI runs as root); without root, or without sshd, the tests skip, unless
ACP_TUI_REQUIRE_SSHD is set (CI), where they fail instead. Every process, namespace and user made
here is ended and removed by id or name, even when a test fails.

The far side's end of a run is awaited, never timed: `await_gone` waits on each process's pidfd
until none is left (the test's timeout is the only clock). Why the shim ended what it held is read
from its log (`ACP_TUI_SHIM_LOG`, set for every session by sshd): `ends()`.
"""

from __future__ import annotations

import contextlib
import json
import os
import pwd
import secrets
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from acp_tui.process.shim import SHIM_LOG, SHIM_MARK
from acp_tui.process.watchdog import read_environ, read_proc
from tests.helpers import HERE, SCRIPTED_AGENT

TRYING_AGENT = HERE / "sandbox" / "trying_agent.py"
SESSIONS_AGENT = HERE / "sessions_agent.py"
AGENTS = (SCRIPTED_AGENT, TRYING_AGENT, SESSIONS_AGENT)  # copied into the far user's home

FAR_USER = f"acptui-far{os.getpid() % 100000}"
SSHD = "/usr/sbin/sshd"
# What sshd hands every session: a credential the shim must scrub before the agent sees it.
FAR_CREDENTIAL = ("FAR_SECRET_TOKEN", "far-secret-value-4242")


def require_sshd() -> None:
    """Skip (fail under ACP_TUI_REQUIRE_SSHD) when a real sshd cannot be had here."""
    missing = None
    if os.geteuid() != 0:
        missing = "the remote tests make a user and run sshd: they need root"
    elif not os.path.exists(SSHD) or shutil.which("ssh") is None:
        missing = "openssh-server and openssh-client are needed (apt install openssh-server)"
    if missing is None:
        return
    if os.environ.get("ACP_TUI_REQUIRE_SSHD"):
        pytest.fail(missing)
    pytest.skip(missing)


@contextlib.contextmanager
def far_user_made() -> Iterator[pwd.struct_passwd]:
    """The unprivileged user the tests log in as (`*` is no password, and unlocked), removed with
    its home at the end."""
    require_sshd()
    subprocess.run(["useradd", "--create-home", "--shell", "/bin/sh", FAR_USER], check=True)
    try:
        subprocess.run(["usermod", "-p", "*", FAR_USER], check=True)
        user = pwd.getpwnam(FAR_USER)
        for agent in AGENTS:
            copy = Path(user.pw_dir) / Path(agent).name
            shutil.copyfile(agent, copy)
            os.chown(copy, user.pw_uid, user.pw_gid)
        yield user
    finally:
        end_far_processes()
        subprocess.run(["userdel", "--force", "--remove", FAR_USER], capture_output=True)


def far_user() -> pwd.struct_passwd:
    return pwd.getpwnam(FAR_USER)


@dataclass
class FarHost:
    """An sshd and how to reach it as the far user."""

    address: str
    port: int
    options: tuple[str, ...]  # the client's: our key, our known_hosts, no user config
    home: Path
    log: Path  # the shim's log over there (ACP_TUI_SHIM_LOG)

    @property
    def url(self) -> str:
        return f"ssh://{FAR_USER}@{self.address}:{self.port}"

    @property
    def where(self) -> str:
        return f"{FAR_USER}@{self.address}"

    def agent(self, name: str) -> str:
        """One of AGENTS, as the far side names it."""
        return str(self.home / name)

    def last_end(self) -> dict[str, Any]:
        return last_end(self.log)


def _free_port(address: str, netns: str | None) -> int:
    if netns is None:
        with socket.socket() as sock:
            sock.bind((address, 0))
            return int(sock.getsockname()[1])
    return 20000 + secrets.randbelow(20000)  # a namespace of its own: nothing else listens there


@contextlib.contextmanager
def sshd(address: str = "127.0.0.1", netns: str | None = None, path: str | None = None) -> Iterator[FarHost]:
    """A real sshd on `address` (in `netns`, if given), ended with every session it started; its
    sessions' PATH is `path` when given."""
    require_sshd()
    home = Path(far_user().pw_dir)
    folder = Path(tempfile.mkdtemp(prefix="acp-tui-sshd-"))
    folder.chmod(0o755)  # sshd reads the authorized keys as the far user
    server = None
    try:
        for name in ("host_key", "client_key"):
            subprocess.run(
                ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(folder / name)], check=True
            )
        (folder / "authorized_keys").write_text((folder / "client_key.pub").read_text())
        (folder / "authorized_keys").chmod(0o644)
        log = folder / "shim.log"
        log.touch(mode=0o666)
        log.chmod(0o666)
        port = _free_port(address, netns)
        host_key = (folder / "host_key.pub").read_text().split()
        (folder / "known_hosts").write_text(f"[{address}]:{port} {host_key[0]} {host_key[1]}\n")
        config = folder / "sshd_config"
        config.write_text(
            f"Port {port}\nListenAddress {address}\nHostKey {folder / 'host_key'}\n"
            f"AuthorizedKeysFile {folder / 'authorized_keys'}\nPasswordAuthentication no\n"
            "KbdInteractiveAuthentication no\nUsePAM no\nStrictModes no\nPidFile none\n"
            f"AllowUsers {FAR_USER}\nSetEnv {FAR_CREDENTIAL[0]}={FAR_CREDENTIAL[1]} {SHIM_LOG}={log}"
            + (f" PATH={path}\n" if path else "\n")
        )
        Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)  # privilege separation needs it
        argv = [SSHD, "-D", "-e", "-f", str(config)]
        if netns is not None:
            argv = ["ip", "netns", "exec", netns, *argv]
        said = open(folder / "sshd.log", "wb")  # noqa: SIM115 (closed below)
        server = subprocess.Popen(argv, stdout=said, stderr=said, env={"PATH": "/usr/sbin:/usr/bin:/bin"})
        said.close()
        _wait_listening(server, folder / "sshd.log")
        options = (
            "-F", os.devnull,
            "-i", str(folder / "client_key"),
            "-o", "IdentitiesOnly=yes",
            "-o", f"UserKnownHostsFile={folder / 'known_hosts'}",
            "-o", "StrictHostKeyChecking=yes",
        )  # fmt: skip
        yield FarHost(address, port, options, home, log)
    finally:
        if server is not None:
            end_tree(server.pid)
            server.wait()
        end_far_processes()
        shutil.rmtree(folder, ignore_errors=True)


def _wait_listening(server: subprocess.Popen[bytes], log: Path) -> None:
    """sshd says "Server listening" once it accepts connections (`-e`: its log on stderr)."""
    while b"Server listening" not in log.read_bytes():
        if server.poll() is not None:
            raise RuntimeError(f"sshd did not start: {log.read_text(errors='replace')}")
        time.sleep(0.02)


@dataclass
class Netns:
    name: str
    host_side: str  # the veth end in our namespace: down cuts the link
    address: str  # the far side's address, in the namespace


@contextlib.contextmanager
def network_namespace() -> Iterator[Netns]:
    """A network namespace joined to ours by a veth pair (10.231.N.1 here, 10.231.N.2 there)."""
    require_sshd()
    tag = secrets.token_hex(3)
    name, here, there = f"acptui-{tag}", f"at{tag}a", f"at{tag}b"
    subnet = f"10.231.{secrets.randbelow(250) + 1}"
    try:
        for argv in (
            ["ip", "netns", "add", name],
            ["ip", "link", "add", here, "type", "veth", "peer", "name", there],
            ["ip", "link", "set", there, "netns", name],
            ["ip", "addr", "add", f"{subnet}.1/24", "dev", here],
            ["ip", "link", "set", here, "up"],
            ["ip", "netns", "exec", name, "ip", "addr", "add", f"{subnet}.2/24", "dev", there],
            ["ip", "netns", "exec", name, "ip", "link", "set", there, "up"],
            ["ip", "netns", "exec", name, "ip", "link", "set", "lo", "up"],
        ):
            subprocess.run(argv, check=True, capture_output=True)
        yield Netns(name, here, f"{subnet}.2")
    finally:
        subprocess.run(["ip", "link", "del", here], capture_output=True)
        subprocess.run(["ip", "netns", "del", name], capture_output=True)


def set_link(netns: Netns, state: str) -> None:
    subprocess.run(["ip", "link", "set", netns.host_side, state], check=True)


def silence(netns: Netns) -> None:
    """Whatever we send there is lost, and nothing answers: the far address is pinned to a hardware
    address no one has (a link set down would drop its route, and the packets would go the default
    way, where a network may refuse them at once)."""
    pinned = ["lladdr", "02:00:00:00:00:01", "dev", netns.host_side, "nud", "permanent"]
    subprocess.run(["ip", "neigh", "replace", netns.address, *pinned], check=True)


def far_agents() -> list[int]:
    """Live processes on the far side that the shim started (its mark in their environment)."""
    return [pid for pid, environ in _processes(far_user().pw_uid) if SHIM_MARK.encode() in environ]


def far_processes() -> list[int]:
    """Every live process of the far user, the shims included (sshd's own session processes not)."""
    return [pid for pid, _ in _processes(far_user().pw_uid) if not _cmdline(pid).startswith(b"sshd:")]


def await_gone(processes: Callable[[], list[int]]) -> None:
    """Return once `processes()` lists none: each is waited for on its pidfd (readable when it has
    exited), then the list is read again (one may have started meanwhile). No clock: a test's
    timeout is the only bound."""
    while pids := processes():
        for pid in pids:
            try:
                fd = os.pidfd_open(pid)
            except ProcessLookupError:
                continue
            try:
                select.select([fd], [], [])
            finally:
                os.close(fd)


def far_folder(name: str) -> Path:
    """A fresh folder of the far user's, in its home."""
    user = far_user()
    folder = Path(user.pw_dir) / name
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir()
    os.chown(folder, user.pw_uid, user.pw_gid)
    return folder


def end_far_processes() -> None:
    with contextlib.suppress(KeyError):  # no far user: nothing of it runs
        for pid, _ in _processes(far_user().pw_uid):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


def end_tree(root: int) -> None:
    """SIGKILL `root` and every descendant of it, by pid (sshd and the sessions it forked)."""
    children: dict[int, list[int]] = {}
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                stat = Path(f"/proc/{entry.name}/stat").read_bytes()
                ppid = int(stat[stat.rfind(b")") + 2 :].split()[1])
                children.setdefault(ppid, []).append(int(entry.name))
    todo = [root]
    while todo:
        pid = todo.pop()
        todo.extend(children.get(pid, []))
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def _processes(uid: int) -> list[tuple[int, list[bytes]]]:
    """Live processes of `uid`, with the names in their environment."""
    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            if entry.stat().st_uid != uid:
                continue
        except OSError:
            continue
        proc, environ = read_proc(int(entry.name)), read_environ(int(entry.name))
        if proc is not None and not proc.dead and environ is not None:
            found.append((int(entry.name), [e.partition(b"=")[0] for e in environ]))
    return found


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def all_cmdlines() -> list[bytes]:
    """Every process's command line on this machine (both sides of the link are here)."""
    return [_cmdline(int(entry.name)) for entry in os.scandir("/proc") if entry.name.isdigit()]


def agents_toml(folder: Path, name: str, argv: list[str], remote: str, **keys: Any) -> Path:
    """A config of one agent, `argv` on the far side of `remote` (more preset keys in `keys`)."""
    config = folder / "agents.toml"
    lines = [
        f"name = {json.dumps(name)}",
        f"command = {json.dumps(argv[0])}",
        f"args = {json.dumps(argv[1:])}",
    ]
    lines += [f"{key} = {json.dumps(value)}" for key, value in {"remote": remote, **keys}.items()]
    config.write_text("[[agent]]\n" + "\n".join(lines) + "\n")
    return config


def acp_tui(config: Path, *args: str) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-m", "acp_tui", "--config", str(config), *args]
    return subprocess.run(argv, capture_output=True, text=True)


def sigkill_acp_tui_amid(config: Path, running: Callable[[], list[int]], count: int) -> None:
    """`acp-tui run` of `config`, SIGKILLed once `running()` lists `count` processes; returns once
    none of them is left (awaited, not timed)."""
    argv = [sys.executable, "-m", "acp_tui", "--config", str(config), "run", "--prompt", "hi"]
    supervisor = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        while len(running()) < count:  # a look at the process table until they all run
            assert supervisor.poll() is None, "acp-tui ended before its agent ran"
            time.sleep(0.02)
        supervisor.send_signal(signal.SIGKILL)
        supervisor.wait()
        await_gone(running)
    finally:
        if supervisor.poll() is None:
            supervisor.kill()
            supervisor.wait()


def worktree_round_trip(config: Path, here: Path) -> dict[str, Any]:
    """`acp-tui run --worktree` of `config` (the trying agent writes made-there.txt), then `acp-tui
    apply` of its record in `here`, a clone of the far checkout: the record."""
    prompt = json.dumps([["write", "made-there.txt"]])
    done = acp_tui(config, "run", "--prompt", prompt, "--worktree", "--format", "json")
    assert done.returncode == 0, done.stderr
    record: dict[str, Any] = json.loads(done.stdout)
    assert record["cwd"] == record["worktree"]
    assert record["diff_stat"] == {"files": 1, "insertions": 1, "deletions": 0}
    (here.parent / "records.jsonl").write_text(done.stdout)
    applied = acp_tui(config, "apply", str(here.parent / "records.jsonl"), "--cwd", str(here))
    assert applied.returncode == 0, applied.stderr
    assert (here / "made-there.txt").read_text() == "written by the agent\n"  # applied here
    return record


def last_end(log: Path) -> dict[str, Any]:
    """How the shim ended the last group it held (`why`, `ended_by`, `code`), as it logged it."""
    said: dict[str, Any] = json.loads(log.read_text().splitlines()[-1])
    del said["nonce"]
    return said
