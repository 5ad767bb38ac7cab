"""The round socket's edges: bad frames never kill it, a player holds a few sockets at most,
refusals reach real clients with their close codes, frames over the limit are refused by the
server itself, and the origin check compares scheme, host and port."""

from __future__ import annotations

import asyncio
import json
import struct
import time
from pathlib import Path
from types import SimpleNamespace

import pytest
import redis.exceptions
from channels.db import database_sync_to_async
from channels.layers import get_channel_layer
from channels.routing import URLRouter
from channels.testing import WebsocketCommunicator
from django.core.cache import caches
from django.core.cache.backends.redis import RedisCache
from django.db import OperationalError

from foolgame.routing import websocket_urlpatterns
from foolgame.security import origin_allowed
from foolgame.serving import uvicorn_flags
from foolgame.core import socket_leases
from foolgame.voting import services
from foolgame.voting.models import ClueReveal, Report, Round, Vote

router = URLRouter(websocket_urlpatterns)
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def no_leases_left():
    """Leases are keyed by player id, which a fresh test database hands out again."""
    def clear() -> None:
        socket_leases._local.clear()
        backend = caches["default"]
        if isinstance(backend, RedisCache):
            client = backend._cache.get_client(write=True)
            for key in client.scan_iter(match=backend.make_key("ws-sockets:*")):
                client.delete(key)

    clear()
    yield
    clear()


@pytest.fixture
def dealt(game):
    return services.round_create(player=game.voter)


async def connect(round_id: int, user) -> WebsocketCommunicator:
    communicator = WebsocketCommunicator(router, f"/ws/rounds/{round_id}/")
    communicator.scope["user"] = user
    connected, code = await communicator.connect()
    assert connected, code
    return communicator


async def next_frame(communicator: WebsocketCommunicator, *types: str) -> dict:
    while True:
        message = json.loads(await communicator.receive_from(timeout=3))
        if message["type"] in types:
            return message
        assert message["type"] == "tick", message


# --- bad frames -------------------------------------------------------------------------------

@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(
    "raw, code",
    [
        ('{"type": ["start"]}', "unknown_type"),
        ('{"type": {}}', "unknown_type"),
        ('{"type": null}', "unknown_type"),
        ("[" * 2000 + "]" * 2000, "too_deep"),
        ('{"type": "reveal", "claim": ' + "[" * 1500 + "]" * 1500 + "}", "too_deep"),
        ('{"type": "reveal", "claim": 1e400}', "bad_number"),
        ('{"type": "reveal", "claim": NaN}', "bad_number"),
        ('{"type": "vote", "false_claim": -Infinity}', "bad_number"),
        ('{"type": "reveal", "claim": ' + "9" * 4000 + "}", "invalid_claim"),
        ('{"type": "reveal", "claim": true}', "invalid_claim"),
        ('{"type": "reveal", "claim": [0]}', "invalid_claim"),
        ('{"type": "report", "claim": 0, "reason": ["wrong"]}', "invalid_reason"),
        ('{"type": "report", "claim": 0, "reason": "other", "note": {"a": 1}}', "invalid_note"),
        ('{"type": "report", "claim": 0, "reason": "other", "note": 5}', "invalid_note"),
    ],
)
async def test_bad_frame_gets_an_error_frame_and_the_socket_stays_usable(game, dealt, fake_clock, raw: str, code: str) -> None:
    ws = await connect(dealt.pk, game.voter)
    await ws.send_json_to({"type": "start"})
    await next_frame(ws, "state")
    await ws.send_to(text_data=raw)
    error = await next_frame(ws, "error")
    assert error["code"] == code and error["message"]
    counts = await database_sync_to_async(lambda: (Vote.objects.count(), ClueReveal.objects.count(), Report.objects.count()))()
    assert counts == (0, 0, 0)
    await ws.send_json_to({"type": "reveal", "claim": 0})
    assert (await next_frame(ws, "clue", "error"))["type"] == "clue"
    await ws.disconnect()


