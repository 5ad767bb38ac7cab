"""Browser pages for voting: the play page (driven by the round's WebSocket), the leaderboard
and the player's notifications (the news of their claims' votes, likes and moderation)."""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.csrf import ensure_csrf_cookie

from foolgame.core import hooks
from foolgame.pages.models import Page
from foolgame.claims.selectors import category_list
from foolgame.players.selectors import player_points, points_shown
from foolgame.voting.ratings import skill_table
from foolgame.voting.notifications import PAGE_SIZE, notification_message, notifications_mark_read, notifications_of
from foolgame.voting.selectors import leaderboard
from scoring.ratings import PROVISIONAL_DEVIATION

KINDS = [("total", "Total"), ("verify", "Spotting"), ("fool", "Hard to check"), ("write", "Writing"), ("like", "Likes"), ("check", "Checking"), ("model", "Fooling the model"), ("skill", "Skill")]


@login_required
@ensure_csrf_cookie
def play(request: HttpRequest) -> HttpResponse:
    """``?page=<id>`` deals the page's rounds from that page, ``?category=<slug>`` preselects
    the category (the page's "Play a round" buttons); the deal itself is the server's."""
    game = settings.FM2
    mine = hooks.player_settings.get().settings_for(player_id=request.user.pk)  # a study's arm may change these
    page_id = request.GET.get("page", "")
    context = {
        "categories": category_list(),
        "chosen_category": request.GET.get("category", ""),
        "deal_page": Page.objects.filter(pk=int(page_id)).first() if page_id.isdigit() else None,
        "points": player_points(player=request.user),
        "game": {
            "round_seconds": mine["round_seconds"],
            "clue_cost": mine["clue_seconds"],
            "hints": mine["hints"],
            "points_shown": mine["points_shown"],
            "pot": game["ROUND_POT"],
            "max_step": round(settings.FM2_RATINGS["PLAYER_MAX_STEP"]),
        },
    }
    return render(request, "voting/play.html", context)


def leaderboard_page(request: HttpRequest) -> HttpResponse:
    kind = request.GET.get("kind", "total")
    if kind not in dict(KINDS):
        kind = "total"
    rows = skill_table() if kind == "skill" else leaderboard(kind=kind)
    machines = [row for rows_ in hooks.skill_board_machines.send() for row in rows_] if kind == "skill" else []
    context = {"rows": rows, "machines": machines, "kind": kind, "kinds": KINDS, "skill_min_votes": settings.FM2_RATINGS["SKILL_MIN_VOTES"], "provisional": round(PROVISIONAL_DEVIATION)}
    return render(request, "voting/leaderboard.html", context)


@login_required
def notifications(request: HttpRequest) -> HttpResponse:
    """The player's latest news; showing it marks the listed ones read (they stay marked
    "new" on this page, so the player sees which came since their last visit)."""
    notes = list(notifications_of(player=request.user)[:PAGE_SIZE])
    show_points = points_shown(player_id=request.user.pk)  # a study's arm may hide them
    rows = [{"note": note, "message": notification_message(note, show_points=show_points), "new": note.read_at is None} for note in notes]
    new_ids = [note.pk for note in notes if note.read_at is None]
    if new_ids:
        notifications_mark_read(player=request.user, ids=new_ids)
    return render(request, "players/notifications.html", {"rows": rows, "new_count": len(new_ids)})
