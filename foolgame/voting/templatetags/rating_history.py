"""The profile's rating (``players/me.html``): the one number the game shows for a player's
skill, with its deviation and a ``?`` while provisional, and its history as a small chart
drawn here as an SVG polyline (nothing fetched, no script). The players app stands below
voting, whose rounds hold each vote's rating before and after, so its page asks through this
tag, as it does for the round history."""

from __future__ import annotations

from typing import Any

from django import template

from foolgame.players.selectors import player_skill
from foolgame.voting.models import Round

register = template.Library()

POINTS = 50  # the chart's latest rated votes
WIDTH, HEIGHT, PAD = 300, 80, 6


def chart_points(ratings: list[float]) -> dict[str, Any]:
    """The polyline of ``ratings`` (oldest first) in a WIDTH x HEIGHT box, the lowest and
    highest rating it spans (at least 100 apart, so a flat line stays flat)."""
    low, high = min(ratings), max(ratings)
    if high - low < 100:
        middle = (high + low) / 2
        low, high = middle - 50, middle + 50
    step = (WIDTH - 2 * PAD) / max(1, len(ratings) - 1)
    scale = (HEIGHT - 2 * PAD) / (high - low)
    points = " ".join(f"{PAD + i * step:.1f},{HEIGHT - PAD - (value - low) * scale:.1f}" for i, value in enumerate(ratings))
    return {"points": points, "low": round(low), "high": round(high), "width": WIDTH, "height": HEIGHT}


@register.simple_tag(takes_context=True)
def rating_history(context: dict[str, Any]) -> dict[str, Any] | None:
    """The logged-in player's rating (``player_skill``: rating, deviation, provisional,
    votes) and the chart of its last POINTS rated votes and give-ups; None before the first."""
    user = context.get("user")
    if user is None or not user.is_authenticated:
        return None
    skill = player_skill(player_id=user.pk)
    if skill is None:
        return None
    rows = list(
        Round.objects.filter(player_id=user.pk, rating_after__isnull=False)
        .order_by("-ended_at", "-id")
        .values_list("rating_before", "rating_after")[:POINTS]
    )[::-1]
    ratings = ([rows[0][0]] if rows and rows[0][0] is not None else []) + [after for _, after in rows]
    return {**skill, "chart": chart_points(ratings) if len(ratings) > 1 else None, "shown": len(rows)}
