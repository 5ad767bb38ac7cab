"""``core.sockets.run_eagerly``: a socket's tick is written at once when nothing makes it
wait, and finishes in a task, as before, when something does (the client's buffer full)."""

from __future__ import annotations

import asyncio

import pytest

from foolgame.core.sockets import run_eagerly


async def test_a_coroutine_that_never_waits_is_done_when_the_call_returns() -> None:
    sent = []

    async def send() -> None:
        sent.append("tick")

    assert run_eagerly(send()) is None
    assert sent == ["tick"]


async def test_a_coroutine_that_waits_goes_on_in_a_task_with_what_it_waited_for() -> None:
    writable = asyncio.Event()
    sent = []

    async def send() -> str:
        sent.append("started")
        await writable.wait()
        await asyncio.sleep(0)
        sent.append("written")
        return "done"

    task = run_eagerly(send())
    assert task is not None and sent == ["started"]
    await asyncio.sleep(0)  # the task waits too now
    assert sent == ["started"]
    writable.set()
    assert await asyncio.wait_for(task, 2) == "done"
    assert sent == ["started", "written"]


async def test_an_error_or_a_cancellation_reaches_the_coroutine_where_it_waits() -> None:
    loop = asyncio.get_running_loop()
    failing, outcomes = loop.create_future(), []

    async def send(future: asyncio.Future) -> None:
        try:
            await future
        except BaseException as error:
            outcomes.append(type(error).__name__)
            raise

    task = run_eagerly(send(failing))
    await asyncio.sleep(0)
    failing.set_exception(OSError("client gone"))
    with pytest.raises(OSError):
        await asyncio.wait_for(task, 2)
    task = run_eagerly(send(loop.create_future()))
    await asyncio.sleep(0)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert outcomes == ["OSError", "CancelledError"]
