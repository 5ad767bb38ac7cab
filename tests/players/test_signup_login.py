"""Signup names (unique whatever the case, no look-alikes, nothing invisible) and throttled logins and signups."""

from __future__ import annotations

import threading

import pytest
from django.contrib.auth import get_user_model
from django.db import connection
from django.test import Client

from foolgame.core.errors import ServiceError
from foolgame.players import services
from foolgame.players.services import player_create
from tests.concurrency import race_results
from tests.factories import PASSWORD, UserFactory


@pytest.fixture
def client() -> Client:
    return Client(enforce_csrf_checks=True)


def signups_at_once(*names: str) -> list[str]:
    """Sign each name up in a thread of its own, all at once: the sorted outcomes ("created",
    or the refusal's code)."""
    names_left = iter(names)
    outcomes = race_results(len(names), lambda: player_create(username=next(names_left), password=PASSWORD))
    return sorted(outcome.code if isinstance(outcome, ServiceError) else "created" for outcome in outcomes)


def post(client: Client, url: str, data: dict, ip: str = "10.0.0.1"):
    token = client.get("/api/auth/csrf").cookies["csrftoken"].value
    return client.post(url, data, content_type="application/json", headers={"X-CSRFToken": token}, REMOTE_ADDR=ip)


@pytest.mark.django_db
@pytest.mark.parametrize(
    "name",
    ["fm2-release", "FM2_Release", "fm2.re1ease", "fm2 release", "ｆｍ２-release", "fm2-rеlease",  # Cyrillic е
     "fm2-reIease", "admin", "Adm1n", "ADMIN", "аdmin",  # Cyrillic а
     "moderator", "m0derat0r", "root", "r00t", "system", "staff", "fm2", "fm2bot", "5ystem",
     "admın", "admіn", "ɑdmin", "ADMІN", "mоderatоr", "rооt", "ѕtaff",  # dotless i, Cyrillic і / І / о / ѕ, Latin alpha
     "ǝdmin", "ɐdmin", "ᴀᴅᴍɪɴ", "ɹoot", "ʁoot", "ꜱʏꜱᴛᴇᴍ", "moderatoɹ"],  # turned e / a / r, inverted r, small capitals (beyond TR39)
)
def test_look_alikes_of_system_players_and_reserved_names_are_refused(name: str) -> None:
    with pytest.raises(ServiceError) as refused:
        player_create(username=name, password=PASSWORD)
    assert refused.value.code in ("username_taken", "invalid_username")
    assert not get_user_model().objects.exists()


@pytest.mark.django_db
@pytest.mark.parametrize("name", ["ada", "release", "admiral", "rootbeer", "José", "Zoë", "mod_ada", "systemic", "Борис", "李明"])
def test_ordinary_names_are_allowed(name: str) -> None:
    assert player_create(username=name, password=PASSWORD).username == name


@pytest.mark.django_db
@pytest.mark.parametrize("name", ["ali\u200bce", "\u202eecila", "bob\u3164", "\u2066eve", "ca\u00adrol", "dan\u2060"])
def test_names_with_invisible_or_control_characters_are_refused(name: str) -> None:
    with pytest.raises(ServiceError) as refused:
        player_create(username=name, password=PASSWORD)
    assert refused.value.code == "invalid_username"
    assert not get_user_model().objects.exists()


@pytest.mark.django_db
def test_a_case_variant_twin_is_refused_by_the_database_when_the_check_is_raced(monkeypatch) -> None:
    UserFactory(username="Alice")
    monkeypatch.setattr(services, "_username_in_use", lambda username: False)  # both signups passed the checks
    monkeypatch.setattr(services, "_confusable_holder", lambda username, **kwargs: None)
    with pytest.raises(ServiceError) as refused:
        player_create(username="alice", password=PASSWORD)
    assert (refused.value.code, refused.value.status_code) == ("username_taken", 409)
    assert get_user_model().objects.filter(username__iexact="alice").count() == 1


@pytest.mark.django_db(transaction=True)
@pytest.mark.skipif(connection.vendor != "postgresql", reason="concurrent signups need PostgreSQL")
def test_concurrent_signups_of_alice_and_ALICE_make_one_account(monkeypatch) -> None:
    real = services._username_in_use
    barrier = threading.Barrier(2)

    def checked_together(username: str) -> bool:
        taken = real(username)
        barrier.wait(timeout=10)
        return taken

    monkeypatch.setattr(services, "_username_in_use", checked_together)
    assert signups_at_once("Alice", "alice") == ["created", "username_taken"]
    assert get_user_model().objects.filter(username__iexact="alice").count() == 1


