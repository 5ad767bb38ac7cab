"""A small page whose retrieval behaviour the authoring tests rely on, and logged-in API clients."""

from __future__ import annotations

import pytest
from django.test import Client

from foolgame.evidence.services import lexical_cache_clear
from foolgame.pages.models import Page, Sentence
from tests.factories import PASSWORD, CategoryFactory, PageFactory, UserFactory

EIFFEL = [
    ("History", "The Eiffel Tower is a wrought-iron lattice tower on the Champ de Mars in Paris."),
    ("History", "The company of the engineer Gustave Eiffel designed and built it from 1887 to 1889."),
    ("Design", "The tower is 330 metres tall, about the same height as an 81-storey building."),
    ("Design", "It was the tallest man-made structure in the world for 41 years until the Chrysler Building in New York City was finished in 1930."),
    ("Tourism", "The tower has three levels for visitors, with restaurants on the first and second levels."),
    # The same sentence twice: the first copy wins ties, so a claim can copy the second
    # without it being the retriever's top hit (the only way to break copies_gold alone).
    ("Tourism", "More than 300 million people have visited the tower since its construction in 1889."),
    ("Tourism", "More than 300 million people have visited the tower since its construction in 1889."),
]

# Gold: the "tallest structure" sentence; the top hit for it is the first sentence.
GOOD_CLAIM = "For four decades nothing humans built was higher than the Eiffel Tower."
TOO_EASY_CLAIM = "The Eiffel Tower was the tallest man-made structure in the world for 41 years."


@pytest.fixture(autouse=True)
def _fresh_hint_cache() -> None:
    # Page ids repeat across test databases; the evidence cache is keyed by id and version.
    lexical_cache_clear()


def make_eiffel() -> Page:
    page = PageFactory(title="Eiffel Tower", category=CategoryFactory(name="Geography", slug="geography"))
    for position, (header, text) in enumerate(EIFFEL):
        Sentence.objects.create(page=page, position=position, section_header=header, text=text)
    return page


@pytest.fixture
def eiffel(db) -> Page:
    return make_eiffel()


def sentence_ids(page: Page) -> list[int]:
    return list(page.sentences.order_by("position").values_list("id", flat=True))


def api_client(username: str) -> Client:
    UserFactory(username=username)
    client = Client(enforce_csrf_checks=True)
    assert client.login(username=username, password=PASSWORD)
    client.get("/api/auth/csrf")
    return client


def post(client: Client, url: str, data: dict | None = None):
    return client.post(
        url, data or {}, content_type="application/json", headers={"X-CSRFToken": client.cookies["csrftoken"].value}
    )


@pytest.fixture
def author(db) -> Client:
    return api_client("author")


@pytest.fixture
def rival(db) -> Client:
    return api_client("rival")


@pytest.fixture
def eiffel_live(transactional_db) -> Page:
    """The Eiffel Tower page, committed, for tests that serve it to a browser."""
    return make_eiffel()
