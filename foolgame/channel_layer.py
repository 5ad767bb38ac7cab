"""The Redis channel layer, receiving a process's messages in one Redis round trip each.

channels-redis delivers a group message once per web process (every socket of a room on that
process shares one copy) and its receive loop takes the copies one at a time. Each took four
round trips: a script putting back messages a cancelled receive left in the backup key, a
BZPOPMIN, a ZADD to the backup key, then (in a task the next receive waits for) a ZPOPMIN
removing it. Under load each of those waits for the interpreter lock, which the web process's
database threads hold most of the time, so on the rooms benchmark a room's answer waited up to
80 ms in Redis behind two or three other rooms' answers and questions.

Here one script does it all when a message is waiting: remove from the backup the messages
already handed to their sockets (named exactly, so sending the same names twice is harmless),
put back any other, pop the next message into the backup and return it. Only an empty queue
falls back to the blocking BZPOPMIN, whose message needs no backup (see ``_brpop_with_clean``). The backup still holds a popped message
until it is handed over, so a receive cancelled in between loses nothing: the next receive
puts it back first. The backup key expires with the messages (``expiry``), so the last
message a stopped process handed over does not stay in Redis.

Its connection pools do not take part in Redis' maintenance notifications (a Redis Enterprise
and Cloud feature): with them on, redis-py 8.1's asyncio pool skips its check of a pooled
connection before handing it out (redis-py#4252, fixed in #4260, not yet released), so after
a Redis restart every dead connection left in the pool failed one command ("Connection closed
by server"): the first sockets opened after Redis returned were closed with 1013.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from channels_redis.core import RedisChannelLayer as _RedisChannelLayer
from channels_redis.utils import create_pool
from redis.asyncio import Connection, ConnectionPool
from redis.maint_notifications import MaintNotificationsConfig

logger = logging.getLogger(__name__)

POP_SCRIPT = """
for i = 2, #ARGV do
    redis.call('ZREM', KEYS[2], ARGV[i])
end
local backed_up = redis.call('ZRANGE', KEYS[2], 0, -1, 'WITHSCORES')
for i = #backed_up, 1, -2 do
    redis.call('ZADD', KEYS[1], backed_up[i], backed_up[i - 1])
end
redis.call('DEL', KEYS[2])
local popped = redis.call('ZPOPMIN', KEYS[1])
if #popped == 0 then
    return false
end
redis.call('ZADD', KEYS[2], popped[2], popped[1])
redis.call('EXPIRE', KEYS[2], ARGV[1])
return popped[1]
"""


GROUP_SEND_SCRIPT = """
local n = #KEYS
local now = tonumber(ARGV[2 * n + 1])
local expiry = tonumber(ARGV[2 * n + 2])
local over_capacity = 0
for i = 1, n do
    redis.call('ZREMRANGEBYSCORE', KEYS[i], 0, now - expiry)
    if redis.call('ZCOUNT', KEYS[i], '-inf', '+inf') < tonumber(ARGV[i + n]) then
        redis.call('ZADD', KEYS[i], now, ARGV[i])
        redis.call('EXPIRE', KEYS[i], expiry)
    else
        over_capacity = over_capacity + 1
    end
