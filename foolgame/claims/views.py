"""Browser pages for the corpus and its claims: the home page, categories and a page's
article view with its claim counts (URL names ``pages:...``)."""

from __future__ import annotations

from django.db.models import Count, Q
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render

from foolgame.claims.models import Claim
from foolgame.pages.models import Category, Page
from foolgame.claims.selectors import category_list, page_list
from foolgame.pages.selectors import WRITABLE_MIN_SENTENCES, page_sentences, sections


def home(request: HttpRequest) -> HttpResponse:
    categories = list(category_list())
    uncategorised = Page.objects.filter(category__isnull=True).count()
    context = {
        "categories": categories,
        "uncategorised": uncategorised,
        "page_total": Page.objects.count(),
        "claim_total": Claim.objects.filter(status=Claim.Status.ACTIVE).count(),
        "priority_pages": page_list().filter(priority=True)[:8],
    }
    return render(request, "pages/home.html", context)


def category(request: HttpRequest, slug: str) -> HttpResponse:
    chosen = get_object_or_404(Category, slug=slug)
    return render(request, "pages/category.html", {"category": chosen, "pages": page_list(category=slug)})


def uncategorised(request: HttpRequest) -> HttpResponse:
    pages = page_list().filter(category__isnull=True)
    return render(request, "pages/category.html", {"category": None, "pages": pages})


def page(request: HttpRequest, page_id: int) -> HttpResponse:
    article = get_object_or_404(Page.objects.select_related("category"), pk=page_id)
    claim_counts = article.claims.filter(status=Claim.Status.ACTIVE).aggregate(
        total=Count("id"), true=Count("id", filter=Q(label=Claim.Label.SUPPORTS))
    )
    sentences = list(page_sentences(page=article))
    return render(
        request,
        "pages/page.html",
        {
            "page": article,
            "sections": sections(sentences),
            "claim_counts": claim_counts,
            # "Write a claim about this page" only where a write task can be given.
            "writable": len(sentences) >= WRITABLE_MIN_SENTENCES,
            # "Play a round from this page" where the page holds a true and a false claim
            # (whether a pair is left for this player is the deal's to say).
            "playable": 0 < claim_counts["true"] < claim_counts["total"],
        },
    )
