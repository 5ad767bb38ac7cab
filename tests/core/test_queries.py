"""``core.queries.prepared_rows``: a query built and compiled once, then only run with new values."""

from __future__ import annotations

import pytest

from foolgame.claims.models import Claim
from foolgame.core.queries import prepared_rows
from tests.factories import ClaimFactory, PageFactory

pytestmark = pytest.mark.django_db


def test_a_prepared_read_finds_what_djangos_finds_for_every_value_and_is_built_once() -> None:
    pages = [PageFactory() for _ in range(3)]
    for n, page in enumerate(pages):
        for label in ("SUPPORTS", "REFUTES"):
            ClaimFactory(page=page, label=label, rating=1400.0 + 100 * n)
    built = []

    def build(page: int, label: str, rating: float):
        built.append((page, label, rating))
        return Claim.objects.filter(page_id=page, label=label, rating__gte=rating).order_by("id").values_list("id", "page_id", "label", "rating")

    found = 0
    for page in pages:
        for label in ("SUPPORTS", "REFUTES"):
            for rating in (1450.0, 1500.0):
                ours = prepared_rows("test-page-label", build, page=page.pk, label=label, rating=rating)
                theirs = [tuple(row) for row in Claim.objects.filter(page=page, label=label, rating__gte=rating).order_by("id").values_list("id", "page_id", "label", "rating")]
                assert ours == theirs
                found += len(ours)
    assert found == 8  # the first page's claims (1400) under both, the others' (1500, 1600) over both
    assert len(built) == 1  # built with stand-ins, once: every later read only ran the SQL


def test_a_list_is_prepared_per_length_and_its_items_all_count() -> None:
    pages = [PageFactory() for _ in range(4)]
    by_page = {page.pk: ClaimFactory(page=page).pk for page in pages}
    built = []

    def build(pages: list[int]):
        built.append(len(pages))
        return Claim.objects.filter(page_id__in=pages).order_by("id").values_list("id")

    for chosen in ([pages[0].pk, pages[1].pk], [pages[2].pk, pages[3].pk], [pages[1].pk, pages[2].pk, pages[3].pk]):
        assert prepared_rows("test-pages", build, pages=chosen) == [(by_page[pk],) for pk in sorted(chosen, key=by_page.get)]
    assert built == [2, 3]


def test_a_value_django_changes_or_writes_in_the_sql_is_left_to_django_every_time() -> None:
    ClaimFactory(text="Saturn has rings.")
    ClaimFactory(text="Mars is red.")
    built = []

    def contains(word: str):  # icontains wraps the value in % signs: no stand-in is found
        built.append(word)
        return Claim.objects.filter(text__icontains=word).values_list("text")

    assert prepared_rows("test-contains", contains, word="rings") == [("Saturn has rings.",)]
    assert prepared_rows("test-contains", contains, word="red") == [("Mars is red.",)]
    assert len(built) == 3  # the stand-in build, then Django's for each read

    def limited(count: int):  # a slice's bound is written in the SQL
        return Claim.objects.order_by("id").values_list("text")[:count]

    assert prepared_rows("test-limit", limited, count=1) == [("Saturn has rings.",)]
    assert len(prepared_rows("test-limit", limited, count=2)) == 2


def test_a_datetime_is_prepared_where_django_hands_it_over_as_it_is() -> None:
    """PostgreSQL takes an aware datetime as it is: prepared. SQLite's is adapted to text,
    where no stand-in can be found: Django's read every time, and the same rows."""
    from datetime import timedelta

    from django.db import connection
    from django.utils import timezone

    from foolgame.pages.models import Page

    pages = [PageFactory() for _ in range(3)]
    now = timezone.now()
    for n, page in enumerate(pages):
        Page.objects.filter(pk=page.pk).update(created=now - timedelta(hours=n))
    built = []

    def build(since):
        built.append(since)
        return Page.objects.filter(created__gt=since).order_by("id").values_list("id", "created")

    for hours in (0.5, 1.5, 5):
        since = now - timedelta(hours=hours)
        ours = prepared_rows("test-since", build, since=since)
        assert ours == [tuple(row) for row in Page.objects.filter(created__gt=since).order_by("id").values_list("id", "created")]
        assert len(ours) == min(3, int(hours) + 1)
    assert len(built) == (1 if connection.vendor == "postgresql" else 4)