end
return over_capacity
"""


class _Connection(Connection):
    """redis-py's connection, writing a command without a task of its own. With a
    ``socket_timeout`` (the settings give one) redis-py sends every command through
    ``asyncio.wait_for``, which runs the write in a new task with a timer: most of the CPU a
    command costs the server's event loop. A write that the kernel takes whole (the socket's
    buffer was empty) has nothing to wait for; only a write left partly buffered waits for
    the buffer to drain, under the timeout, as redis-py does."""

    async def send_packed_command(self, command: Any, check_health: bool = True) -> None:
        writer = self._writer
        if not self.socket_timeout or writer is None or not self.is_connected or writer.transport.get_write_buffer_size():
            return await super().send_packed_command(command, check_health)
        if check_health:
            await self.check_health()
        if isinstance(command, str):
            command = command.encode()
        if isinstance(command, bytes):
            command = [command]
        try:
            writer.writelines(command)
        except BaseException:
            await self.disconnect(nowait=True)
            raise
        if writer.transport.get_write_buffer_size():  # the rest waits for Redis to read, timed
            await super().send_packed_command([], check_health=False)


class RedisChannelLayer(_RedisChannelLayer):
    """channels-redis's layer with the receive above, and a group send in two round trips
    instead of four: the group's expired members dropped and the rest read in one pipeline,
    then one script per Redis host that drops each channel's expired messages and adds the
    new one within capacity (channels-redis ran the first two and the expiry of messages as
    round trips of their own). Direct sends and group membership are unchanged.

    Relies on channels-redis 4's receive path: ``receive_single`` calls ``_brpop_with_clean``
    for a message and then, in a task that the next receive on that channel waits for (its
    ``receive_clean_locks``), ``_clean_receive_backup``, which here only notes the message as
    handed over for the next pop to remove."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._popped: dict[str, bytes] = {}  # channel key: the message popped, not yet handed over
        self._handed: dict[str, list[bytes]] = {}  # channel key: handed over, still in the backup

    def create_pool(self, index: int) -> ConnectionPool:
        """channels-redis' pool for the host, without maintenance notifications, so that the
        pool replaces a connection Redis closed (a restart) instead of handing it out; its
        connections write without a task per command (``_Connection``)."""
        host = {"maint_notifications_config": MaintNotificationsConfig(enabled=False), **self.hosts[index]}
        if str(host.get("address", "")).startswith("redis://"):  # TCP, not TLS or a Unix socket
            host.setdefault("connection_class", _Connection)
        return create_pool(host)

    async def _brpop_with_clean(self, index: int, channel: str, timeout: int) -> bytes | None:
        backup = self._backup_channel_name(channel)
        connection = self.connection(index)
        handed = self._handed.get(channel, [])
        member = await connection.eval(POP_SCRIPT, 2, channel, backup, int(self.expiry), *handed)
        self._handed.pop(channel, None)  # removed by the script (a cancelled call sends them again)
        if member is None:
            # Nothing waiting: block for the next message. It is not copied to the backup
            # (channels-redis did, a round trip per message): from BZPOPMIN's answer to the
            # message in its socket's buffer there is no await (``receive_single``), so no
            # receive can stop in between; a receive cancelled while BZPOPMIN waits loses
            # what Redis popped for it, backup or not.
            result = await connection.bzpopmin(channel, timeout=timeout)
            return None if result is None else result[1]
        self._popped[channel] = member
        return member

    async def _clean_receive_backup(self, index: int, channel: str) -> None:
        member = self._popped.pop(channel, None)
        if member is not None:
            self._handed.setdefault(channel, []).append(member)

    async def group_add(self, group: str, channel: str) -> None:
        """channels-redis' group add (the channel into the group's sorted set, the set's expiry
        renewed) in one round trip instead of two."""
        assert self.require_valid_group_name(group), "Group name not valid"
        assert self.require_valid_channel_name(channel), "Channel name not valid"
        key = self._group_key(group)
        async with self.connection(self.consistent_hash(group)).pipeline(transaction=False) as pipe:
            await pipe.zadd(key, {channel: time.time()}).expire(key, self.group_expiry).execute()

    group_send_skips = True
    """``group_send`` takes ``skip`` (``core.events.group_send_on_commit``)."""

    async def group_send(self, group: str, message: dict[str, Any], skip: str | None = None) -> None:
        """Send to every member of the group but ``skip``; nothing when no other is left."""
        assert self.require_valid_group_name(group), "Group name not valid"
        key = self._group_key(group)
        now = time.time()
        async with self.connection(self.consistent_hash(group)).pipeline(transaction=False) as pipe:
            _, members = await pipe.zremrangebyscore(key, min=0, max=int(now) - self.group_expiry).zrange(key, 0, -1).execute()
        channels = [channel for channel in (member.decode("utf8") for member in members) if channel != skip]
        if not channels:
            return
        by_connection, messages, capacities = self._map_channel_keys_to_connection(channels, message)
        for index, keys in by_connection.items():
            args = [messages[k] for k in keys] + [capacities[k] for k in keys] + [now, int(self.expiry)]
            over_capacity = await self.connection(index).eval(GROUP_SEND_SCRIPT, len(keys), *keys, *args)
            if over_capacity:
                logger.info("%s of %s channels over capacity in group %s", over_capacity, len(channels), group)