@pytest.mark.django_db(transaction=True)
async def test_unexpected_failure_in_a_handler_gets_server_error_and_a_log_line(game, dealt, fake_clock, monkeypatch, caplog) -> None:
    def broken(**kwargs):
        raise RuntimeError("boom")

    ws = await connect(dealt.pk, game.voter)
    monkeypatch.setattr(services, "round_get_state", broken)
    await ws.send_json_to({"type": "state"})
    error = await next_frame(ws, "error")
    assert error["code"] == "server_error" and "boom" not in error["message"]
    assert any("frame failed" in r.getMessage() and r.exc_info for r in caplog.records)
    monkeypatch.undo()
    await ws.send_json_to({"type": "start"})
    assert (await next_frame(ws, "state"))["status"] == "playing"
    await ws.disconnect()


@pytest.mark.django_db(transaction=True)
async def test_database_down_during_a_frame_gets_service_unavailable_and_the_socket_stays(game, dealt, fake_clock, monkeypatch) -> None:
    def down(**kwargs):
        raise OperationalError("connection to server at 127.0.0.1 failed: Connection refused")

    ws = await connect(dealt.pk, game.voter)
    monkeypatch.setattr(services, "round_start", down)
    await ws.send_json_to({"type": "start"})
    error = await next_frame(ws, "error")
    assert error["code"] == "service_unavailable" and "127.0.0.1" not in error["message"]
    monkeypatch.undo()
    await ws.send_json_to({"type": "start"})
    assert (await next_frame(ws, "state"))["status"] == "playing"
    await ws.disconnect()


@pytest.mark.django_db(transaction=True)
async def test_channel_layer_redis_dying_under_a_socket_closes_it_with_1013_not_a_crash(game, dealt, fake_clock, monkeypatch, caplog,
                                                                                     settings) -> None:
    settings.FM2_WS = {**settings.FM2_WS, "MAX_SOCKETS_PER_PLAYER": 1}
    layer_class = type(get_channel_layer())
    real_receive = layer_class.receive
    dying = asyncio.Event()

    async def receive(self, channel):
        if dying.is_set():
            raise redis.exceptions.ConnectionError("Connection closed by server.")
        waiting = asyncio.ensure_future(real_receive(self, channel))
        died = asyncio.ensure_future(dying.wait())
        await asyncio.wait({waiting, died}, return_when=asyncio.FIRST_COMPLETED)
        if waiting.done():
            died.cancel()
            return waiting.result()
        waiting.cancel()
        raise redis.exceptions.ConnectionError("Connection closed by server.")

    monkeypatch.setattr(layer_class, "receive", receive)
    ws = await connect(dealt.pk, game.voter)
    await ws.send_json_to({"type": "start"})
    await next_frame(ws, "state")
    dying.set()
    error = await next_frame(ws, "error")
    closed = await ws.receive_output(timeout=3)
    assert error["code"] == "service_unavailable"
    assert closed == {"type": "websocket.close", "code": 1013}
    assert any("down under round" in r.getMessage() and not r.exc_info for r in caplog.records)
    monkeypatch.undo()
    # The lease went back: the player's one allowed socket opens and plays again.
    again = await connect(dealt.pk, game.voter)
    await again.send_json_to({"type": "state"})
    assert (await next_frame(again, "state", "error"))["type"] == "state"
    await again.disconnect()


# --- sockets per player ----------------------------------------------------------------------

async def refused_with(round_id: int, user) -> int:
    communicator = WebsocketCommunicator(router, f"/ws/rounds/{round_id}/")
    communicator.scope["user"] = user
    connected, _ = await communicator.connect()
    assert connected
    error = json.loads(await communicator.receive_from(timeout=3))
    closed = await communicator.receive_output(timeout=3)
    assert error["type"] == "error"
    return closed["code"]


@pytest.mark.django_db(transaction=True)
async def test_a_player_holds_at_most_the_cap_of_open_sockets(game, dealt, settings) -> None:
    settings.FM2_WS = {**settings.FM2_WS, "MAX_SOCKETS_PER_PLAYER": 3}
    sockets = [await connect(dealt.pk, game.voter) for _ in range(3)]
    assert await refused_with(dealt.pk, game.voter) == 4429
    await sockets.pop().disconnect()
    sockets.append(await connect(dealt.pk, game.voter))  # a closed socket frees its slot
    assert await refused_with(dealt.pk, game.voter) == 4429
    for ws in sockets:
        await ws.disconnect()


