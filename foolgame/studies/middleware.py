"""A study's participant account does the study's work and nothing outside it: every request
of a participant to a path of ``FM2_STUDIES["CLOSED_PATHS"]`` (rooms, moderation, exports)
is refused before its view runs (403: JSON ``participant_not_allowed`` under /api/, a page
elsewhere), as ``GuestLimitsMiddleware`` refuses guests. Only those paths ask the database.

It also gives every request ``request.study_banner``, the participant's way back to their
study from the game's own pages (``base.html`` includes ``studies/study_banner.html`` when it
is set): lazy, so only a page that renders it asks the database, and the lower apps whose
pages show it never import studies."""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.utils.functional import SimpleLazyObject

from foolgame.core.errors import error_body
from foolgame.studies.services import participant_of, participant_state, study_entry_path

MESSAGE = "This account is a study's participant account: it does the study's work, not rooms, moderation or exports."


@lru_cache(maxsize=4)
def _closed_paths(patterns: tuple[str, ...]) -> re.Pattern[str]:
    return re.compile("|".join(f"(?:{p})" for p in patterns))


def closed_to_participants(path: str) -> bool:
    return bool(_closed_paths(tuple(settings.FM2_STUDIES["CLOSED_PATHS"])).match(path))


def study_banner(request: HttpRequest) -> dict[str, object] | None:
    """What the banner on the game's pages shows a participant: the study, the work done of
    the work asked (the server's count, ``participant_state``) and the link back to their
    progress page; None for every other account, and on the progress page itself. Counts
    only: no status, label or point, so it says nothing a page must not (an attention check's
    outcome, the points an arm hides)."""
    participant = participant_of(getattr(request, "user", None))
    if participant is None:
        return None
    url = study_entry_path(participant.study)
    if request.path == url:
        return None
    state = participant_state(participant=participant)
    return {"name": participant.study.name, "url": url, "done": state["done"], "total": state["total"]}


class ParticipantLimitsMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        request.study_banner = SimpleLazyObject(lambda: study_banner(request))  # type: ignore[attr-defined]
        user = getattr(request, "user", None)
        if user is not None and user.is_authenticated and closed_to_participants(request.path):
            participant = participant_of(user)
            if participant is not None:
                if request.path.startswith("/api/"):
                    return JsonResponse(error_body("participant_not_allowed", MESSAGE), status=403)
                context = {"message": MESSAGE, "study": participant.study}
                return render(request, "studies/participant_not_allowed.html", context, status=403)
        return self.get_response(request)
