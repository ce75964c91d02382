"""Agents over ssh: Enter to the first answer chunk over ssh on loopback, against the same agent here,
side by side, and over ssh with a warm spare; and the seconds the far side takes to end an agent's
group once acp-tui is SIGKILLed (against the same here) or its link is cut (against the issue's 10 s).

    sudo python benchmarks/remote.py [--rounds N] [--ends N]

Needs root (it makes an unprivileged user and starts Debian's sshd on 127.0.0.1 and in a network
namespace, as the remote tests do: tests/remote/support.py). The agent is tests/scripted_agent.py, a
standard-library agent. Each round runs its cases in a rotating order.

- first chunk: `start` (the Enter) to the first `OutputDelta`; for the spare, from `take` (the spare
  was made, ssh connected, the agent started and its session opened before). Medians, and the
  ratios ssh / local and ssh warm / local.
- SIGKILL: `acp-tui run` with an agent behind a wrapper, SIGKILLed once both run; from the signal to
  the last process of the agent gone (the watchdog here; over ssh, then the shim over there).
- link cut: the agent over ssh to a network namespace, its veth set down after the first chunk; from
  the cut to the last process of the far user gone (the shim hears no heartbeat).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import secrets
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from _common import end_progress, header, median, progress, ratios, table

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from acp_tui import AcpProviderConfig, AcpSubagentProvider, SubagentRequest  # noqa: E402
from acp_tui.core.model import OutputDelta  # noqa: E402
from tests.helpers import SCRIPTED_AGENT  # noqa: E402
from tests.remote.support import (  # noqa: E402
    FarHost,
    await_gone,
    far_agents,
    far_processes,
    far_user_made,
    network_namespace,
    set_link,
    sshd,
)

OPTIONS = ("text=first chunk",)
CONTRACT = 10.0  # issue 29: the far side's group gone within 10 s of a crash or a cut


async def first_chunk(run: Any, since: float) -> float:
    async for event in run.events():
        if isinstance(event, OutputDelta):
            took = time.monotonic() - since
            await run.dispose()
            return took
    raise SystemExit(f"no chunk: {await run.result()}")


async def cold(config: AcpProviderConfig) -> float:
    pressed = time.monotonic()
    run = await AcpSubagentProvider(config).start(SubagentRequest(prompt="hi"))
    return await first_chunk(run, pressed)


async def warm(config: AcpProviderConfig) -> float:
    provider = AcpSubagentProvider(config)
    spare = await provider.prepare(cwd=config.cwd_for(None), presession=True)
    await spare.ready.wait()
    pressed = time.monotonic()
    run = spare.take(SubagentRequest(prompt="hi"))
    took = await first_chunk(run, pressed)
    await provider.aclose()
    return took


def killed(agent: list[str], remote: FarHost | None, processes: Callable[[], list[int]]) -> float:
    """`acp-tui run` SIGKILLed once the wrapper and its grandchild run: seconds to their end."""
    with tempfile.TemporaryDirectory() as folder:
        config = Path(folder) / "agents.toml"
        where = "" if remote is None else f"remote = {json.dumps(remote.url)}\n"
        where += "" if remote is None else f"remote_options = {json.dumps(list(remote.options))}\n"
        config.write_text(f'[[agent]]\nname = "a"\ncommand = "python3"\nargs = {json.dumps(agent)}\n{where}')
        argv = [sys.executable, "-m", "acp_tui", "--config", str(config), "run", "--prompt", "hi"]
        acp_tui = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT)
        while len(processes()) < 2:
            time.sleep(0.01)
        acp_tui.send_signal(signal.SIGKILL)
        signalled = time.monotonic()
        acp_tui.wait()
        await_gone(processes)
        return time.monotonic() - signalled


def local_agents(token: str) -> Callable[[], list[int]]:
    """The scripted agents here whose command line holds `token` (the wrapper and its grandchild)."""

    def found() -> list[int]:
        pids = []
        for entry in os.scandir("/proc"):
            with contextlib.suppress(OSError):
                line = Path(entry.path, "cmdline").read_bytes()
                if entry.name.isdigit() and token.encode() in line and b"scripted_agent" in line:
                    pids.append(int(entry.name))
        return pids

    return found


async def cut(host: FarHost, netns: Any) -> float:
    config = AcpProviderConfig(
        command="python3",
        args=[host.agent("scripted_agent.py"), "forever=1", "wrapper=1"],
        remote=host.url,
        remote_options=host.options,
    )
    run = await AcpSubagentProvider(config).start(SubagentRequest(prompt="hi"))
    async for event in run.events():
        if isinstance(event, OutputDelta):
            break
    set_link(netns, "down")
    cut_at = time.monotonic()
    await asyncio.to_thread(await_gone, far_processes)
    took = time.monotonic() - cut_at
    await run.dispose()
    return took


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--ends", type=int, default=3, help="rounds of SIGKILL and link cut")
    args = parser.parse_args()
    header("remote: Enter to the first chunk over ssh on loopback against here; the far side's end")
    local = AcpProviderConfig(command=sys.executable, args=[SCRIPTED_AGENT, *OPTIONS])
    times: dict[str, list[float]] = {"local": [], "ssh": [], "ssh warm": []}
    ends: dict[str, list[float]] = {"SIGKILL, here": [], "SIGKILL, over ssh": [], "link cut, over ssh": []}
    with far_user_made(), sshd() as host:
        far = AcpProviderConfig(
            command="python3",
            args=[host.agent("scripted_agent.py"), *OPTIONS],
            remote=host.url,
            remote_options=host.options,
        )
        cases = [("local", cold, local), ("ssh", cold, far), ("ssh warm", warm, far)]
        for n in range(args.rounds):
            progress(f"first chunk, round {n + 1}/{args.rounds}")
            for name, case, config in cases[n % 3 :] + cases[: n % 3]:
                times[name].append(asyncio.run(case(config)))
        for n in range(args.ends):
            progress(f"ends, round {n + 1}/{args.ends}")
            token = f"text=bench-{secrets.token_hex(4)}"
            here = [SCRIPTED_AGENT, "forever=1", "wrapper=1", token]
            there = [host.agent("scripted_agent.py"), "forever=1", "wrapper=1"]
            ends["SIGKILL, here"].append(killed(here, None, local_agents(token)))
            ends["SIGKILL, over ssh"].append(killed(there, host, far_agents))
            with network_namespace() as netns, sshd(netns.address, netns.name) as cut_host:
                ends["link cut, over ssh"].append(asyncio.run(cut(cut_host, netns)))
    end_progress()
    print(
        table(
            ["", "median Enter -> first chunk", "runs"],
            [[k, f"{median(v):.3f} s", len(v)] for k, v in times.items()],
        )
    )
    print(f"ssh / local: {median(ratios(times['ssh'], times['local'])):.2f}x")
    print(f"ssh warm / local: {median(ratios(times['ssh warm'], times['local'])):.2f}x")
    print(
        table(
            ["", "median to the group's end", "max", "runs"],
            [[k, f"{median(v):.3f} s", f"{max(v):.3f} s", len(v)] for k, v in ends.items()],
        )
    )
    killed_ratio = median(ratios(ends["SIGKILL, over ssh"], ends["SIGKILL, here"]))
    print(f"SIGKILL over ssh / here: {killed_ratio:.2f}x")
    print(f"link cut / the contract's {CONTRACT:g} s: {max(ends['link cut, over ssh']) / CONTRACT:.2f} (max)")


if __name__ == "__main__":
    main()
