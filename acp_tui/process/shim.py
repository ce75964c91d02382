"""The shim: a small program of ours that runs on the far side of a link (ssh, docker, podman,
kubectl) around the agent, and owns the agent's process group there.

Nothing is copied to the far side: the carrier's client runs `python3 -c BOOTSTRAP`, whose first
read of stdin is this file's source (a length line, then the bytes), run at once. Standard library
alone, Python 3.8 or later, POSIX.

What comes on our stdin after the source (see `acp_tui.process.link`, the near end):
- a header: a length line, then JSON: `argv`, `cwd` (None: where the login starts, its home),
  `env` (the preset's, laid over this side's environment scrubbed by the same rule and code as a
  local child's, `acp_tui.process.environment`), `nonce`, `silence` (seconds without a frame that
  end the agent), `term_grace`, `sandbox` (None, or a `SandboxSpec`'s fields: the agent is
  confined by bubblewrap here, by the same code as at home, or not started at all) and `modules`
  (that code: module name -> source, imported from memory; the sandbox's needs this side's Python
  to be one acp-tui runs on). A header with `serve` (`module:function`, shipped in `modules`) runs
  a server of ours instead of an agent (the far side's worktrees, `acp_tui.workspace.far`), handed
  our stdin and the header;
- frames, each a line and maybe a payload, so the agent's stdin stays byte for byte what the near
  end wrote: `d N` and N bytes for the agent's stdin, `e` (its stdin ends), `h` (a heartbeat),
  `k GRACE` (end the group: SIGTERM, SIGKILL after GRACE seconds).

The agent's stdout and stderr are ours (inherited): they go back as they are. Our own words go on
stderr, each one line that starts with NUL, `acp-tui-shim`, the nonce (an agent cannot forge them
without it), then a word and JSON: `ready {"pid", "cwd"}` once the agent runs, `failed {"message"}`
when it could not start, `exit {"code", "ended_by"}` once its whole group is gone (then we exit 0).

The agent runs in a new session (its own group), marked with the nonce in its environment; we are a
child subreaper, so what it leaves behind stays ours. Its group, its orphans and whatever carries
its mark are ended on (the `why` of the end): `end-of-input` (our stdin ends: our end died or let
go), `hangup`, `terminated` (SIGTERM, SIGINT), `kill-line` (a `k` frame: SIGTERM, SIGKILL after its
grace), `heartbeat` (a silence longer than `silence`: the link is cut), or `exit` (its leader
exited: the rest get `term_grace` to go by themselves). A lost link gives the group LOST_GRACE
between SIGTERM and SIGKILL. With `ACP_TUI_SHIM_LOG` set in this side's environment, each end is
one JSON line appended to that file: `nonce`, `why`, `ended_by`, `code`.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from typing import Any

SHIM_MARK = "ACP_TUI_SHIM_RUN"  # in the agent's environment: the nonce of its run
SHIM_LOG = "ACP_TUI_SHIM_LOG"  # in this side's environment: where each end is told (a JSON line)
STATUS = b"\0acp-tui-shim "
POLL = 0.05  # seconds between two looks at the agent's group
LOST_GRACE = 1.0  # the link is lost (its end, a hangup, a silence): SIGTERM, then SIGKILL after this
PR_SET_CHILD_SUBREAPER = 36
FAR_NEEDS_LANDLOCK = (
    "sandbox: on the far side, a confined agent's network needs Landlock (ABI 6, Linux 6.12) there, "
    "or set sandbox_network = false"
)

# The frames (a line each): our end's words to us.
DATA, END_OF_INPUT, HEARTBEAT, KILL = b"d", b"e", b"h", b"k"


def bootstrap(python: str = "python3") -> list[str]:
    """The far side's command: Python reading this source from its stdin, then running it. No
    quote, dollar, backslash or newline in it: any login shell passes it through a single quote."""
    return [python, "-c", "import sys;i=sys.stdin.buffer;exec(i.read(int(i.readline())))"]


class _Shim:
    def __init__(self, header: dict[str, Any]) -> None:
        self.header = header
        self.nonce = str(header["nonce"]).encode()
        self.silence = float(header["silence"])
        self.term_grace = float(header["term_grace"])
        # An end asked for: its grace and why (a flag: signal handlers set it).
        self.ending: tuple[float, str] | None = None
        self.heard = time.monotonic()
        self.leader: subprocess.Popen[bytes] | None = None
        self.code: int | None = None
        self.confinement: Any = None  # a sandbox's stand-ins, let go once the group is gone

    def say(self, word: str, **fields: Any) -> None:
        line = STATUS + self.nonce + b" " + word.encode() + b" " + json.dumps(fields).encode() + b"\n"
        with contextlib.suppress(OSError):  # the link may be gone: we end the group all the same
            os.write(2, line)

    def run(self, source: Any) -> int:
        signal.signal(signal.SIGHUP, lambda *_: self.end(LOST_GRACE, "hangup"))
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, lambda *_: self.end(LOST_GRACE, "terminated"))
        signal.signal(signal.SIGPIPE, signal.SIG_IGN)  # a write to a gone link fails, it does not kill
        _become_subreaper()
        try:
            self.leader = self.start()
        except OSError as exc:  # (after our code was imported: a missing cwd or command)
            from acp_tui.process.exit_cause import spawn_error_message

            header = self.header
            self.say("failed", message=spawn_error_message(exc, header["argv"][0], header.get("cwd") or ""))
            return 0
        except ValueError as exc:  # refused (a sandbox that cannot be had): nothing ran
            self.say("failed", message=str(exc))
            return 0
        except Exception as exc:  # our shipped code on a Python it cannot run on: nothing ran
            self.say("failed", message=f"could not start the agent: {type(exc).__name__}: {exc}")
            return 0
        self.say("ready", pid=self.leader.pid, cwd=os.getcwd())
        writes: queue.Queue[bytes | None] = queue.Queue()
        assert self.leader.stdin is not None
        threading.Thread(target=_write_all, args=(writes, self.leader.stdin), daemon=True).start()
        threading.Thread(target=self.read_frames, args=(source, writes), daemon=True).start()
        grace, why = self.wait_for_an_end()
        ended_by = self.end_group(grace)
        if self.confinement is not None:
            self.confinement.close()
        self.say("exit", code=self.code, ended_by=ended_by)
        _log(nonce=self.nonce.decode(), why=why, ended_by=ended_by, code=self.code)
        return 0

    def start(self) -> subprocess.Popen[bytes]:
        header = self.header
        _import_from(header["modules"])
        from acp_tui.process.environment import child_environment

        env = child_environment(header["env"])
        env.pop(SHIM_LOG, None)
        env[SHIM_MARK] = self.nonce.decode()
        if header.get("cwd"):
            os.chdir(header["cwd"])
        argv, preexec, network = list(header["argv"]), None, None
        if header.get("sandbox") is not None:
            argv, preexec, network = self.confined(argv, env, header["sandbox"])
        leader = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            env=env,
            start_new_session=True,
            close_fds=True,
            preexec_fn=preexec,
        )
        if network is not None:
            network.spawned()
        return leader

    def confined(
        self, argv: list[str], env: dict[str, str], sandbox: dict[str, Any]
    ) -> tuple[list[str], Any, Any]:
        """The agent's argv inside bubblewrap on this side, by acp-tui's own sandbox code (shipped
        in the header), what its spawn runs before exec (a session keyring, Landlock's scope), and
        its network; ValueError with its one line when it cannot be had (no bwrap here, a network
        only our launcher could give: its program is no file here)."""
        from acp_tui.process.network import SandboxNetwork
        from acp_tui.process.sandbox import SandboxError, confine

        try:
            network = SandboxNetwork(sandbox.pop("network"))
            if network.way.launcher:
                raise SandboxError(FAR_NEEDS_LANDLOCK)
            self.confinement = confine(
                argv[0], argv[1:], cwd=os.getcwd(), env=env, network=network.way, **sandbox
            )
        except SandboxError as exc:
            raise ValueError(str(exc)) from None
        return self.confinement.argv, self.confinement.preexec, network

    def read_frames(self, source: Any, writes: queue.Queue[bytes | None]) -> None:
        """Our end's frames, until its end; each one is a sign of life."""
        try:
            while True:
                line = source.readline()
                if not line.endswith(b"\n"):
                    break
                self.heard = time.monotonic()
                kind, _, rest = line.strip().partition(b" ")
                if kind == DATA:
                    data = source.read(int(rest))
                    writes.put(data)
                elif kind == END_OF_INPUT:
                    writes.put(None)
                elif kind == KILL:
                    self.end(float(rest or 0), "kill-line")
        except (OSError, ValueError):
            pass
        self.end(LOST_GRACE, "end-of-input")  # the link ended: so does the agent

    def end(self, grace: float, why: str) -> None:
        if self.ending is None:
            self.ending = (grace, why)

    def wait_for_an_end(self) -> tuple[float, str]:
        """Until something ends the agent: the grace its group gets then, and why."""
        assert self.leader is not None
        while True:
            self.reap()
            if self.ending is not None:
                return self.ending
            if self.code is not None:  # it exited: the rest of its group may go by itself
                return self.term_grace, "exit"
            if time.monotonic() - self.heard > self.silence:
                return LOST_GRACE, "heartbeat"
            time.sleep(POLL)

    def end_group(self, grace: float) -> str:
        """SIGTERM (unless all went by themselves), SIGKILL after `grace`; once nothing is left,
        how it ended: `exit`, `sigterm` or `sigkill`."""
        assert self.leader is not None
        if self.code is not None and self.wait_gone(grace):
            return "exit"
        self.signal(signal.SIGTERM)
        if self.wait_gone(grace):
            return "sigterm"
        while not self.wait_gone(POLL):
            self.signal(signal.SIGKILL)
        return "sigkill"

    def signal(self, sig: int) -> None:
        assert self.leader is not None
        with contextlib.suppress(OSError):
            os.killpg(self.leader.pid, sig)
        for pid in _marked(self.nonce):
            with contextlib.suppress(OSError):
                os.kill(pid, sig)

    def wait_gone(self, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while True:
            self.reap()
            if self.code is not None and not self.alive():
                return True
            if time.monotonic() >= deadline:
                return False
            time.sleep(POLL / 5)

    def alive(self) -> bool:
        assert self.leader is not None
        try:
            os.killpg(self.leader.pid, 0)
        except OSError:
            return bool(_marked(self.nonce))
        return True

    def reap(self) -> None:
        """wait() for every child of ours that ended (the agent, and the orphans we adopted)."""
        assert self.leader is not None
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            if pid == self.leader.pid:
                self.code = -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)


def _log(**said: Any) -> None:
    """One JSON line to `$ACP_TUI_SHIM_LOG`, when this side's environment names a file."""
    path = os.environ.get(SHIM_LOG)
    if path:
        with contextlib.suppress(OSError), open(path, "a", encoding="utf-8") as log:
            log.write(json.dumps(said) + "\n")


def _import_from(modules: dict[str, str]) -> None:
    """Let `import` find `modules` (name -> source) in memory; a name that prefixes another is a
    package (its own `__init__` is not shipped: it stands empty)."""
    import importlib.abc
    import importlib.util

    packages = {name.rpartition(".")[0] for name in modules}
    packages |= {name.rpartition(".")[0] for name in packages if "." in name}

    class Shipped(importlib.abc.MetaPathFinder, importlib.abc.Loader):
        def find_spec(self, name: str, path: Any, target: Any = None) -> Any:
            if name in modules or name in packages:
                return importlib.util.spec_from_loader(name, self, is_package=name in packages)
            return None

        def exec_module(self, module: Any) -> None:
            source = modules.get(module.__name__, "")
            exec(compile(source, f"<acp-tui>/{module.__name__}", "exec"), module.__dict__)

    sys.meta_path.insert(0, Shipped())


def _write_all(writes: queue.Queue[bytes | None], pipe: Any) -> None:
    """The agent's stdin, in its own thread: an agent slow to read never stops our frames."""
    with contextlib.suppress(OSError, ValueError):
        while (data := writes.get()) is not None:
            pipe.write(data)
            pipe.flush()
    with contextlib.suppress(OSError, ValueError):
        pipe.close()


def _marked(nonce: bytes) -> list[int]:
    """Live processes carrying the run's mark (Linux; those of our user whose environment we read),
    told live and read as the watchdog does at home (a process whose main thread exited too)."""
    from acp_tui.process.watchdog import read_environ, read_proc

    entry = SHIM_MARK.encode() + b"=" + nonce
    found = []
    with contextlib.suppress(OSError):
        for name in os.listdir("/proc"):
            if not name.isdigit() or int(name) == os.getpid():
                continue
            proc = read_proc(int(name))
            if proc is not None and not proc.dead and entry in (read_environ(int(name)) or ()):
                found.append(int(name))
    return found


def _become_subreaper() -> None:
    with contextlib.suppress(OSError, AttributeError):
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)


def main() -> int:
    source = sys.stdin.buffer
    try:
        header = json.loads(source.read(int(source.readline())))
    except ValueError:
        return 2  # no header: our end is gone before it said anything
    if header.get("serve"):  # a server of ours, not an agent: `module:function`, shipped with it
        import asyncio
        import importlib

        _import_from(header["modules"])
        module, _, function = header["serve"].partition(":")
        return int(asyncio.run(getattr(importlib.import_module(module), function)(source, header)))
    return _Shim(header).run(source)


if __name__ == "__main__":
    # No interpreter teardown: our reader thread may still block on stdin, and all we wrote went
    # out through os.write.
    os._exit(main())
