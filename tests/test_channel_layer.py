"""The Redis channel layer's one-trip receive (``foolgame.channel_layer``), against a real
Redis: every socket of a group gets each message once and in order, a receive that stops
between popping a message and handing it over loses nothing, and nothing stays behind."""

from __future__ import annotations

import asyncio
import os
import uuid

import pytest

from foolgame.channel_layer import RedisChannelLayer
from tests.waiting import wait_for_async

REDIS_URL = os.environ.get("REDIS_URL")
pytestmark = pytest.mark.skipif(not REDIS_URL, reason="the channel layer is tested on Redis (set REDIS_URL)")


@pytest.fixture
async def layer():
    layer = RedisChannelLayer(hosts=[{"address": REDIS_URL}], prefix=f"fm2test-{uuid.uuid4().hex[:8]}", expiry=60)
    yield layer
    await layer.flush()
    await layer.close_pools()


async def receive_all(layer: RedisChannelLayer, channel: str, count: int) -> list[int]:
    return [(await asyncio.wait_for(layer.receive(channel), 10))["n"] for _ in range(count)]


async def test_every_socket_of_a_group_gets_each_message_once_in_order(layer) -> None:
    sockets = [await layer.new_channel() for _ in range(3)]
    for channel in sockets:
        await layer.group_add("room-ABC", channel)
    for n in range(40):
        await layer.group_send("room-ABC", {"type": "room.answer", "n": n})
    got = await asyncio.gather(*(receive_all(layer, channel, 40) for channel in sockets))
    assert got == [list(range(40))] * 3
    with pytest.raises(asyncio.TimeoutError):  # and no second copy of any
        await asyncio.wait_for(layer.receive(sockets[0]), 0.3)


async def test_a_group_send_leaves_out_the_channel_it_skips_and_sends_nothing_when_no_other_is_left(layer) -> None:
    """The socket whose own call changed its round is skipped (``group_send_on_commit``'s
    ``skip``): the others get the message, it does not, and a group of that socket alone gets
    nothing at all (no message is written for it)."""
    mine, other = await layer.new_channel(), await layer.new_channel()
    for channel in (mine, other):
        await layer.group_add("round-7", channel)
    await layer.group_send("round-7", {"type": "round.changed", "n": 1}, skip=mine)
    assert await receive_all(layer, other, 1) == [1]
    with pytest.raises(asyncio.TimeoutError):
        await asyncio.wait_for(layer.receive(mine), 0.3)
    await layer.group_discard("round-7", other)
    await layer.group_send("round-7", {"type": "round.changed", "n": 2}, skip=mine)
    connection = layer.connection(0)
    assert await connection.exists(layer.prefix + layer.non_local_name(mine)) == 0
    await layer.group_send("round-7", {"type": "round.changed", "n": 3})  # not skipped: it gets it
    assert await receive_all(layer, mine, 1) == [3]


async def test_a_message_popped_but_not_handed_over_is_received_again_and_only_once(layer) -> None:
    channel = await layer.new_channel()
    for n in range(3):
        await layer.send(channel, {"type": "x", "n": n})
    key = layer.prefix + layer.non_local_name(channel)
    # A receive cancelled after the pop, before the message reached its socket.
    assert await layer._brpop_with_clean(0, key, timeout=1) is not None
    assert await receive_all(layer, channel, 3) == [0, 1, 2]
    with pytest.raises(asyncio.TimeoutError):
        await asyncio.wait_for(layer.receive(channel), 0.3)


async def test_messages_handed_over_leave_no_backup_behind(layer) -> None:
    channel = await layer.new_channel()
    for n in range(5):
        await layer.send(channel, {"type": "x", "n": n})
    assert await receive_all(layer, channel, 5) == list(range(5))
    key = layer.prefix + layer.non_local_name(channel)
    backup = layer._backup_channel_name(key)
    connection = layer.connection(0)
    assert 0 < await connection.ttl(backup) <= 60, "the last one handed over expires with the messages"
    with pytest.raises(asyncio.TimeoutError):  # the next receive clears it before it waits
        await asyncio.wait_for(layer.receive(channel), 0.3)
    assert await connection.zcard(backup) == 0
    assert await connection.zcard(key) == 0


