from __future__ import annotations

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from foolgame.claims.models import Claim
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


def test_pages_count_their_live_sentences_and_active_claims_each_apart(client: Client) -> None:
    """A page's counts are its own: sentences not retired, claims active, however many of the
    other there are (counted through one join, each was multiplied by the other), and 0 when
    it has none."""
    full, empty = PageFactory(title="Full"), PageFactory(title="Empty")
    live = [SentenceFactory(page=full, position=position) for position in range(4)]
    SentenceFactory(page=full, position=9, retired=True)
    for _ in range(3):
        ClaimFactory(page=full, gold=live[:2])
    ClaimFactory(page=full, status="removed", gold=live[:1])
    SentenceFactory(page=empty, position=0, retired=True)
    counts = {p["title"]: (p["sentence_count"], p["claim_count"]) for p in client.get("/api/pages").json()}
    assert counts == {"Full": (4, 3), "Empty": (0, 0)}


def test_the_page_list_says_what_its_serializer_says_of_each_page(client: Client) -> None:
    """The list is read as rows (``page_summaries``) but documented by ``PageSummarySerializer``:
    the two agree field for field, a page without a category included."""
    from foolgame.claims.apis import PageSummarySerializer
    from foolgame.claims.selectors import page_list

    page = PageFactory(title="Mars", category=CategoryFactory(name="Planets"), priority=True)
    SentenceFactory(page=page, position=0)
    ClaimFactory(page=page)
    PageFactory(title="Loose", category=None)
    body = client.get("/api/pages").json()
    assert body == PageSummarySerializer(page_list(), many=True).data
    assert {p["title"]: p["category"] for p in body} == {"Mars": "Planets", "Loose": None}
    # One category's pages, by slug or name, and a title search: each as its serializer has it.
    for query, chosen in (({"category": "planets"}, page_list(category="planets")), ({"category": "PLANETS"}, page_list(category="PLANETS")),
                          ({"q": "oos"}, page_list(search="oos")), ({"category": "planets", "q": "ar"}, page_list(category="planets", search="ar"))):
        assert client.get("/api/pages", query).json() == PageSummarySerializer(chosen, many=True).data != []
    assert client.get("/api/pages", {"category": "nowhere"}).json() == []
    # The list counts what is stored now: a claim removed and a sentence retired since.
    counts = lambda: [(p["sentence_count"], p["claim_count"]) for p in client.get("/api/pages", {"category": "Planets"}).json()]  # noqa: E731
    sentences = page.sentences.filter(retired=False).count()
    assert counts() == [(sentences, 1)]
    Claim.objects.filter(page=page).update(status="removed")
    SentenceFactory(page=page, position=1)
    assert counts() == [(sentences + 1, 0)]
    from foolgame.core import queries

    plans = {key[0]: plan for key, plan in queries._COMPILED.items() if key[0] in ("page_summaries", "page_summaries_in")}
    assert set(plans) == {"page_summaries", "page_summaries_in"}
    if connection.vendor == "postgresql":  # SQLite escapes iexact's value: Django's read there
        assert queries._DJANGO not in plans.values()


def test_the_page_detail_says_what_its_serializer_says(client: Client) -> None:
    """The detail is written out (``page_detail``) but documented by ``PageDetailSerializer``:
    the two agree field for field, sections in reading order, with and without a category."""
    from foolgame.pages.apis import PageDetailSerializer
    from foolgame.pages.models import Page
    from foolgame.pages.selectors import page_sentences, reading_order

    for category in (CategoryFactory(name="Planets"), None):
        page = PageFactory(title=f"Venus {category}", category=category, priority=category is None)
        for position, header in enumerate(["Orbit", "", "Orbit | Speed", "Summary"]):
            SentenceFactory(page=page, position=position, text=f"Sentence {position}.", section_header=header)
        stored = Page.objects.select_related("category").get(pk=page.pk)
        stored.sentences_in_order = reading_order(list(page_sentences(page=stored)))
        with CaptureQueriesContext(connection) as queries:
            body = client.get(f"/api/pages/{page.pk}").json()
        assert len(queries.captured_queries) == 2  # the page, its sentences: none per sentence
        assert body == PageDetailSerializer(stored).data
        assert [s["text"] for s in body["sentences"]] == ["Sentence 1.", "Sentence 3.", "Sentence 0.", "Sentence 2."]
    from foolgame.core import queries as prepared

    assert prepared._COMPILED["page_detail"] is not prepared._DJANGO  # the page read with SQL compiled once
    if connection.vendor == "postgresql":
        assert prepared._COMPILED[("page_sentence_rows", "page_id")] is not prepared._DJANGO
    assert client.get(f"/api/pages/{page.pk + 1000}").json() == {"error": {"code": "not_found", "message": "Not found."}}


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