@pytest.mark.django_db(transaction=True)
async def test_sockets_of_a_killed_process_free_their_slots_when_their_leases_expire(game, dealt, settings, monkeypatch) -> None:
    settings.FM2_WS = {**settings.FM2_WS, "MAX_SOCKETS_PER_PLAYER": 2, "SOCKET_LEASE_SECONDS": 1}
    # Two sockets of a process that died: leases taken, never dropped.
    for name in ("dead-1", "dead-2"):
        assert socket_leases.socket_lease_take(player_id=game.voter.pk, channel=name)
    assert await refused_with(dealt.pk, game.voter) == 4429
    # The leases' clock runs past their expiry (leases are times compared with it: no wait).
    monkeypatch.setattr(socket_leases, "time", SimpleNamespace(time=lambda: time.time() + 1.2))
    ws = await connect(dealt.pk, game.voter)
    await ws.disconnect()


@pytest.mark.django_db(transaction=True)
async def test_an_open_socket_keeps_its_slot_past_its_lease_time(game, dealt, settings) -> None:
    # The process renews its sockets' leases together, every third of their life: a socket
    # open for longer than its lease still holds its slot, and gives it back on closing.
    settings.FM2_WS = {**settings.FM2_WS, "MAX_SOCKETS_PER_PLAYER": 1, "SOCKET_LEASE_SECONDS": 1}
    ws = await connect(dealt.pk, game.voter)
    await asyncio.sleep(2.5)  # the time under test: past the lease, while the loop's timer renews it
    assert await refused_with(dealt.pk, game.voter) == 4429
    await ws.disconnect()
    ws = await connect(dealt.pk, game.voter)
    await ws.disconnect()


# --- the origin check --------------------------------------------------------------------------

def handshake(origin: str | None, host: str = "localhost:8000", scheme: str = "ws") -> dict:
    headers = [(b"host", host.encode())]
    if origin is not None:
        headers.append((b"origin", origin.encode()))
    return {"type": "websocket", "scheme": scheme, "headers": headers}


@pytest.mark.parametrize(
    "origin, host, scheme, allowed",
    [
        ("http://localhost:8000", "localhost:8000", "ws", True),
        ("http://LOCALHOST:8000", "localhost:8000", "ws", True),
        ("http://localhost", "localhost", "ws", True),
        ("http://localhost:80", "localhost", "ws", True),
        ("https://localhost", "localhost", "wss", True),
        ("http://[::1]:8000", "[::1]:8000", "ws", True),
        ("http://[::1]:8001", "[::1]:8000", "ws", False),
        ("http://localhost:9999", "localhost:8000", "ws", False),
        ("https://localhost:8000", "localhost:8000", "ws", False),
        ("http://localhost", "localhost", "wss", False),
        ("http://127.0.0.1:8000", "localhost:8000", "ws", False),
        ("http://127.0.0.1.evil:8000", "127.0.0.1:8000", "ws", False),
        ("http://localhost.evil.example:8000", "localhost:8000", "ws", False),
        ("http://evil.example", "evil.example", "ws", False),  # host not in ALLOWED_HOSTS
        ("null", "localhost:8000", "ws", False),
        ("file://", "localhost:8000", "ws", False),
        ("http://user@localhost:8000", "localhost:8000", "ws", False),
        (None, "localhost:8000", "ws", False),
    ],
)
def test_origin_is_accepted_only_with_the_servers_scheme_host_and_port(settings, origin, host, scheme, allowed) -> None:
    settings.ALLOWED_HOSTS = ["127.0.0.1", "localhost", "[::1]"]
    settings.CSRF_TRUSTED_ORIGINS = []
    assert origin_allowed(handshake(origin, host, scheme)) is allowed


@pytest.mark.parametrize(
    "origin, allowed",
    [
        ("https://app.example.org", True),
        ("https://play.example.org", True),
        ("http://app.example.org", False),
        ("https://app.example.org:8443", False),
        ("https://evilexample.org", False),
    ],
)
def test_csrf_trusted_origins_are_accepted_too(settings, origin, allowed) -> None:
    settings.ALLOWED_HOSTS = ["api.example.org"]
    settings.CSRF_TRUSTED_ORIGINS = ["https://app.example.org", "https://*.example.org"]
    assert origin_allowed(handshake(origin, "api.example.org", "wss")) is allowed


# --- real clients against real uvicorn ---------------------------------------------------------

def session_headers(base: str, user=None) -> dict[str, str]:
    from django.test import Client

    headers = {"Origin": base}
    if user is not None:
        client = Client()
        client.force_login(user)
        headers["Cookie"] = f"sessionid={client.cookies['sessionid'].value}"
    return headers


