from __future__ import annotations

import pytest
from django.test import Client

from foolgame.pages.models import Sentence
from tests.factories import CategoryFactory, ClaimFactory, PageFactory, SentenceFactory

pytestmark = pytest.mark.django_db


def test_categories_count_pages_and_active_claims(client: Client) -> None:
    history = CategoryFactory(name="History")
    page = PageFactory(category=history)
    PageFactory(category=history)
    ClaimFactory(page=page)
    ClaimFactory(page=page, status="removed")
    body = client.get("/api/categories").json()
    assert body == [{"id": history.pk, "name": "History", "slug": "history", "page_count": 2, "claim_count": 1}]


def test_pages_filter_by_category_and_list_priority_first(client: Client) -> None:
    sports, music = CategoryFactory(name="Sports"), CategoryFactory(name="Music")
    PageFactory(title="Zola", category=sports, priority=True)
    PageFactory(title="Alpha", category=sports)
    PageFactory(title="Bowie", category=music)
    titles = [p["title"] for p in client.get("/api/pages?category=sports").json()]
    assert titles == ["Zola", "Alpha"]
    assert [p["title"] for p in client.get("/api/pages?category=Music").json()] == ["Bowie"]


def test_page_detail_lists_sentences_in_order_without_retired_ones(client: Client) -> None:
    page = PageFactory(title="Saturn")
    second = SentenceFactory(page=page, position=1, text="It has rings.", section_header="Rings")
    first = SentenceFactory(page=page, position=0, text="Saturn is a planet.")
    SentenceFactory(page=page, position=2, text="An old sentence.", retired=True)
    body = client.get(f"/api/pages/{page.pk}").json()
    assert body["sentences"] == [
        {"id": first.pk, "text": "Saturn is a planet.", "section_header": ""},
        {"id": second.pk, "text": "It has rings.", "section_header": "Rings"},
    ]


def test_unknown_page_is_a_404_with_the_error_shape(client: Client) -> None:
    response = client.get("/api/pages/999999")
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"
