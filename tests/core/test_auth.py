"""A request's user, read from its session with the SQL compiled once (``core.auth``), and
every session it cannot answer alone left to Django: the same players are let in and out."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.db.models.sql.compiler import SQLCompiler
from django.test import Client, override_settings

from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def _me(client: Client) -> int:
    return client.get("/api/me").status_code  # 403 for nobody (the API's not_authenticated)


def test_a_requests_user_is_read_without_compiling_its_query_again(monkeypatch) -> None:
    client = Client()
    client.force_login(UserFactory())
    assert _me(client) == 200
    compiled = []
    as_sql = SQLCompiler.as_sql
    monkeypatch.setattr(SQLCompiler, "as_sql", lambda self, *a, **k: compiled.append(self.query.model) or as_sql(self, *a, **k))
    body = client.get("/api/me").json()
    assert body["username"] and get_user_model() not in compiled


def test_a_session_from_before_a_password_change_is_nobodys_and_stays_so() -> None:
    player = UserFactory()
    client = Client()
    client.force_login(player)
    assert _me(client) == 200
    player.set_password("changed elsewhere")
    player.save()
    assert _me(client) == 403
    assert _me(client) == 403  # the session was flushed: the old cookie is nobody's


def test_a_closed_account_is_nobody_until_it_is_opened_again_as_django_has_it() -> None:
    player = UserFactory()
    client = Client()
    client.force_login(player)
    player.is_active = False
    player.save()
    assert _me(client) == 403
    player.is_active = True
    player.save()
    assert _me(client) == 200  # Django keeps the session of an account closed for a while


def test_a_session_signed_with_a_retired_secret_is_still_let_in_by_djangos_reader() -> None:
    player = UserFactory()
    client = Client()
    with override_settings(SECRET_KEY="the secret before the rotation " * 2):
        client.force_login(player)
        assert _me(client) == 200
    with override_settings(SECRET_KEY="the secret after the rotation " * 2, SECRET_KEY_FALLBACKS=["the secret before the rotation " * 2]):
        assert _me(client) == 200  # the compiled reader refuses the old hash; Django's accepts the fallback
        assert _me(client) == 200
    with override_settings(SECRET_KEY="a third secret, no fallback " * 2):
        assert _me(client) == 403  # neither secret signs it now
