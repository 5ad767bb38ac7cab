"""Guests: a nickname alone joins a room (an account limited to rooms, made throttled per
client address, the nickname checked as user names are), kept off the public boards, and
claimable later with a password, keeping its history. And what an attacker tries with them."""

from __future__ import annotations

import json

import pytest
from django.test import Client

from foolgame.players.models import Guest, LedgerEntry, PlayerRating
from foolgame.rooms import services
from foolgame.rooms.models import Room, RoomMember
from foolgame.voting.models import Round
from tests.factories import PASSWORD, UserFactory
from tests.rooms.conftest import claim_pool
from tests.voting.test_apis import login, post

pytestmark = pytest.mark.django_db


def anonymous(ip: str = "10.0.0.1") -> Client:
    client = Client(enforce_csrf_checks=True, REMOTE_ADDR=ip)
    client.get("/api/auth/csrf")
    client.defaults["HTTP_X_CSRFTOKEN"] = client.cookies["csrftoken"].value
    return client


def join_as_guest(client: Client, code: str, nickname: str):
    response = post(client, f"/api/rooms/{code}/guest", {"nickname": nickname})
    if response.status_code == 201:
        client.defaults["HTTP_X_CSRFTOKEN"] = client.cookies["csrftoken"].value  # login rotates the token
    return response


@pytest.fixture
def room(db) -> Room:
    claim_pool()
    return services.room_create(host=UserFactory(username="hana"), questions=2, host_plays=True)


def test_a_nickname_joins_a_room_as_a_guest(room) -> None:
    client = anonymous()
    joined = join_as_guest(client, room.code.lower(), "Kim_7")
    assert joined.status_code == 201, joined.content
    assert joined.json()["member"] is True and {r["username"] for r in joined.json()["scoreboard"]} == {"hana", "Kim_7"}
    me = client.get("/api/me").json()
    assert me["username"] == "Kim_7" and me["is_guest"] is True
    guest = Guest.objects.get().user
    assert not guest.has_usable_password(), "a guest's session is its only key"
    assert RoomMember.objects.filter(room=room, player=guest).exists()
    again = post(client, f"/api/rooms/{room.code}/guest", {"nickname": "Kim_8"})
    assert again.status_code == 409 and again.json()["error"]["code"] == "already_logged_in"


@pytest.mark.parametrize(
    ("nickname", "status", "code"),
    [
        ("Kim!Lee", 400, "invalid_username"),  # outside the alphabet
        ("k" * 31, 400, "invalid_username"),
        ("", 400, "invalid"),
        ("ki\u200bm", 400, "invalid_username"),  # an invisible character
        ("admin", 409, "username_taken"),
        ("HANA", 409, "username_taken"),
        ("h\u0430na", 409, "username_confusable"),  # a Cyrillic а
        ("fm2-bot", 409, "username_taken"),  # the system's prefix
    ],
)
def test_a_nickname_is_checked_as_a_user_name(room, nickname, status, code) -> None:
    response = join_as_guest(anonymous(), room.code, nickname)
    assert (response.status_code, response.json()["error"]["code"]) == (status, code)
    assert not Guest.objects.exists()


@pytest.mark.parametrize("why", ["ended", "full", "unknown"])
def test_a_join_the_room_refuses_leaves_no_account(room, settings, why) -> None:
    code = room.code
    if why == "ended":
        services.room_leave(code=room.code, player=room.host)
    elif why == "full":
        settings.FM2_ROOMS = {**settings.FM2_ROOMS, "MAX_MEMBERS": 1}
    else:
        code = "NOPE99"
    response = join_as_guest(anonymous(), code, "Kim")
    assert response.status_code in (404, 409) and response.json()["error"]["code"] in ("room_over", "room_full", "room_not_found")
    assert not Guest.objects.exists() and not Room.objects.filter(members__player__username="Kim").exists()


