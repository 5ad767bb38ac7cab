"""Browser pages for voting: the play page (driven by the round's WebSocket) and the leaderboard."""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.csrf import ensure_csrf_cookie

from foolgame.pages.selectors import category_list
from foolgame.players.selectors import player_points
from foolgame.voting.ratings import skill_table
from foolgame.voting.selectors import leaderboard

KINDS = [("total", "Total"), ("verify", "Spotting"), ("fool", "Hard to check"), ("write", "Writing"), ("like", "Likes"), ("skill", "Skill")]


@login_required
@ensure_csrf_cookie
def play(request: HttpRequest) -> HttpResponse:
    context = {
        "categories": category_list(),
        "points": player_points(player=request.user),
        "game": {"round_seconds": 180, "clue_cost": 10},
    }
    return render(request, "voting/play.html", context)


def leaderboard_page(request: HttpRequest) -> HttpResponse:
    kind = request.GET.get("kind", "total")
    if kind not in dict(KINDS):
        kind = "total"
    rows = skill_table() if kind == "skill" else leaderboard(kind=kind)
    context = {"rows": rows, "kind": kind, "kinds": KINDS, "skill_min_votes": settings.FM2_RATINGS["SKILL_MIN_VOTES"]}
    return render(request, "voting/leaderboard.html", context)
