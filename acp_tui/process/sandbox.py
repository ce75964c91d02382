"""The sandbox: an agent, and everything it starts, confined to its workspace by bubblewrap (`bwrap`).

`confine()` turns the agent's command line into `bwrap ... -- command args` (a `Confinement`: that
argv, and what the run holds until its processes are gone); the child we hold is bwrap, leader of
its own group as any child. Inside, for `sandbox = "workspace"`, the agent sees, deny by default:
- the system, read-only (`SYSTEM`: /usr, /etc, /opt, /sys and the /bin, /lib... leading into them);
  nothing of /home, /root, /run, /var, /srv, /mnt, /media: no socket of the host (a session's
  D-Bus, an ssh or gpg agent, a keyring, docker, X11) is there to connect to;
- its cwd, writable (or the run's worktree), and the checkout the cwd lies in, read-only;
- an empty, read-only home, a private /tmp and a private $XDG_RUNTIME_DIR;
- what its preset opens: `readable` (read-only), `writable`, `sockets` (each a unix socket);
- its own program and its interpreter's installation, read-only, wherever they are (see
  `programs.installation`).
Within what it may see, credential folders and files (`CREDENTIALS`, the ssh agent's socket, plus
`hidden`) are absent, an empty folder or a file nobody may read; so are acp-tui's own folders
(cache, state, config, logs), except the run's worktree. Its git works on a git directory of its
own, in a plain checkout (`_guard_checkout`) as in a worktree (`git_dirs`): the user's `.git` is
never its to write, nor to plant what the user's git obeys.
Processes: its own PID namespace (it sees only its own processes; it cannot read or signal us, the
watchdog or another agent), dying with us (`--die-with-parent`: the namespace ends, daemons
included), a new session (no TIOCSTI into our terminal), no capabilities (as root too). What the
kernel shares stays ours: /proc/sys read-only (`PROC_SETTINGS`), keyrings of its own (a user
namespace, a new session keyring: `_InChild`). The network as `network` says (`process.network`
chooses how): by default none at all, only a loopback of its own.

The environment is the one the agent would get without the sandbox (bwrap passes it whole): our
marks included, so ending a run and the watchdog still find every process inside. Mounts are laid in
path order, parents first, so that a later, deeper one wins (a hidden `~/.ssh` inside a writable
home; the worktree inside our hidden cache), each where its path really leads, with the links on
the way to it made again inside. Paths that do not exist are left out: bwrap would fail on them, or
leave an empty stub in a writable folder.

Never unconfined by surprise: no bwrap is a `SandboxError` (the run ends `error`, nothing runs);
bwrap failing (user namespaces off, an AppArmor profile) says so on its first stderr line, which
`failure_message` turns into the run's error.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import os
import pwd
import shutil
import stat
import tempfile
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from acp_tui.core.files import restore_owner_bits
from acp_tui.process.launcher import SAYS as LAUNCHER_SAYS
from acp_tui.process.launcher import Refused, SessionKeyring
from acp_tui.process.programs import installation, resolve
from acp_tui.settings import paths
from acp_tui.settings.provider_config import SandboxMode

SANDBOX_MODES: tuple[SandboxMode, ...] = ("none", "workspace")

NOT_INSTALLED = (
    "sandbox: bubblewrap (bwrap) is not installed (Debian/Ubuntu: apt install bubblewrap), "
    'or set sandbox = "none"'
)
FAILED = 'sandbox: bubblewrap could not confine the agent (or set sandbox = "none")'

# What the agent sees of the system, read-only (a link among them is made again, leading where
# it leads: /bin -> usr/bin). /etc/resolv.conf may lead out of them (systemd-resolved's, in /run).
SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt", "/sys", "/nix")
SYSTEM_FILES = ("/etc/resolv.conf",)
# Of its own /proc, what is the host's to set, read-only: bwrap covers these only where it finds
# them writable, and root finds /proc/sys itself unwritable while every setting in it is root's
# to write (kernel.core_pattern runs a program as root of the host at the next crash).
PROC_SETTINGS = ("/proc/sys", "/proc/sysrq-trigger", "/proc/irq", "/proc/bus")

# Absent inside, under every home the agent could name (its HOME, ours, our user's), wherever a
# preset opens the folder holding them: deny by default leaves the home empty, and this holds even
# where a preset opens all of it. `~/.config/` and `~/.local/share/` follow XDG_CONFIG_HOME and
# XDG_DATA_HOME when they are set.
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
    "~/.config/git/credentials",
    "~/.password-store",
    "~/.config/gh",
    "~/.npmrc",
    "~/.pypirc",
    "~/.cargo/credentials",
    "~/.cargo/credentials.toml",
    "~/.vault-token",
    "~/.local/share/keyrings",
)

# A plain checkout's git directory, as the agent's own is made from it: the files copied (refs and
# HEAD, the index, config, what info/ holds, a shallow clone's boundary), and the folders of the
# user's shown inside it read-only (the objects as BORROWED, which its own borrow; the submodules').
GIT_COPIED = ("HEAD", "config", "index", "packed-refs", "shallow", "refs", "reftable", "info")
BORROWED = "borrowed"

Kind = Literal["ro", "rw", "show", "hide", "empty", "tmp", "link", "dev", "proc"]


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
    bwrap (none: bwrap runs as it is), bwrap's options for it, and what the child does for it
    between fork and exec (Landlock's scope). The default: none at all."""

    launcher: tuple[str, ...] = ()
    options: tuple[str, ...] = ("--unshare-net",)
    preexec: Callable[[], None] | None = None


