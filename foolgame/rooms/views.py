"""Browser pages for live rooms: the lobby (host a room, or join one by code) and the room
page, one page for host and players, driven by the room's WebSocket."""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth import login
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.csrf import ensure_csrf_cookie

from foolgame.core.errors import ServiceError
from foolgame.claims.selectors import category_list
from foolgame.players.roles import is_guest
from foolgame.rooms.services import room_join_as_guest
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
        "is_guest": is_guest(request.user),
        "categories": category_list(),
        "max_questions": options["MAX_QUESTIONS"],
        "default_questions": options["DEFAULT_QUESTIONS"],
        "min_seconds": options["MIN_SECONDS"],
        "max_seconds": settings.FM2["ROUND_SECONDS"],
    }
    return render(request, "rooms/lobby.html", context)


@ensure_csrf_cookie
def room(request: HttpRequest, code: str) -> HttpResponse:
    """The page joins the room (POST /api/rooms/<code>/join) and opens its socket. Someone
    not logged in gets a nickname form instead: posted here, it joins them as a guest
    (``room_join_as_guest``) and comes back to the room."""
    if not request.user.is_authenticated:
        return _guest_join(request, code.upper())
    context = {"code": code.upper(), "clue_cost": settings.FM2["CLUE_COST_SECONDS"], "is_guest": is_guest(request.user)}
    return render(request, "rooms/room.html", context)


def _guest_join(request: HttpRequest, code: str) -> HttpResponse:
    context = {"code": code, "nickname": "", "error": "", "max_length": settings.FM2_GUESTS["NICKNAME_MAX_LENGTH"]}
    if request.method != "POST":
        return render(request, "rooms/guest_join.html", context)
    nickname = str(request.POST.get("nickname", ""))[:200]
    try:
        guest, _ = room_join_as_guest(code=code, nickname=nickname, ip=request.META.get("REMOTE_ADDR"))
    except ServiceError as error:
        context.update(nickname=nickname, error=error.message)
        return render(request, "rooms/guest_join.html", context, status=error.status_code)
    login(request, guest, backend="django.contrib.auth.backends.ModelBackend")
    return redirect("rooms:room", code=code)


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
