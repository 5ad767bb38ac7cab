"""The REST twins, the leak scan, the leaderboard and notifications."""

from __future__ import annotations

import json

import pytest
from django.test import Client

from foolgame.voting.models import Round
from tests.factories import PASSWORD, PageFactory, UserFactory
from tests.voting.conftest import make_claim

pytestmark = pytest.mark.django_db


def login(username: str) -> Client:
    client = Client(enforce_csrf_checks=True)
    client.get("/api/auth/csrf")
    token = client.cookies["csrftoken"].value
    response = client.post("/api/auth/login", {"username": username, "password": PASSWORD}, content_type="application/json", headers={"X-CSRFToken": token})
    assert response.status_code == 200
    client.defaults["HTTP_X_CSRFTOKEN"] = client.cookies["csrftoken"].value  # login rotates the token
    return client


def post(client: Client, url: str, data: dict | None = None):
    return client.post(url, json.dumps(data or {}), content_type="application/json")


def secrets_of(game, round_: Round, revealed: set[str]) -> list[str]:
    """Everything a voter must not see before voting: labels, gold text, unbought clues."""
    hidden = ["SUPPORTS", "REFUTES", '"label"', "gold"]
    for claim in round_.claims:
        hidden += [s.text for s in claim.gold_sentences.all()]
        hidden += [c["text"] for c in claim.clues if c["text"] not in revealed]
    return hidden


def test_a_whole_round_over_rest_leaks_nothing_before_the_vote(game, fake_clock) -> None:
    client = login("vera")
    payloads: list[str] = []
    created = post(client, "/api/rounds")
    assert created.status_code == 201
    payloads.append(created.content.decode())
    round_id = created.json()["id"]
    payloads.append(client.get(f"/api/rounds/{round_id}").content.decode())
    payloads.append(post(client, f"/api/rounds/{round_id}/start").content.decode())
    clue = post(client, f"/api/rounds/{round_id}/reveal", {"claim": 1})
    assert clue.status_code == 200
    payloads.append(clue.content.decode())
    revealed = {clue.json()["clue"]["text"]}
    payloads.append(client.get(f"/api/rounds/{round_id}").content.decode())
    payloads.append(client.get(f"/api/pages/{game.true_claim.page_id}").content.decode().replace(game.true_claim.page.title, ""))
    schema = client.get("/api/schema/?format=json").content.decode()
    round_ = Round.objects.get(pk=round_id)
    secrets = secrets_of(game, round_, revealed)
    for payload in payloads:
        for secret in secrets:
            assert secret not in payload, f"{secret!r} leaked in {payload[:300]}"
    for claim in round_.claims:
        assert claim.text not in schema
        assert all(s.text not in schema for s in claim.gold_sentences.all())
    result = post(client, f"/api/rounds/{round_id}/vote", {"false_claim": round_.false_index}).json()
    assert result["correct"] is True and result["labels"][round_.false_index] == "REFUTES"
    assert all(result["gold"][i] for i in (0, 1)), "after the vote both gold lists are shown"


def test_page_endpoint_does_not_mark_gold_or_claims(game) -> None:
    body = Client().get(f"/api/pages/{game.true_claim.page_id}").json()
    assert set(body["sentences"][0]) == {"id", "text", "section_header"}


def test_round_needs_a_login_and_belongs_to_its_player(game, fake_clock) -> None:
    assert Client().post("/api/rounds", content_type="application/json").status_code == 403
    vera = login("vera")
    round_id = post(vera, "/api/rounds").json()["id"]
    post(vera, f"/api/rounds/{round_id}/start")
    other = login("tina")
    response = post(other, f"/api/rounds/{round_id}/vote", {"false_claim": 0})
    assert (response.status_code, response.json()["error"]["code"]) == (404, "round_not_found")
    assert other.get(f"/api/rounds/{round_id}").status_code == 404


@pytest.mark.parametrize("body", [{}, {"false_claim": 2}, {"false_claim": "left"}, [1]])
def test_bad_vote_body_gets_a_4xx_and_changes_nothing(game, fake_clock, body) -> None:
    client = login("vera")
    round_id = post(client, "/api/rounds").json()["id"]
    post(client, f"/api/rounds/{round_id}/start")
    response = client.post(f"/api/rounds/{round_id}/vote", json.dumps(body), content_type="application/json")
    assert response.status_code == 400 and response.json()["error"]["message"]
    assert Round.objects.get(pk=round_id).state == "playing"