NO_NETWORK = NetworkWay()


@dataclass
class Confinement:
    """The argv that runs the agent confined, what its spawn runs in the child before exec
    (`preexec`), and the git directories made for it (`own_git_dirs`): `close()` deletes them once
    the run's processes are gone (idempotent)."""

    argv: list[str]
    preexec: Callable[[], None] | None = None
    own_git_dirs: list[str] = field(default_factory=list)

    def close(self) -> None:
        made, self.own_git_dirs = self.own_git_dirs, []
        for folder in made:
            restore_owner_bits(folder)  # the agent's to chmod meanwhile
            shutil.rmtree(folder, ignore_errors=True)  # fd-based: no link inside is followed


def confine(
    command: str,
    args: Sequence[str],
    *,
    cwd: str,
    env: Mapping[str, str],
    writable: Sequence[str] = (),
    readable: Sequence[str] = (),
    hidden: Sequence[str] = (),
    sockets: Sequence[str] = (),
    git_dirs: Mapping[str, str] | None = None,
    network: NetworkWay = NO_NETWORK,
) -> Confinement:
    """The confinement that runs `command args` (see the module's doc). `git_dirs`: a git directory
    of the agent's own (value, writable), shown where git looks for the repository's (key). Raises
    `SandboxError` without bwrap, and the OSError a plain spawn would (missing cwd or command):
    resolved here, where the words for them are known, rather than by bwrap inside."""
    bwrap = find_bwrap()
    if not os.path.isdir(cwd):
        raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), cwd)
    cwd = os.path.abspath(cwd)
    program = resolve(command, cwd, env)
    home = env.get("HOME") or os.path.expanduser("~")
    homes = _homes(home)
    held = next(  # a preset's own HOME (its env's) is the agent's to write; ours are not
        (folder for folder in _our_homes() if _within(os.path.realpath(folder), os.path.realpath(cwd))), None
    )
    if held is not None:  # its cwd is writable: the home's start-up files would be its to write
        raise SandboxError(
            f"sandbox: the agent's cwd {cwd} holds a home ({held}), whose files your shell and git run "
            "(~/.bashrc, ~/.gitconfig): give it a folder of its work"
        )
    opened = {key: [_expand(path, home, cwd) for path in named if path] for key, named in (
        ("sandbox_writable", writable), ("sandbox_readable", readable), ("sandbox_sockets", sockets)
    )}  # fmt: skip
    _refuse_links_out(opened, [cwd, *opened["sandbox_writable"], *(git_dirs or {}).values()])
    mounts = [
        _Mount("/dev", "dev", rank=-1),
        _Mount("/proc", "proc", rank=-1),
        *(_Mount(path, "ro", rank=-1, pinned=True) for path in PROC_SETTINGS),
        _Mount("/tmp", "tmp", rank=-1),
        *(_Mount(path, "tmp", rank=-1) for path in [env.get("XDG_RUNTIME_DIR", "")] if os.path.isabs(path)),
        *([_Mount(home, "empty", rank=0)] if home != "/" else []),
        _Mount(cwd, "rw"),
        # acp-tui's folders (settings.paths): a run's worktree in them is bound back inside.
        *(_Mount(str(folder), "hide", rank=0) for folder in paths.own_folders()),
        *(_Mount(path, "hide", rank=0) for path in _credentials(homes, env)),
        *(_Mount(path, "rw") for path in opened["sandbox_writable"]),
        *(_Mount(path, "ro", rank=2) for path in opened["sandbox_readable"]),
        *(_Mount(_socket(path), "ro", rank=2) for path in opened["sandbox_sockets"]),
        *(_Mount(_expand(path, home, cwd), "hide", rank=3) for path in hidden),
        *(_Mount(inside, "rw", source=own, pinned=True) for inside, own in (git_dirs or {}).items()),
    ]
    confinement = Confinement([])
    try:
        mounts += _guard_checkout(cwd, homes, confinement)
        # What was hidden once may be gone (a lock file useradd held): bwrap could not lay it again.
        system = [mount for mount in _system() if mount.kind != "hide" or os.path.lexists(mount.path)]
        real = [*system, *_resolved(mounts)]
        real += _resolved(_installation_shown(program, args, cwd, env, real))
        argv = [bwrap, *_mount_args(real)]
    except BaseException:
        confinement.close()
        raise
    # A user namespace of its own, as root too: keyrings are per user namespace (root's own would be
    # its to read); the launcher, where one runs, joins a session keyring of its own.
    argv += ["--unshare-user", "--unshare-pid", "--die-with-parent", "--new-session", "--cap-drop", "ALL"]
    argv += network.options
    confinement.argv = [*network.launcher, *argv, "--chdir", cwd, "--", program, *args]
    if not network.launcher:
        confinement.preexec = _InChild(_session_keyring(), network.preexec)
    return confinement


