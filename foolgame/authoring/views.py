"""The writing page: take a task (in a category, or on a page the player chose), then write the claim."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.csrf import ensure_csrf_cookie
from django.views.decorators.http import require_http_methods

from django.conf import settings

from foolgame.core import clock, hooks
from foolgame.core.errors import ServiceError
from foolgame.authoring.models import WriteTask
from foolgame.authoring.selectors import open_write_tasks, pages_needing_claims
from foolgame.authoring.services import write_task_create
from foolgame.pages.models import Page
from foolgame.claims.selectors import category_list
from foolgame.pages.selectors import page_sentences, sections


# How many pages the topic menu offers (those most in need of claims first), besides the chosen one.
PAGE_MENU_SIZE = 200


def _page_id(raw: str | None) -> int | None:
    return int(raw) if raw and raw.isascii() and raw.isdigit() and len(raw) <= 18 else None


@login_required
@require_http_methods(["GET", "POST"])
def start(request: HttpRequest) -> HttpResponse:
    """GET: the menu (category or page); ``?page=<id>`` offers that page. POST: take the task.

    A GET hands out nothing (a link followed or prefetched must not use up one of the
    player's open-task slots): ``?page=<id>`` shows the page with one "Start writing"
    button. A page the player already holds an open task on opens that task instead of a
    new one, on GET and POST, so "write about this page" twice does not use up the cap.
    """
    if request.method == "POST":
        page_id = _page_id(request.POST.get("page"))
        if page_id is not None:
            held = open_write_tasks().filter(player=request.user, page_id=page_id).order_by("-created").first()
            if held is not None:
                return redirect("authoring:task", task_id=held.pk)
        try:
            task = write_task_create(player=request.user, category=request.POST.get("category") or None, page_id=page_id)
        except ServiceError as error:
            messages.error(request, error.message)
            back = page_id is not None and error.code != "unknown_page"
            return redirect(f"{reverse('authoring:start')}?page={page_id}" if back else reverse("authoring:start"))
        return redirect("authoring:task", task_id=task.pk)
    chosen = None
    raw = request.GET.get("page")
    if raw is not None:
        page_id = _page_id(raw)
        chosen = Page.objects.select_related("category").filter(pk=page_id).first() if page_id is not None else None
        if chosen is None:
            raise Http404("No such page.")
        held = open_write_tasks().filter(player=request.user, page=chosen).order_by("-created").first()
        if held is not None:  # already writing about it: back to that task (hands out nothing)
            return redirect("authoring:task", task_id=held.pk)
    menu = list(pages_needing_claims().only("id", "title", "category__name", "category__slug")[:PAGE_MENU_SIZE])
    return render(
        request,
        "authoring/start.html",
        {
            "categories": category_list(),
            "chosen": chosen,
            "chosen_writable": chosen is not None and pages_needing_claims().filter(pk=chosen.pk).exists(),
            "page_menu": _by_category(menu),
        },
    )


def _by_category(pages: list[Page]) -> list[tuple[str, list[Page]]]:
    """The menu's pages grouped under their category names (alphabetical, "Other pages" last), titles sorted."""
    groups: dict[str, list[Page]] = {}
    for page in pages:
        groups.setdefault(page.category.name if page.category else "", []).append(page)
    ordered = sorted(groups.items(), key=lambda item: (item[0] == "", item[0].casefold()))
    return [(name or "Other pages", sorted(group, key=lambda page: page.title.casefold())) for name, group in ordered]


@login_required
@ensure_csrf_cookie
def task(request: HttpRequest, task_id: int) -> HttpResponse:
    chosen = get_object_or_404(WriteTask.objects.select_related("page", "page__category"), pk=task_id)
    if chosen.player_id != request.user.pk:
        raise Http404("No such task.")
    page = chosen.page
    now = clock.now()
    # The page counts down from the server's own seconds, never from the browser's clock (a
    # phone's clock may be minutes off); whether the task is used or expired is said here,
    # and later by the API's 409/410, never guessed by the page.
    seconds_left = max(0, int((chosen.write_by - now).total_seconds()))
    mine = hooks.player_settings.get().settings_for(player_id=request.user.pk)  # a study's arm may change these
    return render(
        request,
        "authoring/write.html",
        {
            "task": chosen,
            "page": page,
            "sections": sections(list(page_sentences(page=page))),
            "expired": chosen.expires_at <= now,
            "seconds_left": seconds_left,
            "clock": f"{seconds_left // 60}:{seconds_left % 60:02d}",
            "expires_in": max(0, int((chosen.expires_at - now).total_seconds())),
            "min_words": settings.FM2["CLAIM_MIN_WORDS"],
            "max_words": settings.FM2["CLAIM_MAX_WORDS"],
            "game": {"hints": mine["hints"], "points_shown": mine["points_shown"]},
        },
    )
