"""A standard-library ACP agent that tries what a confined agent must not do, and says what happened.

    python trying_agent.py

The prompt is a JSON list of tries, each `[what, *arguments]`; the answer is one chunk holding the
JSON list of their outcomes, in order: `"ok"` or `"ok:<text>"` when it worked, `"error:<ERRNO>"`
(`error:ENOENT`, `error:EROFS`, ...) when it did not. Tries:
  ["read", PATH]              read the file                  -> ok:<its text>
  ["write", PATH]             create or append to the file   -> ok
  ["put", PATH, TEXT]         make the file hold TEXT (a link there is replaced) -> ok
  ["link", TARGET, PATH]      make PATH a link to TARGET (what was there is replaced) -> ok
  ["rewrite", PATH]           write the file's own text back into it (a harmless write, for a
                              /proc/sys setting too)    -> ok
  ["key", DESCRIPTION]        read the kernel keyrings' user key of that description, searched
                              from the user, session and user-session keyrings (a keyring found
                              but not its own is linked into its session keyring first, as a
                              login's session keyring links the user's) -> ok:<its text>
  ["environ", PID]            read /proc/PID/environ         -> ok:<its entries, one per line>
  ["signal", PID]             may it signal PID (signal 0)   -> ok
  ["procs"]                   count the processes it can see -> ok:<N>
  ["connect", HOST, PORT]     a TCP connection               -> ok
  ["unix", PATH]              a unix socket's connection     -> ok
  ["abstract", NAME]          connect to the abstract unix socket "@NAME" -> ok
  ["tunnel", HOST, PORT]      CONNECT HOST:PORT through the proxy $HTTPS_PROXY names, then send
                              "ping\n" -> ok:<the line the far end answers>, or refused:<status>
  ["daemon", TAG, READY, HOW] leave a daemon that ignores SIGTERM, SIGHUP and SIGINT, in a session of
                              its own, its command line ending with TAG; it writes READY once set up,
                              and the try waits for it.
                              HOW: a list of `orphan` (its parent exits at once, so it is reparented)
                              and `hidden` (it calls prctl(PR_SET_DUMPABLE, 0): a user's other
                              processes may no longer read its /proc files, its environment included)
  ["run", ARG, ...]           run a program                  -> ok:<exit code>:<last stderr line>
  ["hold"]                    then keep the turn open until cancelled
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from typing import Any

_write = threading.Lock()
_cancelled = threading.Event()

# The daemon's own program: run by exec, so its command line carries the tag.
DAEMON = """
import ctypes, os, signal, sys, time
for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
    signal.signal(sig, signal.SIG_IGN)
if sys.argv[2] == "hidden":
    ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE
with open(sys.argv[1], "w") as f:
    f.write(str(os.getpid()))
while True:
    time.sleep(3600)
