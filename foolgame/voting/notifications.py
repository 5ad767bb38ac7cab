"""Grouped news for authors: how many players their claims fooled, how many liked them."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Q, Sum

from foolgame.players.models import LedgerEntry
from foolgame.voting import clock
from foolgame.voting.models import Like, NotificationCursor, Vote


def _plural(count: int, one: str, many: str) -> str:
    return f"{count} {one if count == 1 else many}"


def player_notifications(*, player: AbstractBaseUser) -> dict[str, Any]:
    """Unread news since the player last marked notifications read, grouped by kind."""
    cursor = NotificationCursor.objects.filter(player=player).first()
    since: datetime | None = cursor.seen_until if cursor else None
    authored = Q(round__left_claim__author=player) | Q(round__right_claim__author=player)
    fooled = Vote.objects.filter(authored, correct=False).exclude(round__player=player)
    likes = Like.objects.filter(claim__author=player).exclude(round__player=player)
    fool_points = LedgerEntry.objects.filter(player=player, kind=LedgerEntry.Kind.FOOL)
    if since is not None:
        fooled, likes = fooled.filter(created__gt=since), likes.filter(created__gt=since)
        fool_points = fool_points.filter(created__gt=since)
    groups = []
    fooled_players = fooled.values("round__player").distinct().count()
    if fooled_players:
        groups.append({"kind": "fooled", "count": fooled_players,
                       "message": f"{_plural(fooled_players, 'player was', 'players were')} fooled by your claims."})
    points = fool_points.aggregate(total=Sum("amount"))["total"] or 0
    if points:
        groups.append({"kind": "fool_points", "count": points,
                       "message": f"Voters took their time on your claims: {_plural(points, 'point', 'points')} for you."})
    liked = likes.count()
    if liked:
        groups.append({"kind": "liked", "count": liked,
                       "message": f"Your claims were liked {_plural(liked, 'time', 'times')}."})
    return {"since": since.isoformat() if since else None, "notifications": groups}


def notifications_mark_read(*, player: AbstractBaseUser) -> None:
    NotificationCursor.objects.update_or_create(player=player, defaults={"seen_until": clock.now()})