def test_guests_are_throttled_per_client_address(room, settings) -> None:
    settings.FM2_GUESTS = {**settings.FM2_GUESTS, "GUESTS_PER_IP": 2}
    made = [join_as_guest(anonymous("10.0.0.9"), room.code, f"kid{n}").status_code for n in range(3)]
    assert made == [201, 201, 429]
    refused = join_as_guest(anonymous("10.0.0.9"), room.code, "kid9")
    assert refused.json()["error"]["code"] == "guest_throttled" and int(refused["Retry-After"]) > 0
    assert join_as_guest(anonymous("10.0.0.10"), room.code, "kid10").status_code == 201  # another address
    assert Guest.objects.count() == 3


def test_a_huge_body_makes_no_guest(room) -> None:
    client = anonymous()
    body = json.dumps({"nickname": "x" * (16 * 1024 * 1024)})
    response = client.post(f"/api/rooms/{room.code}/guest", body, content_type="application/json")
    assert response.status_code in (400, 413) and not Guest.objects.exists()


GUEST_REFUSED = [
    ("POST", "/api/write-tasks", {}),
    ("POST", "/api/claims", {"task": 1, "text": "x", "gold_sentence_ids": [1]}),
    ("POST", "/api/claims/check", {"task": 1, "text": "x"}),
    ("POST", "/api/checks", None),
    ("POST", "/api/checks/1", {"label": "SUPPORTS"}),
    ("POST", "/api/rounds", {}),
    ("POST", "/api/rooms", {}),
    ("GET", "/api/moderation/queue", None),
    ("POST", "/api/exports", {}),
    ("GET", "/api/pages/1/hints?q=x", None),
    ("GET", "/api/leaderboard", None),
]


def test_a_guest_plays_rooms_and_nothing_else(room) -> None:
    client = anonymous()
    join_as_guest(client, room.code, "Kim")
    guest = Guest.objects.get().user
    for method, url, body in GUEST_REFUSED:
        response = client.get(url) if method == "GET" else post(client, url, body)
        assert (response.status_code, response.json()["error"]["code"]) == (403, "guest_not_allowed"), url
    for page in ("/write/", "/play/", "/checks/", "/moderation/", "/research/", f"/rooms/{room.code}/projector/"):
        response = client.get(page)
        assert response.status_code == 403 and b"Guest accounts play live rooms only" in response.content, page
    # The room itself: its page, its state, its question over REST and the round's twins.
    assert client.get(f"/rooms/{room.code}/").status_code == 200
    services.room_next_question(code=room.code, player=room.host)
    view = client.get(f"/api/rooms/{room.code}").json()["question"]
    round_id = view["round"]["id"]
    assert post(client, f"/api/rounds/{round_id}/reveal", {"claim": 0}).status_code == 200
    assert post(client, f"/api/rounds/{round_id}/vote", {"false_claim": 0}).status_code == 200
    for twin in ("like", "report"):  # no likes to pay authors, no reports to moderate
        assert post(client, f"/api/rounds/{round_id}/{twin}", {"claim": 0, "reason": "spam"}).json()["error"]["code"] == "guest_not_allowed"
    assert Round.objects.get(pk=round_id).player_id == guest.pk


def test_guests_stay_off_the_public_boards_until_claimed(room, fake_clock) -> None:
    client = anonymous()
    join_as_guest(client, room.code, "Kim")
    guest = Guest.objects.get().user
    LedgerEntry.objects.create(player=guest, amount=500, kind="verify", cause="test")
    PlayerRating.objects.create(player=guest, rating=2500, deviation=30, votes=50)
    watcher = login("hana")
    assert "Kim" not in json.dumps(watcher.get("/api/leaderboard").json())
    assert "Kim" not in json.dumps(watcher.get("/api/leaderboard?kind=skill").json())
    assert "Kim" not in watcher.get("/leaderboard/").content.decode()

    weak = post(client, "/api/me/claim", {"password": "123"})
    assert (weak.status_code, weak.json()["error"]["code"]) == (400, "weak_password") and Guest.objects.exists()
    claimed = post(client, "/api/me/claim", {"password": PASSWORD})
    assert claimed.status_code == 200 and claimed.json()["is_guest"] is False and claimed.json()["points"]["verify"] == 500
    assert not Guest.objects.exists()
    assert client.get("/api/me").status_code == 200, "the session stays logged in"
    assert post(client, "/api/rounds", {}).json().get("error", {}).get("code") != "guest_not_allowed"
    assert "Kim" in json.dumps(watcher.get("/api/leaderboard").json())
    assert "Kim" in json.dumps(watcher.get("/api/leaderboard?kind=skill").json())
    assert login("Kim").get("/api/me").json()["username"] == "Kim", "it logs in with its password now"
    again = post(client, "/api/me/claim", {"password": PASSWORD})
    assert (again.status_code, again.json()["error"]["code"]) == (403, "not_a_guest")


