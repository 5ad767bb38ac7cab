"""Telling open sockets that a round changed, once the change is committed.

Consumers keep the round's deadline in memory to tick without a query a second; any
change made elsewhere (a REST reveal, a timeout, a vote) reaches them through the group.

The services run in Django's sync thread. Waiting there for a ``group_send`` (with
``async_to_sync``) would hold that thread, and every request queued behind it, until the
busy event loop got round to the send; with the Redis layer the messages are therefore
handed to a publisher thread with its own loop, which sends them one by one, in order,
without the caller waiting. The in-memory layer lives on the server's own loop, so there the
send stays direct.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from typing import Any

from asgiref.sync import async_to_sync
from channels.layers import InMemoryChannelLayer, get_channel_layer
from django.db import transaction

from foolgame.voting.models import Round

logger = logging.getLogger(__name__)


def round_group(round_id: int) -> str:
    return f"round-{round_id}"


class _Publisher:
    """A daemon thread with an event loop that sends queued group messages in order."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.ready = threading.Event()
        self.thread = threading.Thread(target=self._run, name="fm2-round-events", daemon=True)
        self.thread.start()
        self.ready.wait()

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.queue: asyncio.Queue[tuple[str, dict[str, Any]]] = asyncio.Queue()
        self.loop.create_task(self._drain())
        self.ready.set()
        self.loop.run_forever()

    async def _drain(self) -> None:
        layer = get_channel_layer()
        while True:
            group, message = await self.queue.get()
            try:
                await layer.group_send(group, message)
            except Exception:  # a lost update only delays a socket until its next action
                logger.exception("could not send %s to %s", message.get("type"), group)

    def publish(self, group: str, message: dict[str, Any]) -> None:
        self.loop.call_soon_threadsafe(self.queue.put_nowait, (group, message))


_publisher: _Publisher | None = None
_publisher_lock = threading.Lock()


def _publish(group: str, message: dict[str, Any]) -> None:
    global _publisher
    layer = get_channel_layer()
    if layer is None:
        return
    if isinstance(layer, InMemoryChannelLayer):
        async_to_sync(layer.group_send)(group, message)
        return
    with _publisher_lock:
        if _publisher is None:
            _publisher = _Publisher()
    _publisher.publish(group, message)


def round_changed_on_commit(round_: Round) -> None:
    """After the commit, tell the round's sockets its new state and deadline (what was
    committed), so they need not query the database to keep ticking."""
    message = {
        "type": "round.changed",
        "round": round_.pk,
        "state": round_.state,
        "deadline": round_.deadline.timestamp() if round_.deadline else None,
    }
    transaction.on_commit(lambda: _publish(round_group(round_.pk), message))
