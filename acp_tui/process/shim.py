"""The shim: a small program of ours that runs on the far side of a link (ssh, docker, podman,
kubectl) around the agent, and owns the agent's process group there.

Nothing is copied to the far side: the carrier's client runs `python3 -c BOOTSTRAP`, whose first
read of stdin is this file's source (a length line, then the bytes), run at once. Standard library
alone, Python 3.8 or later, POSIX.

What comes on our stdin after the source (see `acp_tui.process.link`, the near end):
- a header: a length line, then JSON: `argv`, `cwd` (None: where the login starts, its home),
  `env` (the preset's, laid over this side's environment scrubbed by the `scrub` pattern, the same
  rule as a local child's), `nonce`, `silence` (seconds without a frame that end the agent),
  `term_grace`, `sandbox` (None, or the arguments of `acp_tui.process.sandbox.confine` but the
  command, cwd and env: the agent is confined by bubblewrap here, by the same code as at home, or
  not started at all) and `modules` (that code: module name -> source, imported from memory; it
  needs this side's Python to be one acp-tui runs on);
- frames, each a line and maybe a payload, so the agent's stdin stays byte for byte what the near
  end wrote: `d N` and N bytes for the agent's stdin, `e` (its stdin ends), `h` (a heartbeat),
  `k GRACE` (end the group: SIGTERM, SIGKILL after GRACE seconds).

The agent's stdout and stderr are ours (inherited): they go back as they are. Our own words go on
stderr, each one line that starts with NUL, `acp-tui-shim`, the nonce (an agent cannot forge them
without it), then a word and JSON: `ready {"pid", "cwd"}` once the agent runs, `failed {"message"}`
when it could not start, `exit {"code", "ended_by"}` once its whole group is gone (then we exit 0).

The agent runs in a new session (its own group), marked with the nonce in its environment; we are a
child subreaper, so what it leaves behind stays ours. Its group, its orphans and whatever carries
its mark are ended on: end of our stdin, SIGHUP / SIGTERM / SIGINT, a `k` frame, a silence longer
than `silence`, or its leader's exit (the rest then get `term_grace` to go by themselves).
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import re
import signal
import subprocess
import sys
import threading
import time
from typing import Any

SHIM_MARK = "ACP_TUI_SHIM_RUN"  # in the agent's environment: the nonce of its run
STATUS = b"\0acp-tui-shim "
POLL = 0.05  # seconds between two looks at the agent's group
PR_SET_CHILD_SUBREAPER = 36

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
        self.ending: float | None = None  # the grace of an end asked for (a flag: signal handlers set it)
        self.heard = time.monotonic()
        self.leader: subprocess.Popen[bytes] | None = None
        self.code: int | None = None

    def say(self, word: str, **fields: Any) -> None:
        line = STATUS + self.nonce + b" " + word.encode() + b" " + json.dumps(fields).encode() + b"\n"
        with contextlib.suppress(OSError):  # the link may be gone: we end the group all the same
            os.write(2, line)

    def run(self, source: Any) -> int:
        for sig in (signal.SIGHUP, signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, lambda *_: self.end(0.0))
        signal.signal(signal.SIGPIPE, signal.SIG_IGN)  # a write to a gone link fails, it does not kill
        _become_subreaper()
        try:
            self.leader = self.start()
        except OSError as exc:
            self.say("failed", message=_spawn_error(exc, self.header))
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
        grace = self.wait_for_an_end()
        ended_by = self.end_group(grace)
        self.say("exit", code=self.code, ended_by=ended_by)
        return 0

    def start(self) -> subprocess.Popen[bytes]:
        header = self.header
        scrub = re.compile(header["scrub"], re.IGNORECASE)
        env = {name: value for name, value in os.environ.items() if not scrub.search(name)}
        env.update(header["env"])
        env[SHIM_MARK] = self.nonce.decode()
        if header.get("cwd"):
            os.chdir(header["cwd"])
        argv = list(header["argv"])
        if header.get("sandbox") is not None:
            argv = _confined(argv, env, header["sandbox"], header.get("modules") or {})
        return subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            env=env,
            start_new_session=True,
            close_fds=True,
        )

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
                    self.end(float(rest or 0))
        except (OSError, ValueError):
            pass
        self.end(0.0)  # the link ended: so does the agent

    def end(self, grace: float) -> None:
        if self.ending is None:
            self.ending = grace

    def wait_for_an_end(self) -> float:
        """Until something ends the agent: the grace its group gets then."""
        assert self.leader is not None
        while True:
            self.reap()
            if self.ending is not None:
                return self.ending
            if self.code is not None:  # it exited: the rest of its group may go by itself
                return self.term_grace
            if time.monotonic() - self.heard > self.silence:
                return 0.0
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


def _confined(
    argv: list[str], env: dict[str, str], sandbox: dict[str, Any], modules: dict[str, str]
) -> list[str]:
    """The agent's argv inside bubblewrap on this side, by acp-tui's own sandbox code (shipped in
    the header); ValueError with its one line when it cannot be had (no bwrap here)."""
    _import_from(modules)
    from acp_tui.process.sandbox import SandboxError, confine

    try:
        return confine(argv[0], argv[1:], cwd=os.getcwd(), env=env, **sandbox)
    except SandboxError as exc:
        raise ValueError(str(exc)) from None


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
    """Live processes carrying the run's mark (Linux; those of our user whose environment we read)."""
    entry = SHIM_MARK.encode() + b"=" + nonce
    found = []
    with contextlib.suppress(OSError):
        for name in os.listdir("/proc"):
            if not name.isdigit() or int(name) == os.getpid():
                continue
            try:
                with open(f"/proc/{name}/environ", "rb") as f:
                    if entry not in f.read().split(b"\0"):
                        continue
                with open(f"/proc/{name}/stat", "rb") as f:
                    stat = f.read()
            except OSError:
                continue
            if stat[stat.rfind(b")") + 2 :][:1] not in (b"Z", b"X"):
                found.append(int(name))
    return found


def _become_subreaper() -> None:
    with contextlib.suppress(OSError, AttributeError):
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)


def _spawn_error(exc: OSError, header: dict[str, Any]) -> str:
    command, cwd = header["argv"][0], header.get("cwd")
    if isinstance(exc, FileNotFoundError) and cwd and exc.filename == cwd:
        return f"working directory not found: {cwd}"
    if isinstance(exc, FileNotFoundError):
        return f"command not found: {command}"
    if isinstance(exc, PermissionError):
        return f"command not executable: {command}"
    return f"could not start {command}: {exc.strerror or exc}"


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
        return int(asyncio.run(getattr(importlib.import_module(module), function)(source)))
    return _Shim(header).run(source)


if __name__ == "__main__":
    # No interpreter teardown: our reader thread may still block on stdin, and all we wrote went
    # out through os.write.
    os._exit(main())