def test_late_vote_over_rest_is_refused(game, fake_clock) -> None:
    client = login("vera")
    round_id = post(client, "/api/rounds").json()["id"]
    post(client, f"/api/rounds/{round_id}/start")
    fake_clock.advance(200)
    response = post(client, f"/api/rounds/{round_id}/vote", {"false_claim": 0})
    assert (response.status_code, response.json()["error"]["code"]) == (409, "round_expired")
    state = client.get(f"/api/rounds/{round_id}").json()
    assert state["status"] == "timeout" and state["remaining"] == 0


def test_no_pair_is_a_404_with_its_code(db) -> None:
    UserFactory(username="lonely")
    response = post(login("lonely"), "/api/rounds")
    assert (response.status_code, response.json()["error"]["code"]) == (404, "no_pair_available")


def test_a_deal_from_an_unknown_category_is_a_404_naming_it(game) -> None:
    response = post(login("vera"), "/api/rounds", {"category": "nope"})
    assert response.status_code == 404
    error = response.json()["error"]
    assert error["code"] == "unknown_category" and "nope" in error["message"]
    assert not Round.objects.exists()


def test_a_deal_from_an_unknown_page_is_a_404(game) -> None:
    response = post(login("vera"), "/api/rounds", {"page": 999_999})
    assert (response.status_code, response.json()["error"]["code"]) == (404, "unknown_page")
    assert "999999" in response.json()["error"]["message"]
    assert not Round.objects.exists()


@pytest.mark.parametrize("page", ["7", 0, -1, True, "x"])
def test_a_page_that_is_not_a_positive_id_is_a_400(game, page) -> None:
    response = post(login("vera"), "/api/rounds", {"page": page} if page != "7" else {"page": [7]})
    assert response.status_code == 400
    assert not Round.objects.exists()


def test_a_deal_from_a_page_gives_both_claims_of_that_page(game) -> None:
    other = PageFactory(title="Jupiter", category=game.true_claim.page.category)
    make_claim(other, label="SUPPORTS", author=game.true_author)
    make_claim(other, label="REFUTES", author=game.false_author)
    client = login("vera")
    for page in (other, game.true_claim.page):
        response = post(client, "/api/rounds", {"page": page.pk})
        assert response.status_code == 201
        assert [p["id"] for p in response.json()["pages"]] == [page.pk, page.pk]
    refused = post(client, "/api/rounds", {"page": other.pk})
    assert (refused.status_code, refused.json()["error"]["code"]) == (404, "no_pair_available")
    assert "on this page" in refused.json()["error"]["message"]


def test_a_deal_from_a_category_by_slug_or_name(game) -> None:
    category = game.true_claim.page.category
    response = post(login("vera"), "/api/rounds", {"category": category.name.upper()})
    assert response.status_code == 201


def test_leaderboard_ranks_players_by_kind_and_leaves_out_the_release_author(game, fake_clock) -> None:
    client = login("vera")
    round_id = post(client, "/api/rounds").json()["id"]
    post(client, f"/api/rounds/{round_id}/start")
    fake_clock.advance(70)
    false_index = Round.objects.get(pk=round_id).false_index
    post(client, f"/api/rounds/{round_id}/vote", {"false_claim": false_index})
    post(client, f"/api/rounds/{round_id}/like", {"claim": 1 - false_index})
    board = Client().get("/api/leaderboard").json()
    assert board[0] == {"rank": 1, "username": "vera", "points": 110}
    assert {r["username"]: r["points"] for r in board} == {"vera": 110, "tina": 5 + 10, "fred": 5}
    assert Client().get("/api/leaderboard?kind=like").json() == [{"rank": 1, "username": "tina", "points": 10}]
    assert Client().get("/api/leaderboard?kind=bogus").status_code == 400


def test_authors_are_notified_grouped_and_can_mark_read(game, fake_clock) -> None:
    for name in ("v1", "v2", "v3"):
        UserFactory(username=name)
        client = login(name)
        round_id = post(client, "/api/rounds").json()["id"]
        post(client, f"/api/rounds/{round_id}/start")
        false_index = Round.objects.get(pk=round_id).false_index
        post(client, f"/api/rounds/{round_id}/vote", {"false_claim": 1 - false_index})
        post(client, f"/api/rounds/{round_id}/like", {"claim": false_index})
    fred = login("fred")
    notes = fred.get("/api/me/notifications").json()["notifications"]
    assert {"kind": "fooled", "count": 3, "message": "3 players were fooled by your claims."} in notes
    assert {"kind": "liked", "count": 3, "message": "Your claims were liked 3 times."} in notes
    assert post(fred, "/api/me/notifications").status_code == 204
    assert fred.get("/api/me/notifications").json()["notifications"] == []