@pytest.mark.django_db
def test_failed_logins_past_the_limit_are_throttled_even_with_the_right_password(client: Client, settings) -> None:
    UserFactory(username="dan")
    limit = settings.FM2_SIGNUP["LOGIN_FAILURES_PER_USERNAME_IP"]
    for _ in range(limit):
        assert post(client, "/api/auth/login", {"username": "dan", "password": "wrong password"}).json()["error"]["code"] == "invalid_credentials"
    response = post(client, "/api/auth/login", {"username": "dan", "password": PASSWORD})
    assert response.status_code == 429
    assert response.json()["error"]["code"] == "login_throttled"
    assert int(response["Retry-After"]) > 0
    assert client.get("/api/me").status_code == 403
    # Another address is not held back by this one's failures.
    assert post(Client(enforce_csrf_checks=True), "/api/auth/login", {"username": "dan", "password": PASSWORD}, ip="10.0.0.2").status_code == 200


@pytest.mark.django_db
def test_a_successful_login_resets_the_username_counter(client: Client, settings) -> None:
    UserFactory(username="eve")
    limit = settings.FM2_SIGNUP["LOGIN_FAILURES_PER_USERNAME_IP"]
    for _ in range(limit - 1):
        post(client, "/api/auth/login", {"username": "eve", "password": "wrong password"})
    assert post(client, "/api/auth/login", {"username": "eve", "password": PASSWORD}).status_code == 200
    for _ in range(limit - 1):
        assert post(client, "/api/auth/login", {"username": "eve", "password": "wrong password"}).status_code == 400


@pytest.mark.django_db
def test_failed_logins_per_ip_across_usernames_are_throttled(client: Client, settings) -> None:
    settings.FM2_SIGNUP = {**settings.FM2_SIGNUP, "LOGIN_FAILURES_PER_IP": 3}
    UserFactory(username="fay")
    for name in ("a1", "a2", "a3"):
        post(client, "/api/auth/login", {"username": name, "password": "wrong password"})
    assert post(client, "/api/auth/login", {"username": "fay", "password": PASSWORD}).json()["error"]["code"] == "login_throttled"


@pytest.mark.django_db
def test_the_login_page_is_throttled_too(settings) -> None:
    UserFactory(username="gus")
    browser = Client()
    for _ in range(settings.FM2_SIGNUP["LOGIN_FAILURES_PER_USERNAME_IP"]):
        browser.post("/accounts/login/", {"username": "gus", "password": "wrong password"})
    browser.post("/accounts/login/", {"username": "gus", "password": PASSWORD})
    assert browser.get("/api/me").status_code == 403


@pytest.mark.django_db
def test_signups_per_ip_are_limited(client: Client, settings) -> None:
    settings.FM2_SIGNUP = {**settings.FM2_SIGNUP, "SIGNUPS_PER_IP": 3}
    for index in range(3):
        assert post(Client(enforce_csrf_checks=True), "/api/auth/signup", {"username": f"player{index}", "password": PASSWORD}).status_code == 201
    response = post(client, "/api/auth/signup", {"username": "player9", "password": PASSWORD})
    assert (response.status_code, response.json()["error"]["code"]) == (429, "signup_throttled")
    assert response["Retry-After"]
    assert not get_user_model().objects.filter(username="player9").exists()


@pytest.mark.django_db
def test_the_unique_index_migration_stops_on_existing_twins_and_names_them() -> None:
    import importlib
    from types import SimpleNamespace

    from django.apps import apps

    migration = importlib.import_module("foolgame.players.migrations.0002_username_unique_case_insensitively")
    with connection.cursor() as cursor:  # a database from before the index (rolled back with the test)
        cursor.execute(f"DROP INDEX {migration.INDEX}")
    get_user_model().objects.bulk_create([get_user_model()(username="Alice"), get_user_model()(username="alice")])  # no skeleton receivers: as then
    editor = SimpleNamespace(connection=connection, quote_name=connection.ops.quote_name)
    with pytest.raises(RuntimeError) as stopped:
        migration.refuse_existing_twins(apps, editor)
    assert "Alice, alice" in str(stopped.value)
