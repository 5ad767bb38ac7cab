"""What the services send once their change is committed: socket updates and tasks. Every
app sends its side effects through here (``task_on_commit``, ``task_batched_on_commit``,
``group_send_on_commit``, ``hook_on_commit``), never with a hand-written ``transaction.on_commit``.

Consumers keep the round's deadline in memory to tick without a query a second; any
change made elsewhere (a REST reveal, a timeout, a vote) reaches them through the group.

The services run in Django's sync thread. Waiting there for a ``group_send`` (with
``async_to_sync``) would hold that thread, and every request queued behind it, until the
busy event loop got round to the send; waiting for the Celery broker costs a few
milliseconds more on every vote. With the Redis layer and a real broker both are therefore
handed to a publisher thread with its own loop, which sends each group's messages in order
(different groups' side by side), without the caller waiting. The in-memory layer lives on the server's own loop, so there the
send stays direct, and eager tasks (tests, the embedded default) run at once, as before.
A group send that fails is tried again on a fresh connection (the publisher's own layer,
rebuilt), a few times with a short wait: after Redis restarts, every pooled connection is
dead, and dropping the first event after it left a socket in READY with no ticks.
A task that cannot be sent is logged: the periodic sweeps (rounds every minute, quality
flags every hour) redo what a lost task would have done.

Tasks are sent by a thread of their own (Celery's publish is blocking work), so a socket
update never waits behind one. The per-vote follow-ups (the claims' quality flags, the
ratings) are *batched*: every call within BATCH_SECONDS joins one task run over all their ids
(``task_batched_on_commit``). A room's 20 votes on one pair then cost one quality refresh of
its two claims rather than 20, and 33 votes a second cost about 4 task runs a second instead
of 66, which measured half a core of the Celery worker on the rooms benchmark.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import threading
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timedelta
from typing import Any

from asgiref.sync import async_to_sync
from celery import Task
from channels import DEFAULT_CHANNEL_LAYER
from channels.layers import BaseChannelLayer, InMemoryChannelLayer, channel_layers, get_channel_layer
from django.db import transaction

logger = logging.getLogger(__name__)
SEND_RETRY_WAITS = (0.0, 0.2, 1.0)
"""Seconds to wait before each new try of a failed group send, each on a fresh connection."""
SENDS_AT_ONCE = 8
"""Group sends to different groups the publisher has in flight at once."""
BATCH_SECONDS = 0.5
"""How long a batched task's ids gather before its one run is sent."""