"""


def send(message: dict[str, Any]) -> None:
    with _write:
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", **message}) + "\n")
        sys.stdout.flush()


def error_of(exc: OSError) -> str:
    import errno

    return "error:" + (errno.errorcode.get(exc.errno or 0) or type(exc).__name__)


def attempt(what: str, *args: Any) -> str:
    try:
        if what == "read":
            with open(args[0]) as f:
                return "ok:" + f.read()
        if what == "write":
            with open(args[0], "a") as f:
                f.write("written by the agent\n")
            return "ok"
        if what == "put":
            with open(args[0] + ".new", "w") as f:
                f.write(args[1])
            os.replace(args[0] + ".new", args[0])
            return "ok"
        if what == "link":
            os.symlink(args[0], args[1] + ".new")
            os.replace(args[1] + ".new", args[1])
            return "ok"
        if what == "rewrite":
            with open(args[0], "rb") as f:
                text = f.read()
            with open(args[0], "wb") as f:
                f.write(text)
            return "ok"
        if what == "key":
            return read_key(args[0])
        if what == "environ":
            with open(f"/proc/{args[0]}/environ", "rb") as f:
                return "ok:" + f.read().replace(b"\0", b"\n").decode(errors="replace")
        if what == "signal":
            os.kill(int(args[0]), 0)
            return "ok"
        if what == "procs":
            return f"ok:{sum(name.isdigit() for name in os.listdir('/proc'))}"
        if what == "connect":
            with socket.create_connection((args[0], int(args[1])), timeout=5):
                return "ok"
        if what == "unix":
            with socket.socket(socket.AF_UNIX) as client:
                client.settimeout(5)
                client.connect(args[0])
                return "ok"
        if what == "abstract":
            with socket.socket(socket.AF_UNIX) as unix:
                unix.connect("\0" + args[0])
                return "ok"
        if what == "tunnel":
            return tunnel(args[0], int(args[1]))
        if what == "daemon":
            leave_a_daemon(args[0], args[1], args[2])
            return "ok"
        if what == "run":
            done = subprocess.run(list(args), capture_output=True, text=True, timeout=30)
            last = (done.stderr.strip().splitlines() or [""])[-1]
            return f"ok:{done.returncode}:{last}"
    except OSError as exc:
        return error_of(exc)
    return f"unknown try {what!r}"


# keyctl(2) and its operations; the system call's number is the architecture's.
KEYCTL = {"x86_64": 250, "aarch64": 219, "riscv64": 219}
KEYCTL_LINK, KEYCTL_SEARCH, KEYCTL_READ = 8, 10, 11
KEYRINGS = (-4, -3, -5)  # the user, session and user-session keyrings
SESSION_KEYRING = -3


def read_key(description: str) -> str:
    import ctypes
    import errno

    number = KEYCTL.get(os.uname().machine)
    if number is None:
        return "unknown architecture"
    libc = ctypes.CDLL(None, use_errno=True)
    failure = errno.ENOKEY
    for keyring in KEYRINGS:
        key = libc.syscall(number, KEYCTL_SEARCH, keyring, b"user", description.encode(), 0)
        if key < 0:
            continue
        libc.syscall(number, KEYCTL_LINK, keyring, SESSION_KEYRING)  # now its own to read
        text = ctypes.create_string_buffer(256)
        size = libc.syscall(number, KEYCTL_READ, key, text, len(text))
        if size >= 0:
            return "ok:" + text.raw[:size].decode()
        failure = ctypes.get_errno()
    return "error:" + errno.errorcode[failure]


def tunnel(host: str, port: int) -> str:
    proxy = os.environ["HTTPS_PROXY"].removeprefix("http://")
    proxy_host, _, proxy_port = proxy.rpartition(":")
    with socket.create_connection((proxy_host, int(proxy_port)), timeout=10) as conn:
        conn.sendall(f"CONNECT {host}:{port} HTTP/1.1\r\nHost: {host}:{port}\r\n\r\n".encode())
        replies = conn.makefile("rb")
        status = replies.readline().split()[1].decode()
        while replies.readline() not in (b"\r\n", b""):
            pass
        if status != "200":
            return f"refused:{status}"
        conn.sendall(b"ping\n")
        return "ok:" + replies.readline().decode().strip()


def leave_a_daemon(tag: str, ready: str, how: list[str]) -> None:
    argv = [sys.executable, "-c", DAEMON, ready, "hidden" if "hidden" in how else "shown", tag]
    middle = os.fork()
    if middle == 0:
        os.setsid()
        if "orphan" in how and os.fork() != 0:
            os._exit(0)  # its child is reparented: to the nearest subreaper, or init
        os.execv(sys.executable, argv)
    if "orphan" in how:
        os.waitpid(middle, 0)
    for _ in range(2000):  # it is there once it says so
        if os.path.exists(ready) and os.path.getsize(ready):
            return
        time.sleep(0.005)
    raise TimeoutError("the daemon never said it was ready")


def answer(rid: Any, prompt: str) -> None:
    tries = json.loads(prompt)
    outcomes = [attempt(*one) for one in tries if one[0] != "hold"]
    chunk = {"type": "text", "text": json.dumps(outcomes)}
    update = {"sessionUpdate": "agent_message_chunk", "content": chunk}
    send({"method": "session/update", "params": {"sessionId": "s", "update": update}})
    if ["hold"] in tries:
        _cancelled.wait()
        send({"id": rid, "result": {"stopReason": "cancelled"}})
        return
    send({"id": rid, "result": {"stopReason": "end_turn"}})


def main() -> None:
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    for line in sys.stdin:
        message = json.loads(line)
        method, rid = message.get("method"), message.get("id")
        if method == "initialize":
            send({"id": rid, "result": {"protocolVersion": 1, "agentCapabilities": {}, "authMethods": []}})
        elif method == "session/new":
            send({"id": rid, "result": {"sessionId": "s"}})
        elif method == "session/prompt":
            text = "".join(block.get("text", "") for block in message["params"]["prompt"])
            threading.Thread(target=answer, args=(rid, text), daemon=True).start()
        elif method == "session/cancel":
            _cancelled.set()
        elif rid is not None:
            send({"id": rid, "error": {"code": -32601, "message": "Method not found"}})


if __name__ == "__main__":
    main()
