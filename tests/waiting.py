"""Waiting for a condition, never for a fixed time: a sleep that stands in for "the server is
up" or "the worker got into the export" is a flaky test on a loaded machine, and a slow one
on an idle machine.

``wait_for`` polls a condition until it holds (and returns what it returned), or fails the
test naming what it waited for; ``wait_for_async`` is the same inside an event loop (the
condition may be a coroutine function). A browser test passes ``pause`` so that Playwright
keeps dispatching the page's events while it waits (``pause=playwright_pause(page)``).
"""

from __future__ import annotations

import asyncio
import inspect
import socket
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

T = TypeVar("T")


def wait_for(
    condition: Callable[[], T],
    *,
    what: str,
    seconds: float = 5.0,
    every: float = 0.05,
    explain: Callable[[], str] | None = None,
    pause: Callable[[float], Any] = time.sleep,
) -> T:
    """Call ``condition()`` every ``every`` seconds until it returns something true, and return
    that; after ``seconds``, fail with ``what`` (and ``explain()``, e.g. the tail of a log)."""
    deadline = time.monotonic() + seconds
    while not (value := condition()):
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up after {seconds} s waiting for {what}" + (f"\n{explain()}" if explain else ""))
        pause(every)
    return value


async def wait_for_async(
    condition: Callable[[], T | Awaitable[T]],
    *,
    what: str,
    seconds: float = 5.0,
    every: float = 0.05,
) -> T:
    """``wait_for`` in an event loop: the loop runs while it waits, and ``condition`` may be a
    coroutine function (awaited each time)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    while True:
        value = condition()
        if inspect.isawaitable(value):
            value = await value
        if value:
            return value  # type: ignore[return-value]
        if loop.time() > deadline:
            raise AssertionError(f"gave up after {seconds} s waiting for {what} (last: {value!r})")
        await asyncio.sleep(every)


def playwright_pause(page: Any) -> Callable[[float], None]:
    """A pause that lets Playwright's sync API dispatch the page's events (``time.sleep`` would
    hold them back until the next call into Playwright)."""
    return lambda seconds: page.wait_for_timeout(seconds * 1000)


def port_open(port: int, *, host: str = "127.0.0.1", timeout: float = 0.5) -> bool:
    """Whether something accepts connections on ``port`` (a server that has started)."""
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False