@dataclass(frozen=True)
class _InChild:
    """What the child does between fork and exec, where no launcher does it: a session keyring of
    its own, then what its network asks. A failure says so on stderr (the run's error, see
    `failure_message`) and ends the child: never less confined instead."""

    keyring: SessionKeyring
    network: Callable[[], None] | None

    def __call__(self) -> None:
        if not self.keyring.join():
            os.write(2, f"{LAUNCHER_SAYS}cannot give the agent a keyring of its own\n".encode())
            os._exit(1)
        if self.network is not None:
            self.network()


def _session_keyring() -> SessionKeyring:
    try:
        return SessionKeyring()
    except Refused as exc:
        raise SandboxError(f"{LAUNCHER_SAYS}{exc}") from None


def worktree_view(
    root: Path, objects: Path, admin: Path, own_git_dir: Path
) -> tuple[list[str], list[str], dict[str, str]]:
    """What a sandboxed run in the worktree at `root` needs beyond its cwd, as (writable, readable,
    git_dirs): the worktree; the repository's objects, read-only, and the worktree's `.git` file (a
    mount point: never replaced); and, where git looks for the worktree's entry in the repository
    (`admin`), a git directory of the agent's own (`own_git_dir`: its HEAD, index, refs and new
    objects, borrowing the repository's), so nothing of the repository is the agent's to write (its
    objects, refs, logs, config, hooks, other worktrees) and nothing else of it is in sight."""
    return [str(root)], [str(root / ".git"), str(objects)], {str(admin): str(own_git_dir)}


