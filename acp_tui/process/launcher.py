"""The sandbox's launcher, for an agent with a network namespace of its own: what its process needs
between our spawn and bwrap, which no bwrap option gives. The standard library alone: it runs as a
script, outside the sandbox,

    python -I -S launcher.py [--listen PORT --hand-to FD] [--stack NAME] -- bwrap ...

and ends by exec'ing bwrap: the child we hold is bwrap as ever (the same pid, group and pipes), and
it keeps no descriptor of its own for the agent to inherit. Before that, it joins a session keyring
of its own (see `SessionKeyring`: what the child does where no launcher runs), and makes a network
namespace of the agent's own, its loopback up, with a user namespace of its own (our ids mapped to
themselves: it lets us make one unprivileged, and a stack attach to it); then
- `--listen PORT --hand-to FD`: a listener on its 127.0.0.1:PORT, sent over the unix socket FD to
  the run, whose proxy accepts on it: inside, the proxy is there and nothing else is;
- `--stack pasta|slirp4netns`: a user-mode network stack gives it outbound access. bwrap starts
  once the stack says it is ready; the stack dies with bwrap (its parent-death signal) and is of
  the run's process group, as bwrap is. Inside, /etc/resolv.conf names the stack's own DNS
  forwarder (the host's resolver, often 127.0.0.53, is no address in a namespace of its own).
A failure says so on stderr in one line starting with `sandbox: ` and exits 1: nothing runs.
"""

from __future__ import annotations

import ctypes
import fcntl
import os
import signal
import socket
import struct
import sys
from collections.abc import Sequence

SAYS = "sandbox: "  # how a launcher's failure begins (the run's error, as it is)
STACKS = ("pasta", "slirp4netns")  # in order of preference
DNS = {"pasta": "169.254.1.1", "slirp4netns": "10.0.2.3"}  # where each forwards the agent's queries
_PR_SET_PDEATHSIG = 1
_CLONE_NEWUSER, _CLONE_NEWNET = 0x10000000, 0x40000000
_SIOCGIFFLAGS, _SIOCSIFFLAGS, _IFF_UP = 0x8913, 0x8914, 0x1
_READY_SECONDS = 20.0  # a stack that says nothing by then will not
# keyctl(2)'s number, the architecture's own (`uname -m`): arm64, riscv and loongarch share one.
KEYCTL = {
    "x86_64": 250, "i386": 288, "i686": 288, "aarch64": 219, "arm64": 219, "riscv64": 219,
    "loongarch64": 219, "armv7l": 311, "armv6l": 311, "armv8l": 311, "ppc64le": 271, "ppc64": 271,
    "s390x": 280,
}  # fmt: skip
_JOIN_SESSION_KEYRING = 1
_ENOSYS = 38


class Refused(Exception):
    """What stops the launcher, in words for the run's error."""


class SessionKeyring:
    """A new, empty session keyring for the sandbox's child, joined before bwrap runs: the kernel's
    keyrings are no namespace's, and a child inherits ours, whose keys (a login's Kerberos
    tickets, whatever a program stored there) it may read. bwrap's user namespace gives it a user
    keyring of its own. Made here, `join()` in the child: one system call, bound beforehand."""

    def __init__(self) -> None:
        number = KEYCTL.get(os.uname().machine)
        if number is None:
            raise Refused(f"cannot give the agent a keyring of its own on {os.uname().machine}")
        self._number, self._syscall = number, _libc().syscall

    def join(self) -> bool:
        """True once joined, or where this kernel has no keyrings to share (ENOSYS)."""
        return self._syscall(self._number, _JOIN_SESSION_KEYRING, None) >= 0 or ctypes.get_errno() == _ENOSYS


def own_network() -> None:
    """Move into a network namespace of our own, its loopback up, with a user namespace of our own
    (mapping our ids to themselves): it lets us make one unprivileged, and a stack attach to it."""
    uid, gid = os.getuid(), os.getgid()
    if _libc().unshare(_CLONE_NEWUSER | _CLONE_NEWNET) != 0:
        raise Refused(f"cannot make the agent's network namespace: {os.strerror(ctypes.get_errno())}")
    # Our own ids only (even root has no capability left where it was): setgroups must go first.
    for name, text in (("setgroups", "deny"), ("uid_map", f"{uid} {uid} 1"), ("gid_map", f"{gid} {gid} 1")):
        with open(f"/proc/self/{name}", "w") as file:
            file.write(text)
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as handle:
        request = struct.pack("16sH14x", b"lo", 0)
        flags = struct.unpack("16sH14x", fcntl.ioctl(handle, _SIOCGIFFLAGS, request))[1]
        fcntl.ioctl(handle, _SIOCSIFFLAGS, struct.pack("16sH14x", b"lo", flags | _IFF_UP))


def hand_listener(port: int, hand_to: int) -> None:
    """Listen on 127.0.0.1:`port` here, and send the listener over the unix socket `hand_to`."""
    with socket.socket(fileno=hand_to) as hand, socket.create_server(("127.0.0.1", port)) as listener:
        socket.send_fds(hand, [b"listener"], [listener.fileno()])


