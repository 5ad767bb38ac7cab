"""Game sockets across a Redis outage (issue 24, item 8): a socket opened while Redis is
down is accepted and closed with 1013 (and a ``service_unavailable`` frame), as
docs/websocket.md says, rather than refused at the handshake with HTTP 403; and the first
socket opened after Redis returns is served. For the round socket and the room socket, with
real clients against the real server (uvicorn) whose channel layer and cache (the socket
leases, the sessions) are on a redis-server of this test's own, stopped and started here."""

from __future__ import annotations

import asyncio
import json
import shutil
from collections.abc import Callable, Iterator
from contextlib import ExitStack

import pytest
from channels.layers import channel_layers
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import ClientConnection
from websockets.sync.client import connect as ws_connect

from foolgame.channel_layer import RedisChannelLayer
from foolgame.rooms import services as rooms
from foolgame.voting import services as rounds
from tests.factories import UserFactory
from tests.rooms.conftest import claim_pool
from tests.voting.conftest import game  # noqa: F401 (a fixture)
from tests.core.test_events_redis_restart import RedisServer, free_port
from tests.voting.test_socket_edges import session_headers

pytestmark = [pytest.mark.services,
              pytest.mark.skipif(not shutil.which("redis-server"), reason="needs redis-server (apt-get install redis-server)")]

SOCKETS = 3  # open at once, each holding a Redis connection of the server's pool for its receive loop


@pytest.fixture
def redis_server(settings) -> Iterator[RedisServer]:
    """The server's channel layer and cache on a redis-server of the test's own. Requested
    before ``asgi_live_server``, which then builds its layer from these settings."""
    server = RedisServer(free_port())
    server.start()
    url = f"redis://127.0.0.1:{server.port}/0"
    settings.CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "foolgame.channel_layer.RedisChannelLayer",
            "CONFIG": {**settings.CHANNEL_LAYERS["default"].get("CONFIG", {}),
                       "hosts": [{"address": url, "socket_timeout": 30, "socket_connect_timeout": 5}], "prefix": "fm2-outage"},
        }
    }
    settings.CACHES = {
        "default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": url, "KEY_PREFIX": "fm2-outage",
                    "OPTIONS": {"pool_class": "foolgame.cache.SharedConnectionPool"}}
    }
    channel_layers.backends.clear()
    try:
        yield server
    finally:
        server.stop()
        channel_layers.backends.clear()


def served(ws: ClientConnection, first: Callable[[ClientConnection], dict]) -> dict:
    """The socket's first frame (``first`` asks for it if the server sends none unasked)."""
    frame = first(ws)
    assert frame["type"] != "error", frame
    return frame


def closed_1013(url: str, headers: dict[str, str]) -> tuple[str, int]:
    """The error frame's code and the close code of a socket opened now (a refusal at the
    handshake, e.g. HTTP 403, raises here)."""
    with ws_connect(url, additional_headers=headers, open_timeout=10) as ws:
        frame = json.loads(ws.recv(timeout=10))
        with pytest.raises(ConnectionClosed) as closed:
            ws.recv(timeout=10)
    return frame.get("code"), closed.value.rcvd.code if closed.value.rcvd else None


def kill_9(redis_server: RedisServer) -> None:
    """Kill Redis (-9): clients' connections are cut, not closed politely."""
    redis_server.process.kill()
    redis_server.process.wait()
    redis_server.process = None


def sockets_at_once(url: str, headers: dict[str, str], first: Callable[[ClientConnection], dict], n: int = SOCKETS) -> None:
    """``n`` sockets opened one after the other and held open together, each served."""
    with ExitStack() as stack:
        for _ in range(n):
            served(stack.enter_context(ws_connect(url, additional_headers=headers, open_timeout=10)), first)


def outage_round_trip(redis_server: RedisServer, url: str, headers: dict[str, str], first: Callable[[ClientConnection], dict]) -> None:
    sockets_at_once(url, headers, first)
    # Redis restarts between two sockets: the server's pooled connections to it are dead.
    kill_9(redis_server)
    redis_server.start()
    sockets_at_once(url, headers, first)
    # Redis goes under an open socket (closed with 1013, as before), stays down while another
    # socket opens (accepted, then closed with 1013), then returns.
    with ws_connect(url, additional_headers=headers, open_timeout=10) as held:
        served(held, first)
        kill_9(redis_server)
        with pytest.raises(ConnectionClosed) as closed:
            while True:
                held.recv(timeout=10)
        assert closed.value.rcvd is not None and closed.value.rcvd.code == 1013
    assert closed_1013(url, headers) == ("service_unavailable", 1013)
    redis_server.start()
    with ws_connect(url, additional_headers=headers, open_timeout=10) as ws:
        served(ws, first)


def ask_state(ws: ClientConnection) -> dict:
    ws.send(json.dumps({"type": "state"}))
    return json.loads(ws.recv(timeout=10))


def pushed(ws: ClientConnection) -> dict:
    return json.loads(ws.recv(timeout=10))


@pytest.mark.slow
def test_round_socket_while_redis_is_down_closes_1013_and_the_first_after_it_returns_plays(redis_server, asgi_live_server: str, game) -> None:
    dealt = rounds.round_create(player=game.voter)
    url = asgi_live_server.replace("http", "ws", 1) + f"/ws/rounds/{dealt.pk}/"
    outage_round_trip(redis_server, url, session_headers(asgi_live_server, game.voter), ask_state)


@pytest.mark.slow
def test_room_socket_while_redis_is_down_closes_1013_and_the_first_after_it_returns_plays(redis_server, asgi_live_server: str) -> None:
    claim_pool()
    host = UserFactory(username="hana")
    room = rooms.room_create(host=host, questions=3, host_plays=True)
    url = asgi_live_server.replace("http", "ws", 1) + f"/ws/rooms/{room.code}/"
    outage_round_trip(redis_server, url, session_headers(asgi_live_server, host), pushed)


async def test_the_channel_layer_replaces_connections_a_redis_restart_closed(redis_server) -> None:
    """What the first sockets after a restart ran into, on one pooled connection: the pool
    handed out the dead connection (redis-py 8.1, maintenance notifications on) and joining a
    group failed with "Connection closed by server"."""
    layer = RedisChannelLayer(hosts=[{"address": f"redis://127.0.0.1:{redis_server.port}/0", "socket_timeout": 30}], prefix="fm2-outage")
    await layer.group_add("round-1", await layer.new_channel())
    # In threads, so that this event loop runs meanwhile, as a server's does.
    await asyncio.to_thread(kill_9, redis_server)
    await asyncio.to_thread(redis_server.start)
    channel = await layer.new_channel()
    await layer.group_add("round-1", channel)
    await layer.group_send("round-1", {"type": "round.changed", "round": 1, "state": "playing"})
    assert (await asyncio.wait_for(layer.receive(channel), 5))["state"] == "playing"
    await layer.close_pools()
