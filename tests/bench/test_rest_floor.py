"""bench/rest_floor.py, the REST floor: one row read and one row committed per request, under
the session middleware, answered in the statuses the game answers the same clients."""

from __future__ import annotations

import pytest

from bench import floor_rows, rest_floor


@pytest.fixture
def floor_client(db, settings, client):
    settings.ROOT_URLCONF = "bench.rest_floor"
    settings.MIDDLEWARE = ["django.contrib.sessions.middleware.SessionMiddleware"]
    floor_rows.create(rest_floor.TABLE)
    yield client
    floor_rows.drop(rest_floor.TABLE)


def test_each_request_of_a_logged_in_client_reads_one_row_and_commits_one(floor_client) -> None:
    assert floor_client.get("/api/me").status_code == 403  # no session: nothing written
    assert floor_rows.count(rest_floor.TABLE) == {}
    assert floor_client.post("/api/auth/login", {"username": "author3"}, content_type="application/json").status_code == 200
    assert floor_rows.count(rest_floor.TABLE) == {}  # a login is not a measured request
    first = floor_client.get("/api/pages/4")
    assert first.status_code == 200 and first.json()["player"] == "author3" and first.json()["latest"] is None
    dealt = floor_client.post("/api/rounds", {}, content_type="application/json")
    assert dealt.status_code == 201 and dealt.json()["id"] >= 1
    assert dealt.json()["latest"] is not None  # it read the row the request before committed
    assert floor_client.post(f"/api/rounds/{dealt.json()['id']}/vote", {"false_claim": 1}, content_type="application/json").status_code == 200
    assert floor_rows.count(rest_floor.TABLE) == {"GET": 1, "POST": 2}


def test_the_floor_is_served_with_the_game_s_settings_and_only_the_session_middleware() -> None:
    from django.conf import settings

    from bench import rest_floor_settings as served

    assert served.MIDDLEWARE == ["django.contrib.sessions.middleware.SessionMiddleware"]
    assert served.ROOT_URLCONF == "bench.rest_floor"
    assert (served.SESSION_ENGINE, served.CACHES, served.DB_POOL, served.DB_POOL_MAX_SIZE) == (
        settings.SESSION_ENGINE, settings.CACHES, settings.DB_POOL, settings.DB_POOL_MAX_SIZE)
    assert served.DATABASES["default"]["ENGINE"] == settings.DATABASES["default"]["ENGINE"]
