"""The sandbox: an agent, and everything it starts, confined to its workspace by bubblewrap (`bwrap`).

`confine()` turns the agent's command line into `bwrap ... -- command args`; the child we hold is
bwrap, leader of its own group as any child. Inside, for `sandbox = "workspace"`:
- the file system is read-only, except the cwd (or the run's worktree), a private `/tmp` and the
  `writable` paths; `readonly` paths are seen read-only where they would be hidden (a worktree's main
  checkout under `/tmp`);
- credential folders and files (`CREDENTIALS`, the ssh agent's socket, plus `hidden`) are absent: an
  empty folder, or a file nobody may read; so are acp-tui's own folders (cache, state, config, logs),
  except the run's worktree;
- its own PID namespace (it sees only its own processes; it cannot read or signal us, the watchdog or
  another agent), dying with us (`--die-with-parent`: the namespace ends, daemons included), a new
  session (no TIOCSTI into our terminal), no capabilities (as root too);
- the network as `network` says (`process.network` chooses how): by default none at all, only a
  loopback of its own.

The environment is the one the agent would get without the sandbox (bwrap passes it whole): our
marks included, so ending a run and the watchdog still find every process inside. Mounts are laid in
path order, parents first, so that a later, deeper one wins (a hidden `~/.ssh` inside a writable
home; the worktree inside our hidden cache). Paths that do not exist are left out: bwrap would fail
on them, or leave an empty stub in a writable folder.

Never unconfined by surprise: no bwrap is a `SandboxError` (the run ends `error`, nothing runs);
bwrap failing (user namespaces off, an AppArmor profile) says so on its first stderr line, which
`failure_message` turns into the run's error.
"""

from __future__ import annotations

import contextlib
import errno
import os
import pwd
import shutil
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from acp_tui.process.launcher import SAYS as LAUNCHER_SAYS
from acp_tui.settings import paths
from acp_tui.settings.provider_config import SandboxMode

SANDBOX_MODES: tuple[SandboxMode, ...] = ("none", "workspace")

NOT_INSTALLED = (
    "sandbox: bubblewrap (bwrap) is not installed (Debian/Ubuntu: apt install bubblewrap), "
    'or set sandbox = "none"'
)
FAILED = 'sandbox: bubblewrap could not confine the agent (or set sandbox = "none")'

# Absent inside, under every home the agent could name (its HOME, ours, our user's).
CREDENTIALS = (
    "~/.ssh",
    "~/.gnupg",
    "~/.aws",
    "~/.azure",
    "~/.config/gcloud",
    "~/.kube",
    "~/.docker",
    "~/.netrc",
    "~/.git-credentials",
    "~/.password-store",
    "~/.config/gh",
)


class SandboxError(Exception):
    """The sandbox cannot be set up; the message is the run's one-line error."""


def find_bwrap() -> str:
    """bwrap's path on our PATH, else `SandboxError(NOT_INSTALLED)`."""
    found = shutil.which("bwrap", path=os.environ.get("PATH", os.defpath))
    if found is None:
        raise SandboxError(NOT_INSTALLED)
    return found


def failure_message(stderr: Iterable[str]) -> str | None:
    """The run's error when bwrap itself failed (its messages start `bwrap: `), or the launcher
    before it (`sandbox: `, said as it is), else None."""
    line = next((line.strip() for line in stderr if line.startswith(("bwrap: ", LAUNCHER_SAYS))), None)
    if line is None or line.startswith(LAUNCHER_SAYS):
        return line
    return f"{FAILED}: {line}"


@dataclass(frozen=True)
class NetworkWay:
    """How the agent gets its network (`process.network` chooses it): the launcher's argv that runs
    bwrap (none: bwrap runs as it is), and bwrap's options for it. The default: none at all."""

    launcher: tuple[str, ...] = ()
    options: tuple[str, ...] = ("--unshare-net",)


NO_NETWORK = NetworkWay()


def confine(
    command: str,
    args: Sequence[str],
    *,
    cwd: str,
    env: Mapping[str, str],
    writable: Sequence[str] = (),
    readonly: Sequence[str] = (),
    hidden: Sequence[str] = (),
    network: NetworkWay = NO_NETWORK,
) -> list[str]:
    """The argv that runs `command args` confined (see the module's doc). Raises `SandboxError`
    without bwrap, and the OSError a plain spawn would (missing cwd or command): resolved here,
    where the words for them are known, rather than by bwrap inside."""
    bwrap = find_bwrap()
    if not os.path.isdir(cwd):
        raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), cwd)
    program = _resolve(command, cwd, env)
    home = env.get("HOME") or os.path.expanduser("~")
    mounts = [
        _Mount("/", "ro", rank=0),
        _Mount("/dev", "dev", rank=-1),
        _Mount("/proc", "proc", rank=-1),
        _Mount("/tmp", "hide", rank=-1),
        _Mount(cwd, "rw"),
        # acp-tui's folders (settings.paths): a run's worktree in them is bound back inside.
        *(_Mount(str(folder), "hide") for folder in paths.own_folders()),
        *(_Mount(path, "hide") for path in _credentials(home, env)),
        *(_Mount(_expand(path, home, cwd), "rw") for path in writable),
        *(_Mount(_expand(path, home, cwd), "ro", rank=2) for path in readonly),
        *(_Mount(_expand(path, home, cwd), "hide", rank=3) for path in hidden),
    ]
    hiding = _last_over(os.path.abspath(program), mounts)
    if hiding is not None and hiding.kind == "hide":  # bwrap would say only "execvp: No such file"
        raise SandboxError(
            f"sandbox: the agent's program {program} is under {hiding.path}, which the sandbox hides "
            '(a private /tmp, credentials, acp-tui\'s folders): install it elsewhere, or set sandbox = "none"'
        )
    argv = [bwrap, *_mount_args(mounts)]
    argv += ["--unshare-pid", "--die-with-parent", "--new-session", "--cap-drop", "ALL"]
    argv += network.options
    return [*network.launcher, *argv, "--chdir", cwd, "--", program, *args]


