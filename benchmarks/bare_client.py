"""The reference: the least a Python ACP client can do, written as lean as a competent engineer would.

    python bare_client.py --prompt TEXT --agent 'COMMAND ARGS' [--agent ...] [--first-chunk [--stop]]

Spawn every agent first (plain asyncio, nothing else imported yet), import the SDK while the children
boot, then per agent: `initialize`, `session/new`, one prompt, print the answer; close stdin, reap
the child, exit normally. Permission requests are answered like acp-tui's `reject` policy. stderr
is inherited (nothing to drain). With --first-chunk it also prints `first-chunk <perf_counter>` the
moment the first answer chunk of any agent arrives (perf_counter is CLOCK_MONOTONIC on Linux, so
the benchmark can compare it with its own clock); with --stop it then kills its children (SIGKILL,
each reaped) and exits at once.
"""

import asyncio
import sys


async def main(commands: list[list[str]], prompt: str, first_chunk: bool, stop: bool) -> int:
    procs = [
        await asyncio.create_subprocess_exec(
            *argv, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE
        )
        for argv in commands
    ]
    import os
    import time

    import acp
    from acp.schema import (
        AllowedOutcome,
        ClientCapabilities,
        DeniedOutcome,
        Implementation,
        RequestPermissionResponse,
    )

    seen_first = False

    class Client:
        def __init__(self) -> None:
            self.chunks: list[str] = []

        async def session_update(self, session_id: str, update: object, **kwargs: object) -> None:
            nonlocal seen_first
            if getattr(update, "session_update", None) == "agent_message_chunk":
                text = getattr(update.content, "text", None)  # type: ignore[attr-defined]
                if text is not None:
                    if first_chunk and not seen_first:
                        seen_first = True
                        print(f"first-chunk {time.perf_counter()}", flush=True)
                        if stop:
                            for proc in procs:
                                proc.kill()
                            for proc in procs:
                                await proc.wait()
                            os._exit(0)
                    self.chunks.append(text)

        async def request_permission(self, session_id, tool_call, options, **kwargs):  # type: ignore[no-untyped-def]
            for option in options:
                if option.kind.startswith("reject"):
                    return RequestPermissionResponse(
                        outcome=AllowedOutcome(outcome="selected", option_id=option.option_id)
                    )
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))

    async def converse(proc: asyncio.subprocess.Process) -> str:
        client = Client()
        conn = acp.connect_to_agent(client, proc.stdin, proc.stdout)  # type: ignore[arg-type]
        await conn.initialize(
            protocol_version=acp.PROTOCOL_VERSION,
            client_capabilities=ClientCapabilities(),
            client_info=Implementation(name="bare", version="0"),
        )
        session = await conn.new_session(cwd=".", mcp_servers=[])
        response = await conn.prompt(session_id=session.session_id, prompt=[acp.text_block(prompt)])
        answer = "".join(client.chunks)
        print(f"{response.stop_reason}: {answer}", flush=True)
        assert proc.stdin is not None
        proc.stdin.close()
        await proc.wait()
        return response.stop_reason

    stops = await asyncio.gather(*(converse(p) for p in procs))
    return 0 if all(s == "end_turn" for s in stops) else 1


def parse(argv: list[str]) -> tuple[list[list[str]], str, bool, bool]:
    import shlex

    commands, prompt, first_chunk, stop = [], "hello", False, False
    args = iter(argv)
    for arg in args:
        if arg == "--agent":
            commands.append(shlex.split(next(args)))
        elif arg == "--prompt":
            prompt = next(args)
        elif arg == "--first-chunk":
            first_chunk = True
        elif arg == "--stop":
            stop = True
    return commands, prompt, first_chunk, stop


if __name__ == "__main__":
    sys.exit(asyncio.run(main(*parse(sys.argv[1:]))))
