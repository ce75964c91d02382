"""Agents over ssh: Enter to the first answer chunk over ssh on loopback, against the same agent here,
side by side, and over ssh with a warm spare.

    sudo python benchmarks/remote.py [--rounds N]

Needs root (it makes an unprivileged user and starts Debian's sshd on 127.0.0.1, as the remote
tests do: tests/remote/support.py). The agent is tests/scripted_agent.py, a standard-library agent.
Each round runs the three cases in a rotating order. Timed: `start` (the Enter) to the first
`OutputDelta`; for the spare, from `take` (the spare was made, ssh connected, the agent started and
its session opened before). Reported: medians, and the ratios ssh / local and ssh warm / local.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path
from typing import Any

from _common import end_progress, header, median, progress, ratios, table

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from acp_tui import AcpProviderConfig, AcpSubagentProvider, SubagentRequest  # noqa: E402
from acp_tui.core.model import OutputDelta  # noqa: E402
from tests.helpers import SCRIPTED_AGENT  # noqa: E402
from tests.remote.support import sshd  # noqa: E402

OPTIONS = ("text=first chunk",)


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
    spare = await provider.prepare(cwd=config.cwd_for(None))
    await spare.ready.wait()
    pressed = time.monotonic()
    spare.take(SubagentRequest(prompt="hi"))
    return await first_chunk(spare, pressed)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    header("remote: Enter to the first chunk, over ssh on loopback against here")
    local = AcpProviderConfig(command=sys.executable, args=[SCRIPTED_AGENT, *OPTIONS])
    times: dict[str, list[float]] = {"local": [], "ssh": [], "ssh warm": []}
    with sshd() as host:
        far = AcpProviderConfig(
            command="python3", args=[host.agent, *OPTIONS], remote=host.url, remote_options=host.options
        )
        cases = [("local", cold, local), ("ssh", cold, far), ("ssh warm", warm, far)]
        for n in range(args.rounds):
            progress(f"round {n + 1}/{args.rounds}")
            for name, case, config in cases[n % 3 :] + cases[: n % 3]:
                times[name].append(asyncio.run(case(config)))
    end_progress()
    print(
        table(
            ["", "median Enter -> first chunk", "runs"],
            [[k, f"{median(v):.3f} s", len(v)] for k, v in times.items()],
        )
    )
    print(f"ssh / local: {median(ratios(times['ssh'], times['local'])):.2f}x")
    print(f"ssh warm / local: {median(ratios(times['ssh warm'], times['local'])):.2f}x")


if __name__ == "__main__":
    main()