# A checkout's .git ------------------------------------------------------------------------------


def _guard_checkout(cwd: str, homes: Sequence[str], confinement: Confinement) -> list[_Mount]:
    """The checkout holding the cwd (a `.git` folder in it or above it, never at or above a home):
    read-only (but the cwd), its `.git` a git directory of the agent's own (`_own_git_dir`), a
    mount point (it cannot be renamed or replaced), with the repository's objects and submodules'
    git directories read-only in it: the user's `.git` is never written, nor anything it obeys
    planted (config, hooks, an index hiding a change, a gitlink, an unfinished rebase). A `.git`
    file in the cwd is pinned read-only and not followed; a link there is refused (no mount point
    can pin a link)."""
    here = os.path.realpath(cwd)
    top = _checkout(here, homes)
    if top is None:
        return []
    git_dir = os.path.join(top, ".git")
    kind = stat.S_IFMT(os.lstat(git_dir).st_mode)
    if kind != stat.S_IFDIR and top != here:  # out of its reach, and not followed
        return []
    if kind == stat.S_IFLNK:
        raise SandboxError(f"sandbox: {git_dir} is a link, which a confined agent could replace")
    if kind != stat.S_IFDIR:
        return [_Mount(git_dir, "ro", rank=2, pinned=True)]
    objects, modules = (os.path.join(git_dir, name) for name in ("objects", "modules"))
    if not _is_folder(objects):  # shown read-only wherever it led
        raise SandboxError(f"sandbox: {objects} is no folder of the repository's own (a link?)")
    own = _own_git_dir(git_dir)
    confinement.own_git_dirs.append(own)
    return [
        _Mount(git_dir, "rw", rank=2, source=own, pinned=True),
        _Mount(os.path.join(git_dir, BORROWED), "ro", source=objects, pinned=True),
        *([_Mount(modules, "ro", pinned=True)] if _is_folder(modules) else []),
        *([_Mount(top, "show", rank=-1)] if top != here else []),
    ]


def _is_folder(path: str) -> bool:
    with contextlib.suppress(OSError):
        return stat.S_ISDIR(os.lstat(path).st_mode)
    return False


def _checkout(cwd: str, homes: Sequence[str]) -> str | None:
    for folder in (cwd, *map(str, Path(cwd).parents)):
        if os.path.lexists(os.path.join(folder, ".git")):
            above_a_home = any(_within(home, folder) for home in homes)
            return None if folder != cwd and above_a_home else folder
    return None


def _own_git_dir(git_dir: str) -> str:
    """A git directory of the agent's own, in a private temporary folder, made from the user's
    `git_dir`: a copy of its refs, HEAD, index and config (`GIT_COPIED`), new objects in its own
    store, the user's borrowed (`objects/info/alternates` names BORROWED, where the sandbox shows
    them read-only). Only regular files are copied, through no link: the user's `.git` may hold
    what an agent of another day planted."""
    own = tempfile.mkdtemp(prefix="acp-tui-git-")
    try:
        with _opened(git_dir, os.O_DIRECTORY) as source:
            for name in GIT_COPIED:
                _copy_regular(name, source, own)
        for folder in ("objects/info", BORROWED, "modules"):
            os.makedirs(os.path.join(own, folder), exist_ok=True)
        with open(os.path.join(own, "objects", "info", "alternates"), "x") as alternates:
            alternates.write(f"../{BORROWED}\n")  # relative to the objects folder
    except (OSError, RecursionError) as exc:  # a folder nested past Python's depth: no git's
        shutil.rmtree(own, ignore_errors=True)
        raise SandboxError(f"sandbox: could not give the agent a git directory of its own: {exc}") from None
    return own


