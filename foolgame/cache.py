"""One Redis connection pool per process for Django's cache.

Django's cache handler keeps one cache object per asyncio context, and every Redis cache
object opens its own connection pool. Under ASGI each WebSocket runs in a context of its
own, so each socket's session lookup opened a Redis connection of its own (TCP connect,
HELLO, redis-py's client-info handshake: about 4 ms of the server's one ORM thread) and held
it for the socket's life: 328 Redis connections for 300 sockets in bench/bench_rounds_ws.py.
The cache backend's ``pool_class`` option names this class, so every cache object of a
process draws on one pool per URL and options.

``foolgame.core.caches.shared_cache`` goes further for the caches a socket touches (its
session, its lease): one cache object per process, not one built per socket.
"""

from __future__ import annotations

import threading
from typing import Any

import redis

class SharedConnectionPool(redis.ConnectionPool):
    _pools: dict[tuple[str, str], redis.ConnectionPool] = {}
    _lock = threading.Lock()

    @classmethod
    def from_url(cls, url: str, **kwargs: Any) -> redis.ConnectionPool:  # type: ignore[override]
        """The process's pool for ``url`` and ``kwargs``, made on first use. redis-py's pools
        are thread-safe and reset themselves in a forked child (a Celery worker's)."""
        key = (url, repr(sorted(kwargs.items(), key=lambda item: item[0])))
        with cls._lock:
            pool = cls._pools.get(key)
            if pool is None:
                pool = cls._pools[key] = super().from_url(url, **kwargs)
        return pool
