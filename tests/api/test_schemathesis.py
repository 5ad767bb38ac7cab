"""Schemathesis against /api/schema/ as a signed-in player: every operation, with requests
built from the schema (valid and not), answers within its documented statuses, content type
and response schema, and never with a 500.

Bounded: a few examples an operation (``EXAMPLES``), against the real ASGI application on
loopback (``asgi_live_server``) on the test database; the whole run takes well under two minutes. ``-m schemathesis`` runs it
alone."""

from __future__ import annotations

import pytest
import schemathesis
from django.test import Client
from hypothesis import HealthCheck, Phase, given, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import content_type_conformance, response_schema_conformance, status_code_conformance

from tests.factories import CategoryFactory, ClaimFactory, PageFactory, SentenceFactory, UserFactory

pytestmark = [pytest.mark.schemathesis, pytest.mark.django_db(transaction=True)]

EXAMPLES = 8
CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance]
# Logging out would end the session the rest of the run plays in.
SKIPPED = {("POST", "/api/auth/logout")}


@pytest.fixture
def api_schema(asgi_live_server):
    """The schema as the server publishes it, its operations called on the live server."""
    return schemathesis.openapi.from_url(asgi_live_server + "/api/schema/?format=json")


@pytest.fixture
def player() -> dict[str, dict[str, str]]:
    """A signed-in player on a game with something in it (a category, pages, claims of
    others), as the session and CSRF cookies and header every request carries."""
    category = CategoryFactory()
    author = UserFactory(username="schema-author")
    for _ in range(2):
        page = PageFactory(category=category)
        sentences = [SentenceFactory(page=page) for _ in range(6)]
        for label in ("SUPPORTS", "REFUTES"):
            ClaimFactory(page=page, author=author, label=label, gold=[sentences[0]])
    UserFactory(username="schema-player")
    client = Client()
    client.force_login(UserFactory._meta.model.objects.get(username="schema-player"))
    client.get("/api/auth/csrf")
    cookies = {name: morsel.value for name, morsel in client.cookies.items()}
    return {"cookies": cookies, "headers": {"X-CSRFToken": cookies["csrftoken"]}}


def test_every_operation_answers_as_its_schema_says(api_schema, player, asgi_live_server) -> None:
    """Each operation in turn, its examples drawn by Hypothesis from the schema; every
    failure of every operation is collected, so one run names them all."""
    import requests

    me = requests.get(asgi_live_server + "/api/me", cookies=player["cookies"], timeout=30)
    assert me.status_code == 200 and me.json()["username"] == "schema-player"  # the run plays signed in
    failures: dict[str, str] = {}
    operations = 0
    for result in api_schema.get_all_operations():
        operation = result.ok()
        if (operation.method.upper(), operation.path) in SKIPPED:
            continue
        operations += 1

        @settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None, phases=[Phase.explicit, Phase.generate], suppress_health_check=list(HealthCheck))
        @given(case=operation.as_strategy())
        def answers_as_documented(case) -> None:
            response = case.call(headers=player["headers"], cookies=player["cookies"], timeout=30)
            case.validate_response(response, checks=CHECKS)

        try:
            answers_as_documented()
        except Exception as failure:  # noqa: BLE001 - each operation's failure is reported, all at once
            failures[f"{operation.method.upper()} {operation.path}"] = str(failure)[:1500]
    assert operations >= 27
    assert failures == {}, "\n\n".join(f"{name}:\n{why}" for name, why in failures.items())