def _copy_regular(name: str, folder: int, into: str) -> None:
    """`name` of the open `folder` into the folder `into`: a regular file, or a folder's regular
    files at any depth; anything else (a link, a FIFO) left out."""
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=folder)
    except OSError as exc:
        if exc.errno in (errno.ENOENT, errno.ELOOP, errno.ENXIO):
            return  # absent, a link, a socket: not copied
        raise
    try:
        kind = stat.S_IFMT(os.fstat(fd).st_mode)
        if kind == stat.S_IFREG:
            with open(os.path.join(into, name), "xb") as copy:
                while chunk := os.read(fd, 1 << 20):
                    copy.write(chunk)
        elif kind == stat.S_IFDIR:
            os.mkdir(os.path.join(into, name))
            for entry in os.listdir(fd):
                _copy_regular(entry, fd, os.path.join(into, name))
    finally:
        os.close(fd)


@contextlib.contextmanager
def _opened(path: str, flags: int, dir_fd: int | None = None) -> Iterator[int]:
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | flags, dir_fd=dir_fd)
    try:
        yield fd
    finally:
        os.close(fd)


# The agent's own program ------------------------------------------------------------------------


def _installation_shown(
    program: str, args: Sequence[str], cwd: str, env: Mapping[str, str], mounts: Sequence[_Mount]
) -> list[_Mount]:
    """The program's installation (`programs.installation`, which follows nothing the agent may
    write: what `mounts`, resolved, makes writable), shown read-only where nothing else shows it;
    refused in one line when the sandbox hides any of it (bwrap would say only "execvp: No such
    file")."""
    shown = []
    writable = [mount.path for mount in mounts if mount.kind == "rw"]
    for path in installation(program, args, cwd=cwd, env=env, writable=writable):
        hiding = _last_over(os.path.realpath(path), mounts)
        if hiding is not None and hiding.kind == "hide":
            raise SandboxError(
                f"sandbox: the agent's program needs {path}, which the sandbox hides (credentials, "
                'acp-tui\'s folders, sandbox_hidden): install it elsewhere, or set sandbox = "none"'
            )
        shown.append(_Mount(path, "show", rank=-1))
    return shown


# The mounts ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Mount:
    """What the agent finds at `path`: "ro"/"rw" the host's (or `source`'s) files, "show" the host's
    read-only unless already in sight, "hide" nothing (an empty folder, a file nobody may read),
    "empty" an empty read-only folder, "tmp" a private writable one, "link" a link to `source`."""

    path: str
    kind: Kind
    # At one path: -2 a link, -1 the system and what is only shown, 0 ours, the credentials and the
    # empty home, 1 writable, 2 read-only (readable, sockets), 3 `hidden` and a `.git`'s guarded
    # names: the preset's own word wins over ours, its narrower word over its wider one.
    rank: int = 1
    source: str = ""  # what is bound there when not `path` itself; a link's target
    pinned: bool = False  # laid even where it changes nothing: a mount point cannot be renamed

    @property
    def depth(self) -> int:
        return 0 if self.path == "/" else self.path.count("/")

    def shows(self, path: str) -> str | None:
        """The host's path the agent reaches at `path` (within this mount), None for nothing of it."""
        if self.kind not in ("ro", "rw", "show"):
            return None
        return (self.source or self.path) + path[len(self.path) :] if self.path != "/" else path


def _resolved(mounts: Sequence[_Mount]) -> list[_Mount]:
    """Each mount whose path exists, where its path really leads (what the agent reaches through a
    link is the link's target), and the links on the way made again inside, so that the agent
    finds a path as it was named (its cwd, its HOME, its program, /bin)."""
    found = []
    links: dict[str, str] = {}
    for mount in filter(_exists, mounts):
        if mount.kind in ("dev", "proc"):
            found.append(mount)
            continue
        source = os.path.realpath(mount.source) if mount.source else ""
        real = _Mount(os.path.realpath(mount.path), mount.kind, mount.rank, source, mount.pinned)
        found.append(real)
        if real.path != mount.path and mount.kind != "hide":
            links.update(_links_to(mount.path, hops=0))
    return found + [_Mount(link, "link", rank=-2, source=target) for link, target in links.items()]