class _Publisher:
    """A daemon thread with an event loop that sends queued group messages in order, and a
    second thread that sends tasks in order (so a slow broker never holds a group message)."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.ready = threading.Event()
        self.tasks = ThreadPoolExecutor(max_workers=1, thread_name_prefix="fm2-tasks")
        self.batches: dict[tuple[str, datetime | None], tuple[Task, set[int]]] = {}
        self.thread = threading.Thread(target=self._run, name="fm2-round-events", daemon=True)
        self.thread.start()
        self.ready.wait()

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.queue: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()
        self.loop.create_task(self._drain())
        self.ready.set()
        self.loop.run_forever()

    async def _drain(self) -> None:
        """Send each group's messages in the order they came, and different groups' side by
        side (at most SENDS_AT_ONCE at a time): one room's answer never waits behind the
        sends to other groups (a vote's ``round.changed`` each, a question to 20 sockets),
        which queued it for up to 100 ms on the rooms benchmark when they went one by one."""
        # The publisher's own layer, so that rebuilding it after a failure closes only this
        # loop's connections, never those the server's consumers are reading from.
        self.layer: BaseChannelLayer = channel_layers.make_backend(DEFAULT_CHANNEL_LAYER)
        self.sending = asyncio.Semaphore(SENDS_AT_ONCE)
        self.last: dict[str, asyncio.Future[None]] = {}  # each group's latest send
        while True:
            group, message, skip = await self.queue.get()
            send = asyncio.ensure_future(self._send_after(self.last.get(group), group, message, skip))
            self.last[group] = send
            send.add_done_callback(lambda done, group=group: self.last.pop(group) if self.last.get(group) is done else None)

    async def _send_after(self, previous: asyncio.Future[None] | None, group: str, message: dict[str, Any], skip: str | None) -> None:
        if previous is not None:
            await asyncio.wait([previous])  # the group's earlier message first (a send never raises)
        async with self.sending:
            await self._group_send(group, message, skip)

    async def _group_send(self, group: str, message: dict[str, Any], skip: str | None = None) -> None:
        for attempt, wait in enumerate((*SEND_RETRY_WAITS, None)):
            layer = self.layer
            try:
                if skip is not None and getattr(layer, "group_send_skips", False):
                    await layer.group_send(group, message, skip=skip)
                else:
                    await layer.group_send(group, message)
                return
            except Exception as error:
                if wait is None:  # a lost update only delays a socket until its next action
                    logger.exception("could not send %s to %s after %d tries", message.get("type"), group, attempt + 1)
                    return
                logger.warning("sending %s to %s failed (%s); trying again on a fresh connection", message.get("type"), group, error)
                if self.layer is layer:  # the sends failing together rebuild it once
                    await self._fresh_layer()
                await asyncio.sleep(wait)

    async def _fresh_layer(self) -> None:
        stale, self.layer = self.layer, channel_layers.make_backend(DEFAULT_CHANNEL_LAYER)
        close = getattr(stale, "close_pools", None)
        if close is not None:
            try:
                await close()
            except Exception:  # its connections are dead anyway
                logger.debug("closing the stale channel layer failed", exc_info=True)

    def publish(self, group: str, message: dict[str, Any], skip: str | None = None) -> None:
        self.loop.call_soon_threadsafe(self.queue.put_nowait, (group, message, skip))

    def send_task(self, task: Task, args: list[Any], options: dict[str, Any]) -> None:
        self.tasks.submit(self._send_task, task, args, options)

    @staticmethod
    def _send_task(task: Task, args: list[Any], options: dict[str, Any]) -> None:
        try:
            task.apply_async(args=args, **options)
        except Exception:  # the periodic sweeps redo a lost task's work
            logger.exception("could not send task %s", task.name)

    def batch_task(self, task: Task, ids: list[int], eta: datetime | None = None) -> None:
        self.loop.call_soon_threadsafe(self._add_to_batch, task, ids, eta)

    def _add_to_batch(self, task: Task, ids: list[int], eta: datetime | None = None) -> None:
        """On the loop: the first ids of a batch start its clock; the run is sent when it ends.
        With ``eta``, a batch per whole second: the run is due at the end of the second in
        which the latest of its ids is due."""
        due = None if eta is None else eta.replace(microsecond=0) + timedelta(seconds=1 if eta.microsecond else 0)
        key = (task.name, due)
        pending = self.batches.get(key)
        if pending is None:
            self.batches[key] = (task, set(ids))
            self.loop.call_later(BATCH_SECONDS, self._send_batch, key)
        else:
            pending[1].update(ids)

    def _send_batch(self, key: tuple[str, datetime | None]) -> None:
        task, ids = self.batches.pop(key)
        self.send_task(task, [sorted(ids)], {} if key[1] is None else {"eta": key[1]})


_publisher: _Publisher | None = None
_publisher_lock = threading.Lock()


def _get_publisher() -> _Publisher:
    global _publisher
    with _publisher_lock:
        if _publisher is None:
            _publisher = _Publisher()
    return _publisher


def _publish(group: str, message: dict[str, Any], skip: str | None = None) -> None:
    layer = get_channel_layer()
    if layer is None:
        return
    if isinstance(layer, InMemoryChannelLayer):
        async_to_sync(layer.group_send)(group, message)  # to every member: nothing to save here
        return
    _get_publisher().publish(group, message, skip)


def task_runs_eagerly(task: Task) -> bool:
    """Whether ``apply_async`` runs the task at once, here: the Celery app's own setting,
    which the tests turn on even where Django's settings name a broker."""
    return bool(task.app.conf.task_always_eager)


def task_send(task: Task, *args: Any, **options: Any) -> None:
    """Send ``task(*args)`` now, outside any transaction, without waiting for the broker
    (the publisher's task thread); eager tasks run at once. For a socket's event loop."""
    if task_runs_eagerly(task):
        task.apply_async(args=list(args), **options)
    else:
        _get_publisher().send_task(task, list(args), options)


def task_on_commit(task: Task, *args: Any, **options: Any) -> None:
    """After the commit, send ``task(*args)`` (``options`` as for ``apply_async``, e.g. eta).
    Eager tasks run at once in this thread; others go through the publisher's task thread, so
    the caller does not wait for the broker."""
    if task_runs_eagerly(task):
        transaction.on_commit(lambda: task.apply_async(args=list(args), **options), robust=True)
    else:
        transaction.on_commit(lambda: _get_publisher().send_task(task, list(args), options))


_background: ThreadPoolExecutor | None = None
_background_lock = threading.Lock()


def _run_in_background(task: Task, args: list[Any]) -> None:
    """Run an eager task on the one background thread, never in the caller's."""
    global _background
    with _background_lock:
        if _background is None:
            _background = ThreadPoolExecutor(max_workers=1, thread_name_prefix="fm2-background")

    def run() -> None:
        from django.db import close_old_connections, connections

        close_old_connections()
        try:
            task.apply(args=args)  # eager: logs and keeps its own errors, as a worker would
        except Exception:
            logger.exception("background task %s failed", task.name)
        finally:
            connections.close_all()

    _background.submit(run)


def background_idle(timeout: float = 600.0) -> bool:
    """Wait until every background task queued so far has run: True, or False when
    ``timeout`` seconds passed first (tests and the shutdown of a command use it)."""
    from concurrent.futures import TimeoutError as FutureTimeout

    with _background_lock:
        executor = _background
    if executor is None:
        return True
    try:
        executor.submit(lambda: None).result(timeout=timeout)
    except FutureTimeout:
        return False
    return True


def task_in_background_on_commit(task: Task, *args: Any) -> None:
    """After the commit, have a long task (training a model) run where no request waits for
    it: sent to the worker like ``task_on_commit``; with eager tasks (the embedded default,
    which has no worker), on one background thread of this process instead of in the
    request. ``FM2_JOBS["BACKGROUND_THREAD"]`` False runs it at once, as other eager tasks
    (the tests, which want it done when the call returns)."""
    from django.conf import settings

    if task_runs_eagerly(task) and settings.FM2_JOBS.get("BACKGROUND_THREAD", True):
        transaction.on_commit(lambda: _run_in_background(task, list(args)), robust=True)
    else:
        task_on_commit(task, *args)


def task_batched_in_background_on_commit(task: Task, ids: Iterable[int]) -> None:
    """``task_batched_on_commit`` for a follow-up that runs a model: with eager tasks on the
    background thread (``task_in_background_on_commit``), never in the request."""
    if task_runs_eagerly(task):
        task_in_background_on_commit(task, [int(pk) for pk in ids])
    else:
        task_batched_on_commit(task, ids)


def task_batched_on_commit(task: Task, ids: Iterable[int], *, eta: datetime | None = None) -> None:
    """After the commit, have ``task(ids)`` run: eager tasks at once with these ids; others
    joined with every call's ids of the next BATCH_SECONDS (in this process) into one run
    over their sorted union. For idempotent follow-ups whose work is per id (recompute these
    claims' flags, rate these votes); a run lost with its process is redone by their sweeps.

    With ``eta``, the ids are joined with those due in the same whole second only, and their
    run is sent for the end of that second: for work that must not run early and may run up
    to a second late (a round's expiry: reads close an overdue round themselves)."""
    ids = [int(pk) for pk in ids]
    if task_runs_eagerly(task):
        transaction.on_commit(lambda: task.apply_async(args=[ids]), robust=True)
    else:
        transaction.on_commit(lambda: _get_publisher().batch_task(task, ids, eta))


def hook_on_commit(hook: Any, **kwargs: Any) -> None:
    """After the commit, send ``hook`` (a ``core.hooks.Hook``) with ``kwargs``, in this thread
    and in the context (``contextvars``) of this call, so a receiver sees what the caller had
    set when the change was made even when an outer transaction commits later. A receiver
    that raises is logged and the others still run (``robust``): the change it reacts to is
    committed, and the sweeps redo what a lost reaction would have done."""
    context = contextvars.copy_context()
    transaction.on_commit(lambda: context.run(hook.send, **kwargs), robust=True)


def group_send_on_commit(group: str, message: dict[str, Any], *, skip: str | None = None) -> None:
    """After the commit, send ``message`` to a channel-layer group without waiting for it
    (through the publisher thread with Redis; at once with the in-memory layer).

    ``skip``: a member channel that does not need the message (the socket whose own call made
    the change, and has its result already). The Redis layer leaves it out, and sends nothing
    when it was the group's only member: no message for that socket to read and drop. Other
    layers send to every member."""
    transaction.on_commit(lambda: _publish(group, message, skip))
