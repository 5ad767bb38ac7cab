"""The fact-check page: the claim, its evidence and the answer buttons, driven by
``checks.js`` over the REST endpoints (``POST /api/checks``, ``POST /api/checks/<id>``)."""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.csrf import ensure_csrf_cookie

from foolgame.checks import selectors, services
from foolgame.core import clock
from foolgame.players.selectors import player_points, points_shown


@login_required
@ensure_csrf_cookie
def checks_page(request: HttpRequest) -> HttpResponse:
    """``server_now`` lets the script read ``expires_at`` on the server's clock, whatever the
    device's clock says; ``resume`` says a check is open, so the page asks for it at once (a
    reload resumes it) instead of waiting for the player to start."""
    now = clock.now()
    tally = services.tally_progress(player=request.user)
    shown = points_shown(player_id=request.user.pk)
    context = {
        # A study's arm may hide points: then the page is given none to show.
        "points": player_points(player=request.user)["check"] if shown else "",
        "points_shown": shown,
        "tally": tally,
        "tally_size": tally["size"],
        "streak": services.current_streak(player=request.user, now=now),
        "seconds": settings.FM2_CHECKS["SECONDS"],
        "server_now": now.isoformat(),
        "resume": selectors.open_check(player=request.user, now=now) is not None,
    }
    return render(request, "checks/checks.html", context)
