"""A real container for the remote tests: Podman (Debian's), rootful, running an image built here
from a directory (no registry): a scratch root holding this machine's python3 (its binary, the
libraries it links and its standard library) and git (for worktrees over there), and nothing else,
`podman import`ed from a tar.

Without root or podman the tests skip, unless ACP_TUI_REQUIRE_PODMAN is set (CI), where they fail
instead. The container and the image are removed by name at the end, whatever happened. Its
processes are those of its PID namespace (the host sees them all); they are awaited on their pidfds
(`support.await_gone`), never timed.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import shutil
import subprocess
import tarfile
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from acp_tui.process.shim import SHIM_LOG
from tests.remote.support import AGENTS, FAR_CREDENTIAL, last_end

PYTHON = "/usr/bin/python3"  # the system's: its standard library is a folder of its own
GIT = "/usr/bin/git"  # what worktrees use of git is built into it
LEFT_OUT = {"test", "idlelib", "tkinter", "turtledemo", "ensurepip", "lib2to3", "__pycache__"}
# crun cannot run beside cgroup v1 controllers with v2 in hybrid mode (this machine's): runc can.
RUNTIME = ("--runtime", "runc") if shutil.which("runc") else ()
# Podman's default limits are above what a root without CAP_SYS_RESOURCE (in a VM's container)
# may set; lower ones always may be.
LIMITS = ("--ulimit", "nofile=4096:4096", "--ulimit", "nproc=4096:4096")


def require_podman() -> None:
    missing = None
    if os.geteuid() != 0:
        missing = "the container tests run rootful Podman: they need root"
    elif shutil.which("podman") is None:
        missing = "podman is needed (apt install podman runc)"
    if missing is None:
        return
    if os.environ.get("ACP_TUI_REQUIRE_PODMAN"):
        pytest.fail(missing)
    pytest.skip(missing)


def podman(*args: str) -> str:
    done = subprocess.run(["podman", *args], capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"podman {' '.join(args[:2])}: {done.stderr.strip()}")
    return done.stdout.strip()


@contextlib.contextmanager
def python_image() -> Iterator[str]:
    """An image of python3 and git alone, imported from a directory built here; removed at the end."""
    require_podman()
    name = f"localhost/acp-tui-test-python:{secrets.token_hex(4)}"
    with tempfile.TemporaryDirectory(prefix="acp-tui-rootfs-") as folder:
        root = Path(folder) / "root"
        _lay_root(root)
        archive = Path(folder) / "root.tar"
        with tarfile.open(archive, "w") as tar:
            tar.add(root, arcname=".")
        podman("import", str(archive), name)
    try:
        yield name
    finally:
        subprocess.run(["podman", "rmi", "--force", name], capture_output=True)


def _lay_root(root: Path) -> None:
    real = os.path.realpath(PYTHON)
    asked = [PYTHON, "-c", "import sysconfig; print(sysconfig.get_paths()['stdlib'])"]
    stdlib = subprocess.run(asked, capture_output=True, text=True, check=True).stdout.strip()
    files = {real, GIT}
    for folder, folders, names in os.walk(stdlib):
        folders[:] = [f for f in folders if f not in LEFT_OUT and not f.startswith("config-")]
        files.update(os.path.join(folder, name) for name in names)
    libraries = set()
    for program in [real, GIT, *(f for f in files if f.endswith(".so"))]:
        linked = subprocess.run(["ldd", program], capture_output=True, text=True).stdout
        libraries.update(re.findall(r"(/\S+) \(0x", linked))
    for path in sorted(files | libraries):
        _copy(path, root)
    (root / "usr/bin/python3").symlink_to(os.path.basename(real))
    for folder in ("tmp", "proc", "dev", "sys", "root", "etc"):
        (root / folder).mkdir(exist_ok=True)
    (root / "tmp").chmod(0o1777)
    (root / "etc/passwd").write_text("root:x:0:0:root:/root:/bin/sh\n")
    (root / "etc/group").write_text("root:x:0:\n")


def _copy(path: str, root: Path) -> None:
    """`path` into `root` at the same place, through its links (each made again there)."""
    target = root / path.lstrip("/")
    if os.path.lexists(target):
        return
    parent = os.path.dirname(path)
    if parent != "/" and os.path.islink(parent):  # /lib -> usr/lib: the link, then where it leads
        _copy(parent, root)
        return _copy(os.path.join(os.path.realpath(parent), os.path.basename(path)), root)
    target.parent.mkdir(parents=True, exist_ok=True)
    if os.path.islink(path):
        link = os.readlink(path)
        target.symlink_to(link)
        _copy(os.path.normpath(os.path.join(parent, link)), root)
    elif os.path.isdir(path):
        target.mkdir(exist_ok=True)
    else:
        shutil.copy2(path, target)
    return None


@dataclass
class Container:
    name: str
    init: int  # its first process, as the host numbers it
    folder: Path  # here; /far in the container: the agents and the shim's log

    @property
    def url(self) -> str:
        return f"podman://{self.name}"

    @property
    def where(self) -> str:
        return f"podman:{self.name}"

    def processes(self) -> list[int]:
        """Its live processes but its first (the host sees them all): what our shim runs in it."""
        namespace = os.readlink(f"/proc/{self.init}/ns/pid")
        found = []
        for entry in os.scandir("/proc"):
            if not entry.name.isdigit() or int(entry.name) == self.init:
                continue
            with contextlib.suppress(OSError):
                stat = Path(f"/proc/{entry.name}/stat").read_bytes()
                alive = stat[stat.rfind(b")") + 2 :][:1] not in (b"Z", b"X")
                if alive and os.readlink(f"/proc/{entry.name}/ns/pid") == namespace:
                    found.append(int(entry.name))
        return found

    def last_end(self) -> dict[str, Any]:
        return last_end(self.folder / "shim.log")


@contextlib.contextmanager
def container(image: str) -> Iterator[Container]:
    """A container of `image`, up until the end, its folder (/far) holding the agents."""
    name = f"acp-tui-test-{secrets.token_hex(4)}"
    with tempfile.TemporaryDirectory(prefix="acp-tui-container-") as folder:
        for agent in AGENTS:
            shutil.copyfile(agent, Path(folder) / Path(agent).name)
        try:
            podman(
                *RUNTIME, "run", "--detach", "--name", name, *LIMITS, "--volume", f"{folder}:/far",
                "--env", f"{FAR_CREDENTIAL[0]}={FAR_CREDENTIAL[1]}", "--env", f"{SHIM_LOG}=/far/shim.log",
                image, "python3", "-c", "import signal; signal.pause()",
            )  # fmt: skip
            init = int(podman("inspect", "--format", "{{.State.Pid}}", name))
            yield Container(name, init, Path(folder))
        finally:
            subprocess.run(["podman", "rm", "--force", "--time", "0", name], capture_output=True)
