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
Then prints {"stop_reason", "output", "error", "zombies"} (our children left unreaped).
"""

from __future__ import annotations

import asyncio
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


async def main(job: dict[str, object]) -> None:
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
