"""Each WebSocket runs in an asyncio context of its own, where Django would build a cache
object of its own: the sockets' sessions (and leases) use the process's one instead."""

from __future__ import annotations

import asyncio
import contextvars

from django.test import override_settings

from foolgame.core.caches import shared_cache
from foolgame.sessions import SessionStore


async def test_the_sessions_of_many_sockets_share_one_cache_object() -> None:
    async def a_socket_opens() -> object:
        return SessionStore()._cache

    caches_seen = [await asyncio.create_task(a_socket_opens(), context=contextvars.Context()) for _ in range(3)]
    assert len({id(cache) for cache in caches_seen}) == 1
    assert caches_seen[0] is shared_cache()


def test_new_cache_settings_get_a_new_cache_object() -> None:
    before = shared_cache()
    with override_settings(CACHES={"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": "other"}}):
        assert shared_cache() is not before
        assert SessionStore()._cache is shared_cache()
    assert shared_cache() is not None
