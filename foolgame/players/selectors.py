"""Reads of players' standing: their points (sums over the ledger) and their skill rating."""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser
from typing import Any

from django.db.models import Sum

from foolgame.core import hooks
from foolgame.players.models import LedgerEntry, PlayerRating, TutorialProgress
from scoring.ratings import is_provisional

KINDS = [kind.value for kind in LedgerEntry.Kind]


def points_shown(*, player_id: int) -> bool:
    """Are points shown to this player (``hooks.player_settings``: a study's arm may hide
    them)? Hidden or not, they are paid to the ledger. Every page and endpoint that tells a
    player of their points, ledger entries or model points asks this first."""
    return bool(hooks.player_settings.get().settings_for(player_id=player_id)["points_shown"])


def player_points(*, player: AbstractBaseUser) -> dict[str, int]:
    """Points by kind and in total, summed from the ledger rows."""
    sums = dict(LedgerEntry.objects.filter(player=player).values_list("kind").annotate(total=Sum("amount")))
    points = {kind: int(sums.get(kind) or 0) for kind in KINDS}
    points["total"] = sum(points.values())
    return points


def player_skill(*, player_id: int) -> dict[str, Any] | None:
    row = PlayerRating.objects.filter(player_id=player_id).values("rating", "deviation", "votes", "floor").first()
    if row is None:
        return None
    return {
        "skill": round(row["floor"]),
        "rating": round(row["rating"]),
        "deviation": round(row["deviation"]),
        "provisional": is_provisional(row["deviation"]),
        "votes": row["votes"],
    }


TUTORIAL_NEW = "new"


def player_tutorial(*, player_id: int, stored: bool = False) -> str | None:
    """The player's first-run tutorial as stored: ``new`` (show it), ``done`` or ``skipped``
    (``stored``: None when nothing is stored; ``services.player_tutorial_get`` then looks
    whether the player has learned the game by playing and writing)."""
    state = TutorialProgress.objects.filter(player_id=player_id).values_list("state", flat=True).first()
    return state if stored else state or TUTORIAL_NEW