def _mount_args(mounts: Sequence[_Mount]) -> list[str]:
    """bwrap's arguments for resolved mounts, shallow to deep. A mount is left out when it would
    change nothing (what covers it already gives the same). Then what is read-only is made so: the
    root, and the folders emptied over the host's (writable tmpfs until then: deeper mount points
    are made in them)."""
    laid: list[_Mount] = []
    args: list[str] = []
    read_only: list[str] = []
    for mount in sorted(mounts, key=lambda m: (m.depth, m.rank)):
        cover = next((m for m in reversed(laid) if _within(mount.path, m.path)), None)
        shown = cover.shows(mount.path) if cover is not None else None
        if mount in laid or (not mount.pinned and _changes_nothing(mount, cover, shown)):
            continue  # the same twice (a link on the way to the system and to the program)
        if mount.kind in ("empty", "tmp") and shown is not None and not os.path.isdir(mount.path):
            continue  # its folder would be made among the host's, in sight
        laid.append(mount)
        path, kind = mount.path, mount.kind
        if kind == "hide" and not os.path.isdir(path):
            args += ["--ro-bind", os.devnull, path]
        elif kind in ("hide", "empty") and (kind == "hide" or shown is not None):
            args += ["--tmpfs", path]
            read_only.append(path)
        else:
            args += {
                "ro": ["--ro-bind", mount.source or path, path],
                "show": ["--ro-bind", path, path],
                "rw": ["--bind", mount.source or path, path],
                "empty": ["--dir", path],
                "tmp": ["--tmpfs", path],
                "link": ["--symlink", mount.source, path],
                "dev": ["--dev", path],
                "proc": ["--proc", path],
            }[kind]
    for path in [*read_only, "/"]:
        args += ["--remount-ro", path]
    return args


def _changes_nothing(mount: _Mount, cover: _Mount | None, shown: str | None) -> bool:
    """Whether `mount` would show what `cover` (laid last over its path) shows there already."""
    if mount.kind in ("empty", "tmp", "dev", "proc"):
        return False
    if mount.kind == "hide":
        return shown is None  # nothing of the host is there to hide
    if mount.kind in ("show", "link"):
        return shown is not None  # in sight already, as the host has it
    access = "ro" if cover is None or cover.kind == "show" else cover.kind
    return shown == (mount.source or mount.path) and access == mount.kind


def _last_over(path: str, mounts: Sequence[_Mount]) -> _Mount | None:
    """The resolved mount the agent finds `path` through: the last laid over it (see `_mount_args`)."""
    over = [(m.depth, m.rank, i, m) for i, m in enumerate(mounts) if _within(path, m.path)]
    return max(over, key=lambda found: found[:3])[3] if over else None


def _exists(mount: _Mount) -> bool:
    return mount.kind in ("empty", "tmp", "dev", "proc") or os.path.exists(mount.source or mount.path)


def _links_to(path: str, hops: int) -> list[tuple[str, str]]:
    """The links met on the way to `path` (where each really is, what it says), and on the way to
    what they say."""
    found = []
    for step in [*reversed(Path(path).parents), Path(path)][1:]:
        if step.is_symlink() and hops < 40:
            target = os.readlink(step)
            found.append((os.path.join(os.path.realpath(step.parent), step.name), target))
            found += _links_to(os.path.join(step.parent, target), hops + 1)
    return found


def _within(path: str, folder: str) -> bool:
    return folder == "/" or path == folder or path.startswith(folder.rstrip("/") + "/")


def _expand(path: str, home: str, cwd: str) -> str:
    """`~` is the agent's home; a relative path is relative to its cwd."""
    if path == "~" or path.startswith("~/"):
        path = home + path[1:]
    return os.path.normpath(os.path.join(cwd, path))


