"""A supervisor of one run of the trying agent, in a fresh process (as an unprivileged user, or to be
killed): `python supervise.py JOB`, JOB a JSON object:
  prompt      the tries (tests.sandbox.support.tries)
  cwd         the agent's working directory
  sandbox     "workspace" (default) or "none"
  ready       a file the agent writes once its tries are done (a daemon's): wait for it, then print
              {"ready": true, "pid": the child's pid, "supervisor": ours, "daemons": [...]}, where
              each process whose command line holds `tag` is {"pid", "ppid", "readable"} (whether
              we may read its environment)
  then        "end" (default: the run goes to its end), "dispose", or "hang" (until killed)
  key         a key's description: before the run, we join a session keyring of our own holding
              our user keyring (as a login's does), and put the user key DESC (text "session
              secret") in the first, DESC-user (text "user secret") in the second, taken out again
              once the run has ended
Then prints {"stop_reason", "output", "error", "zombies"} (our children left unreaped).
"""

from __future__ import annotations

import asyncio
import ctypes
import json
import os
import sys
from pathlib import Path

from acp_tui import AcpProviderConfig, AcpSubagentProvider, SubagentRequest
from tests.sandbox.procs import by_command_line, zombie_children

AGENT = str(Path(__file__).with_name("trying_agent.py"))


def daemon(pid: int) -> dict[str, object]:
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            readable = bool(f.read())
    except OSError:
        readable = False
    with open(f"/proc/{pid}/stat", "rb") as f:
        ppid = int(f.read().rsplit(b")", 1)[1].split()[1])
    return {"pid": pid, "ppid": ppid, "readable": readable}


# keyctl(2), add_key(2) and the operations used: each system call's number is the architecture's.
KEY_CALLS = {"x86_64": (248, 250), "aarch64": (217, 219), "riscv64": (217, 219)}
JOIN_SESSION_KEYRING, LINK, UNLINK = 1, 8, 9
SESSION_KEYRING, USER_KEYRING = -3, -4


def keys_put(description: str) -> int:
    """Our own session keyring holding our user keyring and DESC; DESC-user in our user keyring
    (its id, returned)."""
    add_key, keyctl = KEY_CALLS[os.uname().machine]
    libc = ctypes.CDLL(None, use_errno=True)
    assert libc.syscall(keyctl, JOIN_SESSION_KEYRING, None) > 0
    assert libc.syscall(keyctl, LINK, USER_KEYRING, SESSION_KEYRING) == 0
    for name, text, keyring in (
        (description, b"session secret", SESSION_KEYRING),
        (f"{description}-user", b"user secret", USER_KEYRING),
    ):
        key = libc.syscall(add_key, b"user", name.encode(), text, len(text), keyring)
        assert key > 0, ctypes.get_errno()
    return int(key)


def key_taken_out(key: int) -> None:
    _, keyctl = KEY_CALLS[os.uname().machine]
    ctypes.CDLL(None).syscall(keyctl, UNLINK, key, USER_KEYRING)


async def main(job: dict[str, object]) -> None:
    key = keys_put(str(job["key"])) if job.get("key") else None
    try:
        await supervise(job)
    finally:
        if key is not None:
            key_taken_out(key)


async def supervise(job: dict[str, object]) -> None:
    config = AcpProviderConfig(
        command=sys.executable,
        args=[AGENT],
        sandbox=job.get("sandbox", "workspace"),  # type: ignore[arg-type]
        term_grace=0.3,
        cancel_grace=0.5,
    )
    run = await AcpSubagentProvider(config).start(SubagentRequest(str(job["prompt"]), cwd=str(job["cwd"])))
    if job.get("ready"):
        ready = Path(str(job["ready"]))
        for _ in range(2000):
            if ready.exists() and ready.read_text():
                break
            await asyncio.sleep(0.01)
        daemons = [daemon(pid) for pid in by_command_line(str(job.get("tag", "")))]
        report = {"ready": True, "pid": run.pid, "supervisor": os.getpid(), "daemons": daemons}
        print(json.dumps(report), flush=True)
    if job.get("then") == "dispose":
        await run.dispose("stop")
    elif job.get("then") == "hang":
        await asyncio.Event().wait()
    result = await run.result()
    ending = {"stop_reason": result.stop_reason.value, "output": result.output, "error": result.error}
    print(json.dumps({**ending, "zombies": zombie_children()}), flush=True)


if __name__ == "__main__":
    asyncio.run(main(json.loads(sys.argv[1])))
