"""The writing page: take a task (optionally in a category), then write the claim."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone
from django.views.decorators.csrf import ensure_csrf_cookie
from django.views.decorators.http import require_http_methods

from django.conf import settings

from foolgame.api.errors import ServiceError
from foolgame.authoring.models import WriteTask
from foolgame.authoring.services import write_task_create
from foolgame.pages.selectors import category_list, page_sentences, sections


@login_required
@require_http_methods(["GET", "POST"])
def start(request: HttpRequest) -> HttpResponse:
    if request.method == "POST":
        try:
            task = write_task_create(player=request.user, category=request.POST.get("category") or None)
        except ServiceError as error:
            messages.error(request, error.message)
            return redirect("authoring:start")
        return redirect("authoring:task", task_id=task.pk)
    return render(request, "authoring/start.html", {"categories": category_list()})


@login_required
@ensure_csrf_cookie
def task(request: HttpRequest, task_id: int) -> HttpResponse:
    chosen = get_object_or_404(WriteTask.objects.select_related("page", "page__category"), pk=task_id)
    if chosen.player_id != request.user.pk:
        raise Http404("No such task.")
    page = chosen.page
    return render(
        request,
        "authoring/write.html",
        {
            "task": chosen,
            "page": page,
            "sections": sections(list(page_sentences(page=page))),
            "expired": chosen.expires_at <= timezone.now(),
            "min_words": settings.FM2["CLAIM_MIN_WORDS"],
            "max_words": settings.FM2["CLAIM_MAX_WORDS"],
        },
    )
