"""Browser pages for moderators: the queue (actions go through the REST API) and the audit log."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.csrf import ensure_csrf_cookie

from foolgame.moderation import selectors
from foolgame.moderation.services import is_moderator
from foolgame.pages.selectors import category_list

QUEUE_PAGE_SIZE = 50
REASON_NAMES = [("", "Any reason"), ("reports", "Reported"), ("too_hard", "Too hard"), ("too_easy", "Too easy")]


def moderators_only(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """403 for everyone outside the moderators group, logged in or not."""

    @wraps(view)
    def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if not is_moderator(request.user):
            return render(request, "moderation/forbidden.html", status=403)
        return view(request, *args, **kwargs)

    return wrapped


@moderators_only
@ensure_csrf_cookie
def queue(request: HttpRequest) -> HttpResponse:
    reason = request.GET.get("reason") or None
    if reason not in selectors.REASONS:
        reason = None
    category = request.GET.get("category") or None
    claims = selectors.moderation_queue(reason=reason, category=category)
    context = {
        "items": [selectors.claim_review(c) for c in claims[:QUEUE_PAGE_SIZE]],
        "count": claims.count(),
        "page_size": QUEUE_PAGE_SIZE,
        "reason": reason or "",
        "category": category or "",
        "reasons": REASON_NAMES,
        "categories": category_list(),
        "threshold": settings.FM2_MODERATION["TOO_HARD_THRESHOLD"],
    }
    return render(request, "moderation/queue.html", context)


@moderators_only
def audit_log(request: HttpRequest) -> HttpResponse:
    claim = request.GET.get("claim")
    records = selectors.audit_records(claim_id=int(claim) if claim and claim.isdigit() else None)[:200]
    return render(request, "moderation/audit.html", {"records": records, "claim": claim or ""})
