"""A test A2A agent, built with the A2A SDK's own server classes, served on 127.0.0.1.

Run as a program (`python agent_server.py`): it binds a free port, writes it on stdout, and serves
until it is ended. The agent card is at the SDK's well-known path and names a JSON-RPC interface of
protocol 1.0 and, with `--legacy`, only one of protocol 0.3 (the SDK's compatibility layer answers
`message/stream` and `tasks/cancel` there).

What the agent does is chosen by the first word of the prompt; the rest is split at `|`:

- `status A|B|C`: the answer as status messages (`working`), one per piece, then `completed`;
- `artifact A|B|C`: the answer as one artifact in chunks (`append`), then `completed`;
- `message A`: a single message, no task;
- `headers`: the request's `authorization` header, as an artifact (it should come back masked);
- `slow A`: `A` as an artifact, then nothing until the task is cancelled (or the server killed);
- `fail`, `reject`, `input`, `auth`: the task ends failed, rejected, input-required or auth-required,
  each with a message of the agent's.
"""

from __future__ import annotations

import argparse
import asyncio
import socket
import sys

import uvicorn
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentSkill,
    Part,
    Role,
    Task,
    TaskState,
    TaskStatus,
)
from a2a.utils import TransportProtocol
from starlette.applications import Starlette

RPC_PATH = "/rpc"


class TestAgent(AgentExecutor):
    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        assert context.message is not None and context.task_id and context.context_id
        if context.message.role != Role.ROLE_USER:  # a client must say it speaks for the user
            raise ValueError(f"a message from {Role.Name(context.message.role)}, not from the user")
        verb, _, rest = context.get_user_input().partition(" ")
        words = rest.split("|") if rest else []
        if verb == "message":
            reply = TaskUpdater(event_queue, context.task_id, context.context_id).new_agent_message(
                [Part(text=rest)]
            )
            await event_queue.enqueue_event(reply)
            return
        await event_queue.enqueue_event(
            Task(
                id=context.task_id,
                context_id=context.context_id,
                status=TaskStatus(state=TaskState.TASK_STATE_SUBMITTED),
                history=[context.message],
            )
        )
        task = TaskUpdater(event_queue, context.task_id, context.context_id)
        await task.start_work()
        said = task.new_agent_message
        if verb == "status":
            for word in words:
                await task.update_status(TaskState.TASK_STATE_WORKING, said([Part(text=word)]))
            await task.complete()
        elif verb in ("artifact", "slow", "headers"):
            if verb == "headers":
                words = [context.call_context.state["headers"].get("authorization", "none")]
            for number, word in enumerate(words):
                await task.add_artifact([Part(text=word)], artifact_id="answer", append=number > 0)
            if verb == "slow":
                await asyncio.Event().wait()  # until the task is cancelled
            await task.complete()
        elif verb == "fail":
            await task.failed(said([Part(text="the tool broke")]))
        elif verb == "reject":
            await task.reject(said([Part(text="not my job")]))
        elif verb == "input":
            await task.requires_input(said([Part(text="which file?")]))
        elif verb == "auth":
            await task.requires_auth(said([Part(text="log in first")]))
        else:
            await task.failed(said([Part(text=f"unknown verb {verb!r}")]))

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        assert context.task_id and context.context_id
        await TaskUpdater(event_queue, context.task_id, context.context_id).cancel()


def card(port: int, *, legacy: bool) -> AgentCard:
    return AgentCard(
        name="test agent",
        description="An A2A agent for acp-tui's tests.",
        version="1.2.3",
        capabilities=AgentCapabilities(streaming=True),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[
            AgentSkill(id="echo", name="Echo", description="Says words back.", tags=["test"]),
            AgentSkill(id="fail", name="Fail", description="Fails on purpose.", tags=["test"]),
        ],
        supported_interfaces=[
            AgentInterface(
                protocol_binding=TransportProtocol.JSONRPC,
                protocol_version="0.3" if legacy else "1.0",
                url=f"http://127.0.0.1:{port}{RPC_PATH}",
            )
        ],
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--legacy", action="store_true", help="speak A2A 0.3 only")
    legacy = parser.parse_args().legacy
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)  # connections wait in the backlog from the moment the port is said
    port = sock.getsockname()[1]
    handler = DefaultRequestHandler(
        agent_executor=TestAgent(), task_store=InMemoryTaskStore(), agent_card=card(port, legacy=legacy)
    )
    routes = [
        *create_agent_card_routes(card(port, legacy=legacy)),
        *create_jsonrpc_routes(handler, RPC_PATH, enable_v0_3_compat=legacy),
    ]
    server = uvicorn.Server(uvicorn.Config(Starlette(routes=routes), log_level="warning"))
    print(port, flush=True)
    sys.stdout.close()
    server.run(sockets=[sock])


if __name__ == "__main__":
    main()