def _refuse_links_out(opened: Mapping[str, Sequence[str]], writable: Sequence[str]) -> None:
    """A path a preset opens, refused in one line when a link on the way to it, in a folder the
    agent writes (`writable`), leads out of that folder: the agent could have made that link, to
    have its next run shown what it names."""
    folders = [os.path.realpath(folder) for folder in writable]
    for key, named in opened.items():
        for path in named:
            if (left := _left_through_a_link(path, folders)) is not None:
                raise SandboxError(
                    f"sandbox: {key} names {path}, which leads out of {left} (a link there, which the "
                    "agent could have made)"
                )


def _left_through_a_link(path: str, folders: Sequence[str]) -> str | None:
    """The folder of `folders` (real paths) a link on the way to `path` lies in and leads out of."""
    here = "/"
    for part in Path(path).parts[1:]:
        step = os.path.join(here, part)
        if not os.path.islink(step):
            here = step
            continue
        real = os.path.realpath(step)
        inside = next((folder for folder in folders if _within(here, folder)), None)
        if inside is not None and not _within(real, inside):
            return inside
        here = real
    return None


def _socket(path: str) -> str:
    """A path of `sockets`: a unix socket, else a one-line refusal (it would open a folder or file)."""
    with contextlib.suppress(FileNotFoundError):
        if not stat.S_ISSOCK(os.stat(path).st_mode):
            raise SandboxError(f"sandbox: sandbox_sockets names {path}, which is not a unix socket")
    return path


@functools.cache
def _system() -> tuple[_Mount, ...]:
    """What the agent sees of the system (resolved, once: it does not move while we run), less, for
    an agent run as root, what only root may read there."""
    root_only = _root_only() if os.geteuid() == 0 else ()
    shown = [_Mount(path, "ro", rank=-1) for path in (*SYSTEM, *SYSTEM_FILES)]
    return tuple(_resolved([*shown, *(_Mount(path, "hide", rank=0) for path in root_only)]))


def _root_only() -> tuple[str, ...]:
    """What only root may read in the system folders the agent sees (the shadow passwords, ssh's
    host keys, ssl's private keys; in /etc and /opt, two levels deep): hidden from an agent run as
    root, which reads what root owns, capabilities or not."""
    found = []
    for top in SYSTEM:
        for entry in _entries(top):
            if not _others_read(entry):
                found.append(entry.path)
            elif top in ("/etc", "/opt") and entry.is_dir(follow_symlinks=False):
                found += [inner.path for inner in _entries(entry.path) if not _others_read(inner)]
    return tuple(found)


def _entries(folder: str) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(folder) as entries:
            return list(entries)
    except OSError:
        return []


def _others_read(entry: os.DirEntry[str]) -> bool:
    try:
        return bool(entry.stat(follow_symlinks=False).st_mode & stat.S_IROTH)
    except OSError:
        return True  # gone: nothing to hide


def _our_homes() -> list[str]:
    """Our HOME and our user's."""
    homes = dict.fromkeys([os.path.expanduser("~")])
    with contextlib.suppress(KeyError):
        homes[pwd.getpwuid(os.getuid()).pw_dir] = None
    return list(homes)


def _homes(home: str) -> list[str]:
    """Every home the agent could name: its HOME, ours, our user's."""
    return list(dict.fromkeys([home, *_our_homes()]))


def _credentials(homes: Sequence[str], env: Mapping[str, str]) -> list[str]:
    found = [_expand(path, home, "/") for home in homes for path in CREDENTIALS]
    for variable, prefix in (("XDG_CONFIG_HOME", "~/.config/"), ("XDG_DATA_HOME", "~/.local/share/")):
        if os.path.isabs(folder := env.get(variable, "")):
            under = [path.removeprefix(prefix) for path in CREDENTIALS if path.startswith(prefix)]
            found += [os.path.join(folder, path) for path in under]
    if env.get("SSH_AUTH_SOCK"):  # the ssh agent answers with the keys it holds
        found.append(env["SSH_AUTH_SOCK"])
    return found
