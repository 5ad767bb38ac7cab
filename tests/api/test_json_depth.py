"""JSON nesting is capped before parsing: a deeply nested body or socket frame is refused with
``too_deep`` (400, or an error frame), nothing is logged as an error and nothing changes."""

from __future__ import annotations

import json
import logging

import pytest
from hypothesis import given
from hypothesis import strategies as st
from channels.db import database_sync_to_async
from channels.routing import URLRouter
from channels.testing import WebsocketCommunicator
from django.contrib.auth import get_user_model
from django.test import Client

from foolgame.core.parsers import json_depth
from foolgame.rooms import services as rooms
from foolgame.rooms.models import Room
from foolgame.routing import websocket_urlpatterns
from tests.factories import PASSWORD, UserFactory

LIMIT = 20


@pytest.fixture(autouse=True)
def depth_limit(settings) -> None:
    settings.FM2_HTTP = {**settings.FM2_HTTP, "MAX_JSON_DEPTH": LIMIT}


def nested(depth: int, *, inner: str = "1") -> str:
    """An array value nested ``depth`` levels (the object around it is one more)."""
    return "[" * depth + inner + "]" * depth


def assert_nothing_logged_as_an_error(caplog) -> None:
    bad = [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info]
    assert not bad, [r.getMessage() for r in bad]


@pytest.mark.parametrize(
    "text, depth",
    [
        ("1", 0),
        ("{}", 1),
        ('{"a": [1, {"b": []}]}', 4),
        ('{"a": "[[[[[[{{{{"}', 1),  # brackets inside a string count nothing
        (r'{"a": "\"[[[[", "b": "\\"}', 1),  # escaped quotes and a trailing backslash
        (r'["\\\"[[["]', 1),
        ("[" * 50 + "]" * 50, LIMIT + 1),  # counting stops past the limit
        ('[[1], [2], [[3]]]', 3),
        ("[" * 30, LIMIT + 1),  # never closed: json.loads would still recurse into it
        ("[[[" + "]" * 5, 3),
        ('["' + "[" * 30, 1),  # inside a string that never ends: json.loads stops there
        ('{"é": "\u2028[", "ü": ["ß"]}', 2),
    ],
)
def test_json_depth_counts_brackets_outside_strings(text: str, depth: int) -> None:
    assert json_depth(text, limit=LIMIT) == depth


def parsed_depth(value) -> int:
    if isinstance(value, list):
        return 1 + max(map(parsed_depth, value), default=0)
    if isinstance(value, dict):
        return 1 + max(map(parsed_depth, value.values()), default=0)
    return 0


JSON_TEXT = st.text(alphabet=st.sampled_from('ab"\\[]{}é\u2028 '), max_size=6)
JSON_VALUES = st.recursive(
    st.none() | st.integers() | JSON_TEXT,
    lambda children: st.lists(children, max_size=3) | st.dictionaries(JSON_TEXT, children, max_size=3),
    max_leaves=40,
)


@given(JSON_VALUES, st.booleans())
def test_json_depth_agrees_with_the_parsed_value(value, ensure_ascii: bool) -> None:
    text = json.dumps(value, ensure_ascii=ensure_ascii)
    assert json_depth(text, limit=LIMIT) == min(parsed_depth(json.loads(text)), LIMIT + 1)


# --- REST ------------------------------------------------------------------------------------

ANONYMOUS = ["/api/auth/signup", "/api/auth/login"]
LOGGED_IN = ["/api/rounds", "/api/claims", "/api/write-tasks", "/api/claims/check", "/api/rooms"]


def body_of_depth(depth: int) -> str:
    """``{"username": [[...]]}``: an object around ``depth - 1`` arrays."""
    return '{"username": ' + nested(depth - 1, inner='"x"') + ', "password": "' + PASSWORD + '"}'


@pytest.mark.django_db
@pytest.mark.parametrize("url", ANONYMOUS + LOGGED_IN)
@pytest.mark.parametrize("depth", [LIMIT + 1, 5000, 30_000])
def test_a_body_nested_past_the_limit_is_refused_400_too_deep_without_a_traceback(client: Client, url: str, depth: int, caplog) -> None:
    caplog.set_level(logging.DEBUG)
    if url in LOGGED_IN:
        client.force_login(UserFactory(username="nest"))
    users = get_user_model().objects.count()
    response = client.post(url, body_of_depth(depth), content_type="application/json")
    assert response.status_code == 400, response.content[:300]
    error = response.json()["error"]
    assert error["code"] == "too_deep"
    assert str(LIMIT) in error["message"]
    assert_nothing_logged_as_an_error(caplog)
    assert get_user_model().objects.count() == users


@pytest.mark.django_db
@pytest.mark.parametrize("url", ANONYMOUS + ["/api/rounds", "/api/claims"])
def test_a_body_nested_at_the_limit_is_parsed_and_judged_by_the_endpoint(client: Client, url: str, caplog) -> None:
    caplog.set_level(logging.DEBUG)
    if url not in ANONYMOUS:
        client.force_login(UserFactory(username="nest"))
    response = client.post(url, body_of_depth(LIMIT), content_type="application/json")
    assert response.status_code < 500
    if response.status_code >= 400:
        assert response.json()["error"]["code"] != "too_deep"
    assert_nothing_logged_as_an_error(caplog)


@pytest.mark.django_db
def test_ordinary_bodies_still_work(client: Client) -> None:
    signup = client.post("/api/auth/signup", {"username": "plain", "password": PASSWORD}, content_type="application/json")
    assert signup.status_code == 201
    client.post("/api/auth/logout", content_type="application/json")
    login = client.post("/api/auth/login", {"username": "plain", "password": PASSWORD}, content_type="application/json")
    assert login.status_code == 200
    bad = client.post("/api/auth/login", "{not json", content_type="application/json")
    assert bad.status_code == 400 and bad.json()["error"]["code"] == "parse_error"


# --- sockets ---------------------------------------------------------------------------------

router = URLRouter(websocket_urlpatterns)


async def next_frame(ws: WebsocketCommunicator, *types: str) -> dict:
    while True:
        message = json.loads(await ws.receive_from(timeout=3))
        if message["type"] in types:
            return message


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("depth", [LIMIT + 1, 2000])
async def test_a_nested_frame_on_the_room_socket_gets_an_error_frame_and_the_socket_stays(depth: int, caplog) -> None:
    caplog.set_level(logging.DEBUG)
    host = await database_sync_to_async(UserFactory)(username="hana")
    room = await database_sync_to_async(rooms.room_create)(host=host, questions=3)
    ws = WebsocketCommunicator(router, f"/ws/rooms/{room.code}/")
    ws.scope["user"] = host
    connected, _ = await ws.connect()
    assert connected
    try:
        await next_frame(ws, "room")
        before = await database_sync_to_async(lambda: list(Room.objects.values()))()
        await ws.send_to(text_data='{"type": "ready", "x": ' + nested(depth - 1) + "}")
        error = await next_frame(ws, "error")
        assert error["code"] == "too_deep" and str(LIMIT) in error["message"]
        assert await database_sync_to_async(lambda: list(Room.objects.values()))() == before
        await ws.send_to(text_data='{"type": ' + nested(1, inner='"x"') + "}")  # shallow: judged by its type
        assert (await next_frame(ws, "error"))["code"] == "unknown_type"
    finally:
        await ws.disconnect()
    assert_nothing_logged_as_an_error(caplog)
