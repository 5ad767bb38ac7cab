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
from django.core.cache.backends.redis import RedisCache as DjangoRedisCache
from django.core.cache.backends.redis import RedisCacheClient


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


class SharedClientRedisCacheClient(RedisCacheClient):
    """Django's Redis cache client with one ``redis.Redis`` per connection pool, not one per
    command: building a client fills its table of ~200 response callbacks, and Django's built
    one for every cache call (a session read, a lease), 7.5% of a web process's CPU under the
    REST bench. A ``redis.Redis`` is safe to share between threads: each command borrows a
    connection from the pool and gives it back."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._clients: dict[int, redis.Redis] = {}

    def get_client(self, key: Any = None, *, write: bool = False) -> redis.Redis:
        pool = self._get_connection_pool(write)
        client = self._clients.get(id(pool))
        if client is None or client.connection_pool is not pool:
            client = self._clients[id(pool)] = self._client(connection_pool=pool)
        return client


class RedisCache(DjangoRedisCache):
    """Django's Redis cache backend (``CACHES``) with ``SharedClientRedisCacheClient``."""

    def __init__(self, server: str, params: dict[str, Any]) -> None:
        super().__init__(server, params)
        self._class = SharedClientRedisCacheClient
