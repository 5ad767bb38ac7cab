"""One cache object per process for what every socket touches (its session, its lease)."""

from __future__ import annotations

import threading
from typing import Any

from django.conf import settings
from django.core.cache import caches

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
