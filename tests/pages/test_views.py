from __future__ import annotations

import pytest
from django.test import Client

from tests.factories import CategoryFactory, PageFactory, SentenceFactory

pytestmark = pytest.mark.django_db


def test_home_lists_categories_with_page_counts(client: Client) -> None:
    science = CategoryFactory(name="Science")
    PageFactory(category=science)
    PageFactory(category=science)
    html = client.get("/").content.decode()
    assert "Science" in html and "2 pages" in html


def test_home_without_pages_explains_how_to_import(client: Client) -> None:
    assert "import_fm2" in client.get("/").content.decode()


def test_page_view_groups_sentences_by_section_and_escapes_text(client: Client) -> None:
    page = PageFactory(title="Saturn")
    SentenceFactory(page=page, position=0, text="Saturn is the sixth planet.")
    SentenceFactory(page=page, position=1, section_header="Rings", text="<script>alert(1)</script> rings.")
    html = client.get(f"/pages/{page.pk}/").content.decode()
    assert "<h2>Rings</h2>" in html
    assert html.index("Saturn is the sixth planet.") < html.index("<h2>Rings</h2>")
    assert "<script>alert(1)</script>" not in html and "&lt;script&gt;" in html


def test_category_view_lists_its_pages(client: Client) -> None:
    sports = CategoryFactory(name="Sports")
    PageFactory(title="Honus Wagner", category=sports)
    PageFactory(title="Hamlet")
    html = client.get("/categories/sports/").content.decode()
    assert "Honus Wagner" in html and "Hamlet" not in html
