"""Reads of the corpus."""

from __future__ import annotations

from django.db.models import Count, Q, QuerySet

from foolgame.pages.models import Category, Page, Sentence


# A page needs at least this many live sentences to be written about (a gold sentence and
# something else for the retriever to find).
WRITABLE_MIN_SENTENCES = 2


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


def page_sentences(*, page: Page) -> QuerySet[Sentence]:
    """A page's sentences in article order, without the ones a re-import retired."""
    return page.sentences.filter(retired=False).order_by("position", "id")


def sections(sentences: list[Sentence]) -> list[tuple[str, list[Sentence]]]:
    """Group consecutive sentences by section header, in order of first appearance."""
    order: list[str] = []
    grouped: dict[str, list[Sentence]] = {}
    for sentence in sentences:
        if sentence.section_header not in grouped:
            order.append(sentence.section_header)
            grouped[sentence.section_header] = []
        grouped[sentence.section_header].append(sentence)
    return [(header, grouped[header]) for header in order]
