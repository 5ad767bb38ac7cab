"""Browser pages for live rooms: the lobby (host a room, or join one by code) and the room
page, one page for host and players, driven by the room's WebSocket."""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.csrf import ensure_csrf_cookie

from foolgame.pages.selectors import category_list
from foolgame.rooms.qr import qr_svg
from foolgame.rooms.selectors import room_host_id


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


@login_required
def projector(request: HttpRequest, code: str) -> HttpResponse:
    """The host's view for a projector: the join code, link and QR code in large type, who is
    in, how many have answered, the answer and who found it, the podium at the end. Driven by
    the room's WebSocket as the host (a second socket of theirs); anyone else gets 403."""
    code = code.upper()
    host_id = room_host_id(code=code)
    if host_id is None:
        raise Http404("No room has this code.")
    if host_id != request.user.pk:
        return render(request, "rooms/projector_forbidden.html", {"code": code}, status=403)
    join_url = request.build_absolute_uri(reverse("rooms:room", args=[code]))
    shown = join_url.split("://", 1)[-1]  # read aloud and typed without the scheme
    site, _, path = shown.partition("/")
    context = {"code": code, "join_url": join_url, "join_site": site, "join_path": "/" + path, "qr": qr_svg(join_url)}
    return render(request, "rooms/projector.html", context)
