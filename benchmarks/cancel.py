"""Cancel: `dispose()` until the child's process group is gone, against the SDK's own teardown.

    python benchmarks/cancel.py [--pairs N] [--demo-stubborn]

Children (each mid-answer, streaming, when the clock starts):
- stdlib honours: echo_agent.py forever=1 (ends its turn `cancelled` on session/cancel, exits at EOF)
- demo honours:   the demo agent, persona `slow` (Python SDK; stops within one step on cancel)
- stdlib stubborn: echo_agent.py forever=1 on_cancel=ignore ignore_term=1 ignore_eof=1 (only SIGKILL)
- demo stubborn (with --demo-stubborn): the demo agent, persona `stubborn`

ours: `AcpSubagentProvider(AcpProviderConfig(..., cancel_grace=1.0, term_grace=0.5)).start(...)`,
wait for the first answer chunk, then time `await run.dispose()`; right after it returns, check that
no live process is left in the child's group (a leftover counts as a failure).
SDK:  `async with acp.spawn_agent_process(client, cmd, *args) as (conn, proc)`: initialize,
session/new, prompt; at the first chunk, time `await conn.cancel(...)` plus leaving the `async with`
(its teardown closes stdin, waits 2 s, SIGTERM, waits 2 s, SIGKILL); then check the pid is gone.

Targets: ours p95 < 150 ms for children that honour the cancel; <= cancel_grace + term_grace
+ 150 ms (1.65 s) for one that ignores session/cancel and SIGTERM.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import sys
import time

from _common import (
    ECHO_AGENT,
    PY,
    end_progress,
    group_alive,
    header,
    median,
    pct,
    pid_alive,
    progress,
    ratios,
    table,
    verdict,
    wait_no_marked_processes,
)

CANCEL_GRACE = 1.0
TERM_GRACE = 0.5
HONOURED_TARGET = 0.150
STUBBORN_TARGET = CANCEL_GRACE + TERM_GRACE + 0.150

SCENARIOS: dict[str, tuple[list[str], bool]] = {
    "stdlib honours": ([PY, ECHO_AGENT, "forever=1"], True),
    "demo honours (slow)": ([PY, "-m", "acp_tui.demo.agent", "--persona", "slow"], True),
    "stdlib stubborn": (
        [PY, ECHO_AGENT, "forever=1", "on_cancel=ignore", "ignore_term=1", "ignore_eof=1"],
        False,
    ),
}
DEMO_STUBBORN = ([PY, "-m", "acp_tui.demo.agent", "--persona", "stubborn", "--delay", "0.05"], False)


async def ours(argv: list[str], leftovers: list[str]) -> float:
    from acp_tui import AcpProviderConfig, AcpSubagentProvider, OutputDelta, SubagentRequest

    config = AcpProviderConfig(
        command=argv[0], args=argv[1:], cancel_grace=CANCEL_GRACE, term_grace=TERM_GRACE
    )
    run = await AcpSubagentProvider(config).start(SubagentRequest(prompt="go on"))
    first = asyncio.Event()

    async def consume() -> None:
        async for event in run.events():
            if isinstance(event, OutputDelta):
                first.set()

    reader = asyncio.ensure_future(consume())
    await asyncio.wait_for(first.wait(), 60)
    pgid = run.pid
    start = time.perf_counter()
    await run.dispose()
    elapsed = time.perf_counter() - start
    if pgid is not None and group_alive(pgid):
        leftovers.append(f"ours: group {pgid} alive after dispose()")
    await reader
    result = await run.result()
    if result.stop_reason != "aborted":
        leftovers.append(f"ours: ended {result.stop_reason}, not aborted")
    return elapsed


async def sdk(argv: list[str], leftovers: list[str]) -> float:
    import acp
    from acp.schema import ClientCapabilities, Implementation

    first = asyncio.Event()

    class Client:
        async def session_update(self, session_id: str, update: object, **kwargs: object) -> None:
            if getattr(update, "session_update", None) == "agent_message_chunk":
                first.set()

        async def request_permission(self, *args: object, **kwargs: object) -> None:
            raise NotImplementedError

    elapsed = float("nan")
    prompt: asyncio.Future[object] | None = None
    start = 0.0
    async with acp.spawn_agent_process(Client(), argv[0], *argv[1:]) as (conn, proc):
        await conn.initialize(
            protocol_version=acp.PROTOCOL_VERSION,
            client_capabilities=ClientCapabilities(),
            client_info=Implementation(name="bare", version="0"),
        )
        session = await conn.new_session(cwd=".", mcp_servers=[])
        prompt = asyncio.ensure_future(
            conn.prompt(session_id=session.session_id, prompt=[acp.text_block("go on")])
        )
        await asyncio.wait_for(first.wait(), 60)
        pid = proc.pid
        start = time.perf_counter()
        await conn.cancel(session_id=session.session_id)
    elapsed = time.perf_counter() - start
    if pid_alive(pid):
        leftovers.append(f"sdk: pid {pid} alive after the teardown")
    if prompt is not None:
        prompt.cancel()
        with contextlib.suppress(BaseException):
            await prompt
    return elapsed


async def measure(pairs: int, scenarios: dict[str, tuple[list[str], bool]]) -> int:
    import acp  # noqa: F401  (paid once, before anything is timed)

    rows = []
    leftovers: list[str] = []
    for name, (argv, honours) in scenarios.items():
        await ours(argv, leftovers)  # warm-up
        await sdk(argv, leftovers)
        xs: list[float] = []
        ys: list[float] = []
        for i in range(pairs):
            if i % 2 == 0:
                xs.append(await ours(argv, leftovers))
                ys.append(await sdk(argv, leftovers))
            else:
                ys.append(await sdk(argv, leftovers))
                xs.append(await ours(argv, leftovers))
            progress(f"{name} pair {i + 1}/{pairs}: ours {xs[-1] * 1000:.0f} ms, sdk {ys[-1] * 1000:.0f} ms")
        end_progress()
        target = HONOURED_TARGET if honours else STUBBORN_TARGET
        rows.append(
            [
                name,
                f"{median(xs) * 1000:.0f}",
                f"{pct(xs, 95) * 1000:.0f}",
                f"{median(ys) * 1000:.0f}",
                f"{pct(ys, 95) * 1000:.0f}",
                median(ratios(xs, ys)),
                f"p95 {'<' if honours else '<='} {target * 1000:.0f} ms",
                verdict(pct(xs, 95) < target if honours else pct(xs, 95) <= target),
            ]
        )
    print(
        table(
            [
                "child",
                "ours p50 ms",
                "ours p95 ms",
                "SDK p50 ms",
                "SDK p95 ms",
                "ours/SDK",
                "target",
                "verdict",
            ],
            rows,
        )
    )
    print(f"\n{pairs} pairs per child; cancel_grace {CANCEL_GRACE} s, term_grace {TERM_GRACE} s")
    for line in leftovers[:5]:
        print(f"failure: {line}")
    print(f"failures (a group alive after disposal, or not aborted): {len(leftovers)}")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--pairs", type=int, default=10, help="pairs per child (default 10)")
    parser.add_argument("--demo-stubborn", action="store_true", help="also the demo's stubborn persona")
    args = parser.parse_args()
    header("Cancel: dispose() until the process group is gone, vs the SDK's spawn_agent_process teardown")
    scenarios = dict(SCENARIOS)
    if args.demo_stubborn:
        scenarios["demo stubborn"] = DEMO_STUBBORN
    status = asyncio.run(measure(args.pairs, scenarios))
    left = wait_no_marked_processes()
    print(f"processes left: {len(left)}")
    return status


if __name__ == "__main__":
    sys.exit(main())
