"""One cache object per process for what every socket touches (its session, its lease), and
the one-holder lock of the long jobs (training a model)."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from django.conf import settings
from django.core.cache import cache, caches

_shared: dict[str, tuple[Any, Any]] = {}  # alias: (its settings, the cache object)
_shared_lock = threading.Lock()


def shared_cache(alias: str = "default") -> Any:
    """The process's one object for the cache ``alias``. Django keeps a cache object per
    asyncio context, and every WebSocket runs in one of its own, so each socket built a
    cache object (and its Redis client) to read its session and take its lease. Django's
    cache backends are safe to share between threads; a new one is made when the cache's
    settings change (a test's ``override_settings``)."""
    config = settings.CACHES[alias]
    shared = _shared.get(alias)
    if shared is None or shared[0] is not config:
        with _shared_lock:
            shared = _shared.get(alias)
            if shared is None or shared[0] is not config:
                shared = _shared[alias] = (config, caches.create_connection(alias))
    return shared[1]


@contextmanager
def held_lock(name: str, *, seconds: int) -> Iterator[bool]:
    """One holder across every process (an atomic ``add`` on the default cache: Redis when
    there are several workers). Yields whether this caller got it; a holder that dies keeps
    it only ``seconds``, and the release never drops a lock that expired and was taken since.

        with held_lock("fm2:giveaway:train", seconds=900) as mine:
            if mine:
                ...
    """
    token = uuid.uuid4().hex
    mine = bool(cache.add(name, token, timeout=seconds))
    try:
        yield mine
    finally:
        if mine and cache.get(name) == token:
            cache.delete(name)
