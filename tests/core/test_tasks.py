"""The session layer's task group (`core.tasks.TaskHost`): started from plain code, joined at close."""

from __future__ import annotations

import asyncio

import pytest

from acp_tui.core.tasks import TaskHost


async def test_tasks_started_from_plain_code_are_joined_at_close() -> None:
    host = TaskHost("test")
    done: list[int] = []
    gate = asyncio.Event()

    async def work(number: int) -> None:
        await gate.wait()
        done.append(number)

    for number in range(3):
        host.start_soon(work(number))  # plain code: nothing awaits the start
    closing = asyncio.ensure_future(host.aclose())
    await asyncio.sleep(0)
    assert not closing.done()  # it waits for its tasks
    gate.set()
    await closing
    assert sorted(done) == [0, 1, 2]


async def test_a_failing_task_is_logged_never_cancelling_others(caplog: pytest.LogCaptureFixture) -> None:
    host = TaskHost("test")
    finished = asyncio.Event()

    async def fails() -> None:
        raise ValueError("its own")

    async def goes_on() -> None:
        await asyncio.sleep(0)
        finished.set()

    host.start_soon(fails())
    host.start_soon(goes_on())
    await host.aclose()
    assert finished.is_set()
    assert "a task of test failed" in caplog.text


async def test_nothing_starts_once_closed() -> None:
    host = TaskHost("test")
    ran = []

    async def work() -> None:
        ran.append(1)

    host.start_soon(work())
    await host.aclose()
    host.start_soon(work())  # refused, and closed (no "never awaited" warning)
    await asyncio.sleep(0)
    assert ran == [1]
