"""Reads of the corpus with its claims: categories and pages with how many active claims
they hold (the pages app, a layer below, knows nothing of claims)."""

from __future__ import annotations

from django.db.models import Count, Q, QuerySet

from foolgame.pages.models import Category, Page


def category_list() -> QuerySet[Category]:
    """Categories with how many pages and active claims they hold."""
    return Category.objects.annotate(
        page_count=Count("pages", distinct=True),
        claim_count=Count("pages__claims", filter=Q(pages__claims__status="active"), distinct=True),
    ).order_by("name")


def page_list(*, category: str | None = None, search: str | None = None) -> QuerySet[Page]:
    pages = Page.objects.select_related("category").annotate(
        sentence_count=Count("sentences", filter=Q(sentences__retired=False), distinct=True),
        claim_count=Count("claims", filter=Q(claims__status="active"), distinct=True),
    )
    if category:
        pages = pages.filter(Q(category__slug=category) | Q(category__name__iexact=category))
    if search:
        pages = pages.filter(title__icontains=search)
    return pages.order_by("-priority", "title")
