"""GET /api/pages/<id>/hints over HTTP (API.md), with the error shape of the whole API."""

from __future__ import annotations

import pytest
from django.test import Client

from foolgame.pages.models import Page
from tests.evidence.conftest import sentence
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def author(client: Client) -> Client:
    client.force_login(UserFactory())
    return client


def test_hints_are_the_best_sentences_with_highlights(author: Client, saturn: Page) -> None:
    response = author.get(f"/api/pages/{saturn.pk}/hints", {"q": "Galileo saw the rings in 1610"})
    assert response.status_code == 200
    hints = response.json()
    galileo = sentence(saturn, "Galileo")
    assert hints[0] == {
        "sentence_id": galileo.pk,
        "text": galileo.text,
        "section_header": "Observation",
        "highlights": [[0, 7], [35, 40], [64, 68]],
    }
    assert [galileo.text[start:end] for start, end in hints[0]["highlights"]] == ["Galileo", "rings", "1610"]
    assert len(hints) <= 10


def test_blank_draft_gives_an_empty_list(author: Client, saturn: Page) -> None:
    assert author.get(f"/api/pages/{saturn.pk}/hints").json() == []
    assert author.get(f"/api/pages/{saturn.pk}/hints", {"q": "  "}).json() == []


def test_draft_over_2000_characters_is_a_400_invalid_query(author: Client, saturn: Page) -> None:
    response = author.get(f"/api/pages/{saturn.pk}/hints", {"q": "a" * 2001})
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "invalid_query"


def test_unknown_page_is_a_404(author: Client) -> None:
    response = author.get("/api/pages/999999/hints", {"q": "rings"})
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"


def test_hints_are_for_logged_in_players_only(client: Client, saturn: Page) -> None:
    response = client.get(f"/api/pages/{saturn.pk}/hints", {"q": "rings"})
    assert response.status_code == 403
    assert response.json()["error"]["code"] == "not_authenticated"


def test_hints_are_described_in_the_openapi_schema(client: Client) -> None:
    response = client.get("/api/schema/", {"format": "json"})
    assert response.status_code == 200
    operation = response.json()["paths"]["/api/pages/{page_id}/hints"]["get"]
    assert {p["name"] for p in operation["parameters"]} == {"page_id", "q"}
    assert {"200", "400", "403", "404"} <= set(operation["responses"])