async def test_a_message_that_finds_its_receive_waiting_costs_no_backup(layer) -> None:
    """A receive blocked on an empty queue (BZPOPMIN) hands its message over with no await
    in between: it is not copied to the backup (a round trip per message) nor left there."""
    channel = await layer.new_channel()
    key = layer.prefix + layer.non_local_name(channel)
    connection = layer.connection(0)
    waiting = asyncio.ensure_future(layer.receive(channel))

    async def blocked() -> bool:
        return any(client.get("cmd") == "bzpopmin" for client in await connection.client_list())

    await wait_for_async(blocked, what="the receive to block in Redis (BZPOPMIN)")
    writes = []
    real_zadd = type(connection).zadd
    type(connection).zadd = lambda self, *a, **k: writes.append(a) or real_zadd(self, *a, **k)
    try:
        await layer.send(channel, {"type": "x", "n": 1})
        assert (await asyncio.wait_for(waiting, 10))["n"] == 1
    finally:
        type(connection).zadd = real_zadd
    assert [a for a in writes if a and layer._backup_channel_name(key) in map(str, a)] == []
    assert await connection.zcard(layer._backup_channel_name(key)) == 0
    with pytest.raises(asyncio.TimeoutError):  # and it comes once
        await asyncio.wait_for(layer.receive(channel), 0.3)


async def test_a_group_send_keeps_to_each_channels_capacity(layer) -> None:
    layer.capacity = 2
    channel = await layer.new_channel()
    await layer.group_add("room-CAP", channel)
    for n in range(4):
        await layer.group_send("room-CAP", {"type": "x", "n": n})
    assert await receive_all(layer, channel, 2) == [0, 1], "the ones past capacity are dropped, as channels-redis does"
    with pytest.raises(asyncio.TimeoutError):
        await asyncio.wait_for(layer.receive(channel), 0.3)


async def test_a_group_send_skips_expired_members_and_drops_expired_messages(layer) -> None:
    stale, fresh = await layer.new_channel(), await layer.new_channel()
    await layer.group_add("room-EXP", stale)
    await layer.group_send("room-EXP", {"type": "x", "n": 0})  # never read by stale: it expires
    layer.group_expiry, layer.expiry = 1, 1
    await asyncio.sleep(2.1)  # the time under test: Redis and the layer expire by the wall clock
    await layer.group_add("room-EXP", fresh)
    await layer.group_send("room-EXP", {"type": "x", "n": 1})
    connection = layer.connection(0)
    assert await connection.zrange(layer._group_key("room-EXP"), 0, -1) == [fresh.encode()]
    key = layer.prefix + layer.non_local_name(fresh)  # the process's key, which held message 0 too
    assert await connection.zcard(key) == 1, "the expired message went with the send"
    assert await receive_all(layer, fresh, 1) == [1]


async def test_commands_are_written_without_a_task_each(monkeypatch) -> None:
    """With a socket timeout (the settings give one) redis-py wrote each command through
    ``asyncio.wait_for``, a task and a timer per command; the layer's connections write at
    once when the socket takes it all, and still deliver every message."""
    import redis.asyncio.connection as connection_module

    layer = RedisChannelLayer(hosts=[{"address": REDIS_URL, "socket_timeout": 5}], prefix=f"fm2test-{uuid.uuid4().hex[:8]}", expiry=60)
    timed_writes = []
    wait_for = asyncio.wait_for

    def counting_wait_for(awaitable, timeout):
        if getattr(awaitable, "__name__", "") == "_send_packed_command":
            timed_writes.append(timeout)
        return wait_for(awaitable, timeout)

    monkeypatch.setattr(connection_module.asyncio, "wait_for", counting_wait_for)
    try:
        sockets = [await layer.new_channel() for _ in range(2)]
        for channel in sockets:
            await layer.group_add("room-XYZ", channel)
        for n in range(5):
            await layer.group_send("room-XYZ", {"type": "room.answer", "n": n})
        assert await asyncio.gather(*(receive_all(layer, channel, 5) for channel in sockets)) == [list(range(5))] * 2
        assert timed_writes == []
    finally:
        await layer.flush()
        await layer.close_pools()