class Stack:
    """A user-mode network stack for our network namespace: forked while we are still in the host's
    (its sockets must be made there), it waits until we have our own, then runs attached to it."""

    def __init__(self, name: str) -> None:
        self.name = name
        waits, self._go = os.pipe()  # a byte once our namespace is made
        self._ready, said = os.pipe()  # the stack's word once it serves it
        launcher = os.getpid()
        libc = _libc()  # before the fork: the child only calls it (we have no other thread)
        if os.fork():
            os.close(waits)
            os.close(said)
            return
        try:  # the child: whatever happens, it never returns into the launcher's code
            os.close(self._go)
            os.close(self._ready)
            libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)  # it dies with bwrap
            for ignored in (signal.SIGPIPE, signal.SIGXFSZ):  # as Python left them: as they were
                signal.signal(ignored, signal.SIG_DFL)
            if os.read(waits, 1) and os.getppid() == launcher:
                os.execvp(name, self._argv(name, str(launcher), said))
        except BaseException as exc:
            os.write(2, f"{SAYS}cannot start {name}: {exc}\n".encode())
        os._exit(1)

    @staticmethod
    def _argv(name: str, target: str, said: int) -> list[str]:
        """Its command line; its stdin is nothing, its stdout `said` (pasta) or nothing."""
        quiet = os.open(os.devnull, os.O_RDWR)
        os.dup2(quiet, 0)
        if name == "pasta":  # it tells its readiness by writing its "pid file", here our pipe
            os.dup2(said, 1)
            argv = ["pasta", "--config-net", "--quiet", "--foreground", "--pid", "/dev/stdout"]
            argv += ["--dns-forward", DNS[name], "--tcp-ports", "none", "--udp-ports", "none"]  # no way in
            argv += ["--runas", f"{os.getuid()}:{os.getgid()}", "--userns", f"/proc/{target}/ns/user"]
            return [*argv, "--netns", f"/proc/{target}/ns/net"]
        os.dup2(quiet, 1)
        os.set_inheritable(said, True)
        # It parses what the agent sends, outside the sandbox: a seccomp filter of its own narrows
        # what a flaw there could do, and as root an empty mount namespace and no capability but
        # binding low ports (its --enable-sandbox: it wants root, here or in a user namespace).
        argv = ["slirp4netns", "--configure", "--mtu=65520", "--enable-seccomp", f"--ready-fd={said}"]
        argv += ["--enable-sandbox"] if os.geteuid() == 0 else []
        return [*argv, target, "tap0"]

    def start(self) -> None:
        """Attach it to our network namespace now made; return once it is ready."""
        os.write(self._go, b"!")
        os.close(self._go)
        signal.signal(signal.SIGALRM, _too_long)
        signal.setitimer(signal.ITIMER_REAL, _READY_SECONDS)
        try:
            told = os.read(self._ready, 64)  # its word, or the end of the pipe when it died first
        except TimeoutError:
            told = b""
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            os.close(self._ready)
        if not told:
            raise Refused(f"{self.name} could not give the agent a network (see its own words on stderr)")


def _too_long(*_: object) -> None:
    raise TimeoutError


def main(argv: Sequence[str]) -> None:
    split = list(argv).index("--")
    options, bwrap = list(argv[:split]), list(argv[split + 1 :])
    try:
        if not SessionKeyring().join():
            raise Refused(f"cannot give the agent a keyring of its own: {os.strerror(ctypes.get_errno())}")
        stack = Stack(_value(options, "--stack")) if "--stack" in options else None
        own_network()
        if "--listen" in options:
            hand_listener(int(_value(options, "--listen")), int(_value(options, "--hand-to")))
        if stack is not None:
            stack.start()
            bwrap = with_resolver(bwrap, DNS[stack.name])
        os.execv(bwrap[0], bwrap)
    except (Refused, OSError) as exc:
        sys.stderr.write(f"{SAYS}{exc}\n")
        sys.exit(1)


def with_resolver(bwrap: list[str], address: str) -> list[str]:
    """bwrap's argv, showing the agent an /etc/resolv.conf whose nameserver is `address` (the rest
    as ours says), from a pipe bwrap reads and closes: after its other mounts, so it wins."""
    try:
        with open("/etc/resolv.conf") as ours:
            kept = [line for line in ours if line.split()[:1] != ["nameserver"]]
    except OSError:
        kept = []
    data, said = os.pipe()
    os.write(said, "".join([*kept, f"nameserver {address}\n"]).encode())
    os.close(said)
    os.set_inheritable(data, True)
    end = bwrap.index("--")
    return [*bwrap[:end], "--ro-bind-data", str(data), "/etc/resolv.conf", *bwrap[end:]]


def _value(options: list[str], name: str) -> str:
    return options[options.index(name) + 1]


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


if __name__ == "__main__":
    main(sys.argv[1:])
