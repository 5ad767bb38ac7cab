"""Accounts over the REST API, with Django's session and CSRF rules."""

from __future__ import annotations

import pytest
from django.test import Client

from foolgame.players.models import LedgerEntry
from tests.factories import PASSWORD, ClaimFactory, UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def client() -> Client:
    return Client(enforce_csrf_checks=True)


def csrf(client: Client) -> str:
    response = client.get("/api/auth/csrf")
    assert response.status_code == 200
    return response.cookies["csrftoken"].value


def post(client: Client, url: str, data: dict | None = None):
    return client.post(url, data or {}, content_type="application/json", headers={"X-CSRFToken": csrf(client)})


def test_signup_logs_the_player_in_and_me_shows_zero_points(client: Client) -> None:
    response = post(client, "/api/auth/signup", {"username": "ada", "password": PASSWORD})
    assert response.status_code == 201
    me = client.get("/api/me").json()
    assert me["username"] == "ada"
    assert me["points"] == {"write": 0, "verify": 0, "fool": 0, "like": 0, "check": 0, "model": 0, "total": 0}


def test_signup_without_csrf_token_is_refused(client: Client) -> None:
    response = client.post("/api/auth/signup", {"username": "ada", "password": PASSWORD}, content_type="application/json")
    assert response.status_code == 403
    assert response.json()["error"]["code"] == "permission_denied"


@pytest.mark.parametrize(
    "payload, code",
    [
        ({"username": "bob", "password": "123"}, "weak_password"),
        ({"username": "bob", "password": "password"}, "weak_password"),
        ({"username": "bob wine", "password": PASSWORD}, "invalid_username"),
        ({"username": "fm2-release", "password": PASSWORD}, "username_taken"),
        ({"password": PASSWORD}, "invalid"),
    ],
)
def test_bad_signup_gets_a_clear_error_and_creates_nobody(client: Client, payload: dict, code: str) -> None:
    response = post(client, "/api/auth/signup", payload)
    assert 400 <= response.status_code < 500
    body = response.json()["error"]
    assert body["code"] == code and body["message"]
    assert client.get("/api/me").status_code == 403


def test_taken_username_is_refused_case_insensitively(client: Client) -> None:
    UserFactory(username="Carol")
    response = post(client, "/api/auth/signup", {"username": "carol", "password": PASSWORD})
    assert (response.status_code, response.json()["error"]["code"]) == (409, "username_taken")


def test_login_logout_round_trip(client: Client) -> None:
    UserFactory(username="dan")
    assert post(client, "/api/auth/login", {"username": "dan", "password": "wrong password"}).json()["error"]["code"] == "invalid_credentials"
    assert post(client, "/api/auth/login", {"username": "dan", "password": PASSWORD}).status_code == 200
    assert client.get("/api/me").json()["username"] == "dan"
    assert post(client, "/api/auth/logout").status_code == 204
    assert client.get("/api/me").status_code == 403


def test_me_sums_points_by_kind_from_the_ledger(client: Client) -> None:
    user = UserFactory(username="eve")
    claim = ClaimFactory(author=user)
    for amount, kind in [(100, "write"), (100, "write"), (37, "verify"), (83, "fool"), (10, "like")]:
        LedgerEntry.objects.create(player=user, amount=amount, kind=kind, claim=claim, cause=f"claim:{claim.pk}")
    LedgerEntry.objects.create(player=UserFactory(), amount=55, kind="verify", cause="round:1")
    post(client, "/api/auth/login", {"username": "eve", "password": PASSWORD})
    assert client.get("/api/me").json()["points"] == {"write": 200, "verify": 37, "fool": 83, "like": 10, "check": 0, "model": 0, "total": 330}


def test_schema_describes_every_rest_endpoint(client: Client) -> None:
    response = client.get("/api/schema/?format=json")
    assert response.status_code == 200
    paths = set(response.json()["paths"])
    for path in ["/api/auth/signup", "/api/auth/login", "/api/auth/logout", "/api/auth/csrf", "/api/me", "/api/categories", "/api/pages", "/api/pages/{page_id}"]:
        assert path in paths
