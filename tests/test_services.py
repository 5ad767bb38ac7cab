"""The real Redis behind the channel layer (run with REDIS_URL, as CI's second pass does)."""

from __future__ import annotations

import asyncio
import contextvars
import os

import pytest
from channels.layers import get_channel_layer
from django.conf import settings
from django.db import connection

pytestmark = pytest.mark.services

needs_redis = pytest.mark.skipif(
    not settings.REDIS_URL and not os.environ.get("FM2_REQUIRE_SERVICES"),
    reason="REDIS_URL is not set (the embedded default has no Redis)",
)


@needs_redis
async def test_idle_receiver_survives_longer_than_the_redis_socket_default() -> None:
    """channels_redis#422: with redis-py 8's default 5 s socket timeout an idle receive dies
    with TimeoutError after ~5 s. A message sent after 7 s of silence must still arrive."""
    layer = get_channel_layer()
    assert type(layer).__name__ == "RedisChannelLayer"
    channel = await layer.new_channel()
    receiver = asyncio.ensure_future(layer.receive(channel))
    await asyncio.sleep(7)
    assert not receiver.done() or receiver.exception() is None, f"idle receive failed: {receiver.exception()!r}"
    await layer.send(channel, {"type": "ping", "n": 1})
    message = await asyncio.wait_for(receiver, timeout=5)
    assert message == {"type": "ping", "n": 1}


@needs_redis
async def test_group_send_reaches_every_member() -> None:
    layer = get_channel_layer()
    first, second = await layer.new_channel(), await layer.new_channel()
    await layer.group_add("fm2-test", first)
    await layer.group_add("fm2-test", second)
    await layer.group_send("fm2-test", {"type": "tick", "remaining": 170})
    assert await asyncio.wait_for(layer.receive(first), 5) == {"type": "tick", "remaining": 170}
    assert await asyncio.wait_for(layer.receive(second), 5) == {"type": "tick", "remaining": 170}
    await layer.group_discard("fm2-test", first)
    await layer.group_discard("fm2-test", second)


@needs_redis
async def test_group_memberships_expire_after_about_a_rounds_life_in_redis() -> None:
    """channels-redis keeps a membership for a day by default; a web process that dies
    without leaving its rounds' groups would leave them that long. The group's key in
    Redis carries the configured expiry (CHANNEL_GROUP_EXPIRY, 900 s)."""
    import redis.asyncio

    layer = get_channel_layer()
    channel = await layer.new_channel()
    await layer.group_add("fm2-expiry-test", channel)
    try:
        client = redis.asyncio.Redis.from_url(settings.REDIS_URL)
        ttl = await client.ttl(layer._group_key("fm2-expiry-test"))
        await client.aclose()
        assert settings.CHANNEL_GROUP_EXPIRY == 900
        assert 890 <= ttl <= 900
    finally:
        await layer.group_discard("fm2-expiry-test", channel)


@pytest.mark.skipif(not os.environ.get("DATABASE_URL") and not os.environ.get("FM2_REQUIRE_SERVICES"), reason="DATABASE_URL is not set")
@pytest.mark.django_db
def test_database_is_postgresql_when_configured() -> None:
    assert connection.vendor == "postgresql"


@needs_redis
def test_cache_is_redis_when_configured() -> None:
    from django.core.cache import caches

    cache = caches["default"]
    cache.set("fm2-test-key", {"a": 1}, 10)
    assert cache.get("fm2-test-key") == {"a": 1}
    assert type(cache).__name__ == "RedisCache"


def _redis_clients() -> int:
    import redis

    return int(redis.Redis.from_url(settings.REDIS_URL).info("clients")["connected_clients"])


@needs_redis
async def test_many_sockets_share_the_cache_connections() -> None:
    """Every WebSocket is an asyncio context of its own, and Django keeps a cache object per
    context: the session lookups of 100 sockets must not open 100 Redis connections."""
    from asgiref.sync import sync_to_async
    from django.core.cache import cache

    await sync_to_async(cache.set)("fm2-test-shared", 1, 30)
    before = await sync_to_async(_redis_clients)()

    async def socket_reads_its_session() -> object:
        return await sync_to_async(cache.get)("fm2-test-shared")

    # A server starts each connection in a context where no cache object exists yet.
    sockets = [asyncio.create_task(socket_reads_its_session(), context=contextvars.Context()) for _ in range(100)]
    assert await asyncio.gather(*sockets) == [1] * 100
    assert await sync_to_async(_redis_clients)() - before <= 5


@needs_redis
async def test_new_redis_connections_do_not_scan_the_installed_packages(monkeypatch) -> None:
    """redis-py reads its version from package metadata for every new connection unless it
    is given: the channel layer makes connections on the event loop, where a burst of them
    stalled every socket's ticks. The settings give it, for the layer and the cache."""
    import redis.utils
    from asgiref.sync import sync_to_async
    from foolgame.channel_layer import RedisChannelLayer
    from django.core.cache import caches

    def scan() -> str:
        raise AssertionError("a new Redis connection looked its version up in package metadata")

    monkeypatch.setattr(redis.utils, "get_lib_version", scan)
    layer = RedisChannelLayer(**settings.CHANNEL_LAYERS["default"]["CONFIG"])  # a new pool, new connections
    channel = await layer.new_channel()
    await layer.send(channel, {"type": "ping"})
    assert await asyncio.wait_for(layer.receive(channel), 5) == {"type": "ping"}
    await layer.close_pools()

    def fresh_cache_connection() -> object:
        cache = caches.create_connection("default")
        connection = cache._cache._get_connection_pool(write=True).make_connection()  # a new one
        connection.connect()
        connection.disconnect()
        return cache.get("fm2-test-anything")

    assert await sync_to_async(fresh_cache_connection)() is None