def worktree_paths(root: Path, toplevel: Path, common_dir: Path, admin: Path) -> tuple[list[str], list[str]]:
    """What a sandboxed run in the worktree at `root` needs beyond its cwd, as (writable, readonly):
    the worktree, and of the main repository only what a commit there writes (its admin folder
    `worktrees/NAME`, `objects`, `refs`, `logs`); the main checkout read-only (never its `config` or
    `hooks`), and so are the admin folder's links back (`gitdir`, `commondir`)."""
    writable = [str(root), str(admin), *(str(common_dir / name) for name in ("objects", "refs", "logs"))]
    return writable, [str(toplevel), str(admin / "gitdir"), str(admin / "commondir")]


# The mounts ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Mount:
    path: str
    kind: Literal["ro", "rw", "hide", "dev", "proc"]
    # At the same depth: -1 the fixed ones, 0 ours and the credentials, 1 writable, 2 read-only,
    # 3 `hidden` (the preset's own word wins), so a writable path the preset names is writable.
    rank: int = 1

    @property
    def depth(self) -> int:
        return 0 if self.path == "/" else self.path.count("/")


def _mount_args(mounts: Sequence[_Mount]) -> list[str]:
    """bwrap's arguments, shallow to deep. A mount is left out when its path does not exist, or when
    it would change nothing (what covers it already gives the same)."""
    laid: list[_Mount] = []
    args: list[str] = []
    real = [_real(m) for m in mounts if _exists(m)]
    for mount in sorted(real, key=lambda m: (m.depth, m.rank)):
        cover = next((m for m in reversed(laid) if _within(mount.path, m.path)), None)
        if cover is not None and _effect(cover) == _effect(mount):
            continue
        laid.append(mount)
        path = mount.path
        if mount.kind == "hide":
            args += ["--tmpfs", path] if os.path.isdir(path) else ["--ro-bind", os.devnull, path]
        else:
            args += {
                "ro": ["--ro-bind", path, path],
                "rw": ["--bind", path, path],
                "dev": ["--dev", path],
                "proc": ["--proc", path],
            }[mount.kind]
    return args


def _last_over(path: str, mounts: Sequence[_Mount]) -> _Mount | None:
    """The mount the agent finds `path` through: the last laid over it (see `_mount_args`)."""
    real = sorted((_real(m) for m in mounts if _exists(m)), key=lambda m: (m.depth, m.rank))
    return next((m for m in reversed(real) if _within(path, m.path)), None)


def _effect(mount: _Mount) -> str:
    return "hide" if mount.kind == "hide" else mount.kind


def _exists(mount: _Mount) -> bool:
    return mount.kind in ("dev", "proc") or os.path.exists(mount.path)


def _real(mount: _Mount) -> _Mount:
    """Mounted where it really is: a link's target is what the agent would reach through it."""
    if mount.kind in ("dev", "proc"):
        return mount
    return _Mount(os.path.realpath(mount.path), mount.kind, mount.rank)


def _within(path: str, folder: str) -> bool:
    return folder == "/" or path == folder or path.startswith(folder.rstrip("/") + "/")


def _expand(path: str, home: str, cwd: str) -> str:
    """`~` is the agent's home; a relative path is relative to its cwd."""
    if path == "~" or path.startswith("~/"):
        path = home + path[1:]
    return os.path.normpath(os.path.join(cwd, path))


def _credentials(home: str, env: Mapping[str, str]) -> list[str]:
    homes = dict.fromkeys([home, os.path.expanduser("~")])
    with contextlib.suppress(KeyError):
        homes[pwd.getpwuid(os.getuid()).pw_dir] = None
    paths = [_expand(path, folder, "/") for folder in homes for path in CREDENTIALS]
    if env.get("SSH_AUTH_SOCK"):  # the ssh agent answers with the keys it holds
        paths.append(env["SSH_AUTH_SOCK"])
    return paths


def _resolve(command: str, cwd: str, env: Mapping[str, str]) -> str:
    """The program as a plain spawn would find it (PATH of the agent's environment; a relative path
    from its cwd), or the OSError that spawn would raise."""
    if "/" in command:
        found: str | None = os.path.join(cwd, command)
        if not os.path.isfile(found or ""):
            found = None
    else:
        found = shutil.which(command, mode=os.F_OK, path=env.get("PATH", os.defpath))
    if found is None:
        raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), command)
    if not os.access(found, os.X_OK):
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), command)
    return found