def test_a_nickname_with_a_space_joins_with_an_underscore(room) -> None:
    """Issue 39: "Dave K" was refused; a space now becomes "_" (no account name holds one)."""
    client = Client(enforce_csrf_checks=False, REMOTE_ADDR="10.0.0.4")
    response = client.post(f"/api/rooms/{room.code}/guest", {"nickname": "  Dave  K "}, content_type="application/json")
    assert response.status_code == 201 and Guest.objects.get().user.username == "Dave_K"
    assert "Dave_K" in [row["username"] for row in response.json()["scoreboard"]]


def test_the_room_page_asks_someone_not_logged_in_for_a_nickname(room) -> None:
    client = Client(enforce_csrf_checks=False, REMOTE_ADDR="10.0.0.3")
    page = client.get(f"/rooms/{room.code.lower()}/")
    assert page.status_code == 200 and b"Your nickname" in page.content
    refused = client.post(f"/rooms/{room.code}/", {"nickname": "Kim!"})
    assert refused.status_code == 400 and b"only" in refused.content and not Guest.objects.exists()
    joined = client.post(f"/rooms/{room.code}/", {"nickname": "Kim"})
    assert joined.status_code == 302 and joined["Location"] == f"/rooms/{room.code}/"
    page = client.get(f"/rooms/{room.code}/")
    assert b"Keep this account" in page.content and b'data-me="Kim"' in page.content
    assert client.get("/accounts/claim/").status_code == 200
    claimed = client.post("/accounts/claim/", {"password": PASSWORD})
    assert claimed.status_code == 200 and b"Your account is yours" in claimed.content and not Guest.objects.exists()


@pytest.mark.django_db(transaction=True)
async def test_a_guest_neither_likes_nor_reports_over_the_round_socket(fake_clock) -> None:
    """The HTTP paths are closed to guests; the round socket's like and report are refused by
    the round services themselves (a like pays an author: a farm of free accounts)."""
    from channels.db import database_sync_to_async
    from channels.routing import URLRouter
    from channels.testing import WebsocketCommunicator

    from foolgame.routing import websocket_urlpatterns
    from foolgame.voting import services as rounds

    def setup():
        claim_pool()
        room = services.room_create(host=UserFactory(username="hana"), questions=1)
        guest, _ = services.room_join_as_guest(code=room.code, nickname="Kim", ip="10.0.0.4")
        services.room_next_question(code=room.code, player=room.host)
        round_ = Round.objects.get(player=guest)
        rounds.vote_cast(round_id=round_.pk, player=guest, false_claim=0)
        return guest, round_

    guest, round_ = await database_sync_to_async(setup)()
    ws = WebsocketCommunicator(URLRouter(websocket_urlpatterns), f"/ws/rounds/{round_.pk}/")
    ws.scope["user"] = guest
    try:
        assert (await ws.connect())[0]
        for frame in ({"type": "like", "claim": 0}, {"type": "report", "claim": 0, "reason": "spam", "note": ""}):
            await ws.send_json_to(frame)
            while (message := await ws.receive_json_from(timeout=3))["type"] != "error":
                pass
            assert message["code"] == "guest_not_allowed", message
    finally:
        await ws.disconnect()
    from foolgame.voting.models import Like, Report

    assert not await database_sync_to_async(lambda: Like.objects.exists() or Report.objects.exists())()
