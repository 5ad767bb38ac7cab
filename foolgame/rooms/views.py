"""Browser pages for live rooms: the lobby (host a room, or join one by code) and the room
page, one page for host and players, driven by the room's WebSocket."""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.csrf import ensure_csrf_cookie

from foolgame.pages.selectors import category_list


@login_required
@ensure_csrf_cookie
def lobby(request: HttpRequest) -> HttpResponse:
    code = request.GET.get("code", "").strip().upper()
    if code.isalnum():
        return redirect("rooms:room", code=code)
    options = settings.FM2_ROOMS
    context = {
        "categories": category_list(),
        "max_questions": options["MAX_QUESTIONS"],
        "default_questions": options["DEFAULT_QUESTIONS"],
        "min_seconds": options["MIN_SECONDS"],
        "max_seconds": settings.FM2["ROUND_SECONDS"],
    }
    return render(request, "rooms/lobby.html", context)


@login_required
@ensure_csrf_cookie
def room(request: HttpRequest, code: str) -> HttpResponse:
    """The page joins the room (POST /api/rooms/<code>/join) and opens its socket."""
    return render(request, "rooms/room.html", {"code": code.upper(), "clue_cost": settings.FM2["CLUE_COST_SECONDS"]})
