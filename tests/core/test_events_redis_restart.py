"""Round events survive a Redis restart: a failed group send is tried again on a fresh
connection, not dropped (issue 17). Runs against a redis-server of its own, restarted here."""

from __future__ import annotations

import asyncio
import shutil
import socket
import subprocess
from collections.abc import Iterator

import pytest
from channels.layers import channel_layers
from foolgame.channel_layer import RedisChannelLayer

from foolgame.core import events
from tests.waiting import port_open, wait_for, wait_for_async

pytestmark = pytest.mark.skipif(not shutil.which("redis-server"), reason="needs redis-server (apt-get install redis-server)")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class RedisServer:
    """A throwaway redis-server without persistence: a restart loses every key, as a real one may."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        self.process = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"], stdout=subprocess.DEVNULL
        )
        wait_for(lambda: port_open(self.port, timeout=0.2), what=f"redis-server to start on port {self.port}", seconds=10)

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            self.process.wait(timeout=10)
            self.process = None


@pytest.fixture
def redis_server(settings) -> Iterator[RedisServer]:
    server = RedisServer(free_port())
    server.start()
    settings.CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "foolgame.channel_layer.RedisChannelLayer",
            "CONFIG": {"hosts": [{"address": f"redis://127.0.0.1:{server.port}/0", "socket_timeout": 30}], "prefix": "fm2-test"},
        }
    }
    channel_layers.backends.clear()
    try:
        yield server
    finally:
        server.stop()
        channel_layers.backends.clear()


STOPPED: list[events._Publisher] = []
"""Stopped publishers stay referenced: their loop is left as it stood, never collected."""


@pytest.fixture
def publisher() -> Iterator[events._Publisher]:
    """A publisher of the test's own (not the process-wide one), stopped at the end."""
    publisher = events._Publisher()
    yield publisher
    publisher.loop.call_soon_threadsafe(publisher.loop.stop)
    publisher.thread.join(timeout=5)
    STOPPED.append(publisher)


async def listening(layer: RedisChannelLayer, group: str) -> str:
    channel = await layer.new_channel()
    await layer.group_add(group, channel)
    return channel


async def test_a_round_event_sent_after_redis_restarts_reaches_the_socket(redis_server, publisher) -> None:
    socket_side = RedisChannelLayer(hosts=[f"redis://127.0.0.1:{redis_server.port}/0"], prefix="fm2-test")
    channel = await listening(socket_side, "round-7")
    publisher.publish("round-7", {"type": "round.changed", "round": 7, "state": "ready"})
    assert (await asyncio.wait_for(socket_side.receive(channel), 5))["state"] == "ready"

    redis_server.stop()
    redis_server.start()
    # The socket side reconnects (a consumer whose read fails closes with 1013 and its
    # client opens a new socket, which joins the group again); the publisher's pooled
    # connection is dead: its pool replaces it (foolgame.channel_layer, issue 24), and a send
    # that fails anyway is tried again on a fresh connection (the next test).
    await socket_side.close_pools()
    channel = await listening(socket_side, "round-7")
    publisher.publish("round-7", {"type": "round.changed", "round": 7, "state": "playing"})
    assert (await asyncio.wait_for(socket_side.receive(channel), 10))["state"] == "playing"
    publisher.publish("round-7", {"type": "round.changed", "round": 7, "state": "voted"})
    assert (await asyncio.wait_for(socket_side.receive(channel), 5))["state"] == "voted"
    await socket_side.close_pools()


async def test_a_send_that_keeps_failing_is_logged_and_the_next_event_still_goes(redis_server, publisher, caplog, monkeypatch) -> None:
    monkeypatch.setattr(events, "SEND_RETRY_WAITS", (0.0, 0.05))
    socket_side = RedisChannelLayer(hosts=[f"redis://127.0.0.1:{redis_server.port}/0"], prefix="fm2-test")
    redis_server.stop()
    publisher.publish("round-8", {"type": "round.changed", "round": 8, "state": "ready"})
    await wait_for_async(lambda: any("after 3 tries" in r.getMessage() for r in caplog.records),
                         what="the publisher to send or give up", seconds=10)
    redis_server.start()
    channel = await listening(socket_side, "round-8")
    publisher.publish("round-8", {"type": "round.changed", "round": 8, "state": "playing"})
    assert (await asyncio.wait_for(socket_side.receive(channel), 10))["state"] == "playing"
    await socket_side.close_pools()
