"""The rooms' REST endpoints: host, join by code, start, read, leave; JSON errors."""

from __future__ import annotations

import pytest

from foolgame.rooms.models import Room
from foolgame.voting import services as rounds
from tests.factories import UserFactory
from tests.rooms.conftest import claim_pool
from tests.voting.test_apis import login, post

pytestmark = pytest.mark.django_db


def test_host_join_start_play_over_rest_and_leave(db, fake_clock) -> None:
    claim_pool()
    UserFactory(username="hana"), UserFactory(username="pia")
    host, guest = login("hana"), login("pia")
    created = post(host, "/api/rooms", {"questions": 2, "seconds": 90, "host_plays": True})
    assert created.status_code == 201, created.content
    code = created.json()["code"]
    assert created.json()["url"] == f"/rooms/{code}/" and created.json()["socket"] == f"/ws/rooms/{code}/"
    assert created.json()["seconds"] == 90 and created.json()["state"] == "lobby"
    joined = post(guest, f"/api/rooms/{code.lower()}/join")
    assert joined.status_code == 200 and [r["username"] for r in joined.json()["scoreboard"]] == ["hana", "pia"]
    assert post(guest, f"/api/rooms/{code}/start").json()["error"]["code"] == "not_host"
    started = post(host, f"/api/rooms/{code}/start")
    assert started.status_code == 200 and started.json()["number"] == 1
    view = guest.get(f"/api/rooms/{code}").json()["question"]
    assert view["round"]["remaining"] == 90 and view["round"]["claims"] and "answer" not in view
    # The round REST twins play a room's round.
    voted = post(guest, f"/api/rounds/{view['round']['id']}/vote", {"false_claim": 0})
    assert voted.status_code == 200
    assert post(host, f"/api/rooms/{code}/start").json()["error"]["code"] == "question_playing"
    left = post(host, f"/api/rooms/{code}/leave")
    assert left.status_code == 200
    assert Room.objects.get(code=code).end_reason == "host_left"
    assert post(guest, f"/api/rooms/{code}/join").status_code == 409


@pytest.mark.parametrize(("body", "code"), [({"questions": 50}, "invalid_questions"), ({"seconds": "x"}, "invalid"), ({"category": "Nowhere"}, "unknown_category")])
def test_create_refuses_bad_bodies(db, body, code) -> None:
    UserFactory(username="hana")
    response = post(login("hana"), "/api/rooms", body)
    assert response.status_code == 400 and response.json()["error"]["code"] == code


def test_unknown_code_is_404_and_strangers_see_no_question(db) -> None:
    UserFactory(username="hana"), UserFactory(username="sam")
    host = login("hana")
    code = post(host, "/api/rooms").json()["code"]
    assert host.get("/api/rooms/NOPE42").status_code == 404
    seen = login("sam").get(f"/api/rooms/{code}").json()
    assert seen["member"] is False and seen["question"] is None
    assert post(login("sam"), f"/api/rooms/{code}/leave").json()["error"]["code"] == "not_a_member"
    assert rounds  # the round services play room rounds unchanged
