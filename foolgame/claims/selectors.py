"""Reads of the corpus with its claims: categories and pages with how many active claims
they hold (the pages app, a layer below, knows nothing of claims)."""

from __future__ import annotations

from typing import Any

from django.db.models import Count, IntegerField, OuterRef, Q, QuerySet, Subquery
from django.db.models.functions import Coalesce

from foolgame.claims.models import Claim
from foolgame.core.queries import prepared_rows
from foolgame.pages.models import Category, Page, Sentence


def category_list() -> QuerySet[Category]:
    """Categories with how many pages and active claims they hold."""
    return Category.objects.annotate(
        page_count=Count("pages", distinct=True),
        claim_count=Count("pages__claims", filter=Q(pages__claims__status="active"), distinct=True),
    ).order_by("name")


def _count_of(rows: QuerySet[Any]) -> Coalesce:
    """How many ``rows`` (a queryset correlated to its page by ``OuterRef``), as a scalar subquery."""
    counted = rows.order_by().values("page").annotate(n=Count("*")).values("n")
    return Coalesce(Subquery(counted, output_field=IntegerField()), 0)


def page_list(*, category: str | None = None, search: str | None = None) -> QuerySet[Page]:
    # Each count a subquery of its own along its page index: counted through two joins, each
    # page's sentences were multiplied by its claims before the counts dropped the repeats
    # (24 ms of the database's time for the demo's pages, a fifth of the REST mix's requests).
    pages = Page.objects.select_related("category").annotate(
        sentence_count=_count_of(Sentence.objects.filter(page=OuterRef("pk"), retired=False)),
        claim_count=_count_of(Claim.objects.filter(page=OuterRef("pk"), status="active")),
    )
    if category:
        pages = pages.filter(Q(category__slug=category) | Q(category__name__iexact=category))
    if search:
        pages = pages.filter(title__icontains=search)
    return pages.order_by("-priority", "title")


PAGE_SUMMARY_COLUMNS = ("id", "title", "category__name", "priority", "sentence_count", "claim_count")
"""A page's row in the pages list (``/api/pages``), in this order."""


def page_summary_rows(*, category: str | None = None, search: str | None = None) -> list[tuple[Any, ...]]:
    """``page_list``'s pages as rows of ``PAGE_SUMMARY_COLUMNS``. The list is a fifth of the
    REST mix's requests and building its query (a subquery per count) cost more than running
    it: all pages or one category's are read with SQL built once (``prepared_rows``); a
    title search (``icontains``) is Django's read each time."""
    if search:
        return [tuple(row) for row in page_list(category=category, search=search).values_list(*PAGE_SUMMARY_COLUMNS)]
    if category:
        return prepared_rows("page_summaries_in", lambda category: page_list(category=category).values_list(*PAGE_SUMMARY_COLUMNS), category=category)
    return prepared_rows("page_summaries", lambda: page_list().values_list(*PAGE_SUMMARY_COLUMNS))