def closed_with(url: str, headers: dict[str, str]) -> tuple[str, int]:
    from websockets.exceptions import ConnectionClosed
    from websockets.sync.client import connect as ws_connect

    with ws_connect(url, additional_headers=headers) as ws:
        error = json.loads(ws.recv(timeout=10))
        with pytest.raises(ConnectionClosed) as closed:
            ws.recv(timeout=10)
    return error["code"], closed.value.rcvd.code


@pytest.mark.slow
def test_real_clients_receive_the_documented_close_codes(asgi_live_server: str, game) -> None:
    dealt = services.round_create(player=game.voter)
    ws_base = asgi_live_server.replace("http", "ws", 1)
    url = f"{ws_base}/ws/rounds/{dealt.pk}/"
    assert closed_with(url, session_headers(asgi_live_server)) == ("not_authenticated", 4401)
    assert closed_with(url, session_headers(asgi_live_server, game.true_author)) == ("not_your_round", 4403)
    assert closed_with(f"{ws_base}/ws/rounds/999999/", session_headers(asgi_live_server, game.voter)) == ("not_found", 4404)


@pytest.mark.slow
def test_real_client_from_another_origin_is_refused_at_the_handshake(asgi_live_server: str, game) -> None:
    from websockets.exceptions import InvalidStatus
    from websockets.sync.client import connect as ws_connect

    dealt = services.round_create(player=game.voter)
    port = int(asgi_live_server.rsplit(":", 1)[1])
    headers = session_headers(asgi_live_server, game.voter)
    headers["Origin"] = f"http://127.0.0.1:{port + 1}"
    with pytest.raises(InvalidStatus) as refused:
        ws_connect(f"ws://127.0.0.1:{port}/ws/rounds/{dealt.pk}/", additional_headers=headers)
    assert refused.value.response.status_code == 403


@pytest.mark.slow
def test_frame_over_the_limit_is_refused_by_the_server_with_1009_and_the_next_socket_plays(asgi_live_server: str, game) -> None:
    from websockets.exceptions import ConnectionClosed
    from websockets.sync.client import connect as ws_connect

    dealt = services.round_create(player=game.voter)
    url = asgi_live_server.replace("http", "ws", 1) + f"/ws/rounds/{dealt.pk}/"
    headers = session_headers(asgi_live_server, game.voter)
    with ws_connect(url, additional_headers=headers) as ws:
        # The frame's header announces 16 MiB and its first KiB follows: the server must close
        # on the header, without reading the rest. (Writing all 16 MiB races the server's close
        # against the client's writes: the close frame can be lost to a TCP reset; the
        # benchmark bench/bench_ws_flood.py sends whole frames.)
        size = 16 * 1024 * 1024
        ws.socket.sendall(struct.pack("!BBQ", 0x81, 0x80 | 127, size) + b"\0\0\0\0" + b"x" * 1024)
        with pytest.raises(ConnectionClosed) as closed:
            while True:
                ws.recv(timeout=10)
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 1009
    with ws_connect(url, additional_headers=headers) as ws:
        ws.send(json.dumps({"type": "start"}))
        state = json.loads(ws.recv(timeout=10))
    assert state["type"] == "state" and state["status"] == "playing"
    assert Round.objects.get(pk=dealt.pk).state == "playing"


def test_procfile_runs_uvicorn_with_the_shared_flags() -> None:
    """Production's web line refuses big frames in uvicorn itself, at the size the
    consumer's setting names, and the Makefile's server runs the same flags."""
    web = next(line for line in (REPO / "Procfile").read_text().splitlines() if line.startswith("web:"))
    assert "--ws-max-size ${FM2_WS_MAX_FRAME_BYTES:-4096}" in web
    serve = (REPO / "Makefile").read_text()
    assert "--ws-max-size $${FM2_WS_MAX_FRAME_BYTES:-4096}" in serve
    flags = uvicorn_flags()
    for name, value in zip(flags[::2], flags[1::2]):
        shown = web.replace("${FM2_WS_MAX_FRAME_BYTES:-4096}", "4096").replace('"${FORWARDED_ALLOW_IPS:-}"', '""')
        assert f"{name} {value or chr(34) * 2}" in shown, name
