"""How many round sockets a player holds open, across all web processes.

Each open socket holds a lease (its channel name, with an expiry time) in one sorted set per
player in Redis, the cache's server; its process renews the leases of all its open sockets
together (``socket_leases_renew``, every third of the lease) and a clean disconnect drops
it. A process killed with sockets open leaves leases that simply expire, so nobody is locked
out for longer than SOCKET_LEASE_SECONDS. On the embedded default (locmem cache, one process)
the same bookkeeping lives in this process's memory, which is the right scope there.
Sync functions: the consumer calls them through sync_to_async.
"""

from __future__ import annotations

import threading
import time

from django.conf import settings
from django.core.cache.backends.redis import RedisCache

from foolgame.core.caches import shared_cache


def _lease_seconds() -> float:
    return float(settings.FM2_WS["SOCKET_LEASE_SECONDS"])


def _redis() -> RedisCache | None:
    backend = shared_cache()  # the process's, not one built in each socket's context
    return backend if isinstance(backend, RedisCache) else None


def _redis_key(backend: RedisCache, player_id: int) -> str:
    return backend.make_key(f"ws-sockets:{player_id}")


_local: dict[int, dict[str, float]] = {}
_local_lock = threading.Lock()


def socket_lease_take(*, player_id: int, channel: str) -> bool:
    """Take a lease for ``channel``; False (and nothing kept) when the player already holds
    MAX_SOCKETS_PER_PLAYER live ones."""
    cap = int(settings.FM2_WS["MAX_SOCKETS_PER_PLAYER"])
    now = time.time()
    expires = now + _lease_seconds()
    if (backend := _redis()) is not None:
        client = backend._cache.get_client(write=True)
        key = _redis_key(backend, player_id)
        pipe = client.pipeline(transaction=True)
        pipe.zremrangebyscore(key, "-inf", now)
        pipe.zadd(key, {channel: expires})
        pipe.zcard(key)
        pipe.expire(key, int(_lease_seconds()) + 1)
        held = pipe.execute()[2]
        if held > cap:
            client.zrem(key, channel)
            return False
        return True
    with _local_lock:
        leases = {c: t for c, t in _local.get(player_id, {}).items() if t > now}
        if len(leases) >= cap:
            _local[player_id] = leases
            return False
        leases[channel] = expires
        _local[player_id] = leases
        return True


def socket_leases_renew(*, leases: list[tuple[int, str]]) -> None:
    """Renew many sockets' leases at once, ``(player_id, channel)`` each: one Redis pipeline
    for all the sockets a process holds open, rather than one round trip per socket."""
    if not leases:
        return
    expires = time.time() + _lease_seconds()
    if (backend := _redis()) is not None:
        client = backend._cache.get_client(write=True)
        pipe = client.pipeline(transaction=False)
        for player_id, channel in leases:
            key = _redis_key(backend, player_id)
            pipe.zadd(key, {channel: expires}, xx=True)
            pipe.expire(key, int(_lease_seconds()) + 1)
        pipe.execute()
        return
    with _local_lock:
        for player_id, channel in leases:
            held = _local.get(player_id)
            if held is not None and channel in held:
                held[channel] = expires


def socket_lease_drop(*, player_id: int, channel: str) -> None:
    if (backend := _redis()) is not None:
        backend._cache.get_client(write=True).zrem(_redis_key(backend, player_id), channel)
        return
    with _local_lock:
        leases = _local.get(player_id)
        if leases is not None:
            leases.pop(channel, None)
            if not leases:
                _local.pop(player_id, None)

