"""Guest accounts play live rooms and nothing else: every request of a guest to a path that
``FM2_GUESTS["PATHS"]`` does not name is refused before its view runs (403: JSON
``guest_not_allowed`` under /api/, a page elsewhere). A list of what is open, not of what is
closed: a new endpoint stays closed to guests until it is named there."""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render

from foolgame.core.errors import error_body
from foolgame.players.roles import is_guest

MESSAGE = "Guest accounts play live rooms only. Set a password to keep your account and play everything."


@lru_cache(maxsize=4)
def _open_paths(patterns: tuple[str, ...]) -> re.Pattern[str]:
    return re.compile("|".join(f"(?:{p})" for p in patterns))


def guest_may_reach(path: str) -> bool:
    return bool(_open_paths(tuple(settings.FM2_GUESTS["PATHS"])).match(path))


class GuestLimitsMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        user = getattr(request, "user", None)
        if user is not None and user.is_authenticated and not guest_may_reach(request.path) and is_guest(user):
            if request.path.startswith("/api/"):
                return JsonResponse(error_body("guest_not_allowed", MESSAGE), status=403)
            return render(request, "players/guest_not_allowed.html", {"message": MESSAGE}, status=403)
        return self.get_response(request)
