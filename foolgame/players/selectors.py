"""Reads of players' standing: their points (sums over the ledger) and their skill rating."""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser
from typing import Any

from django.db.models import Sum

from foolgame.core import hooks
from foolgame.core.queries import prepared_rows
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
    # The account page and /api/me read these three on every call: their SQL is compiled once.
    sums = dict(
        prepared_rows("player_points", lambda player: LedgerEntry.objects.filter(player_id=player).values_list("kind").annotate(total=Sum("amount")), player=player.pk)
    )
    points = {kind: int(sums.get(kind) or 0) for kind in KINDS}
    points["total"] = sum(points.values())
    return points


def player_skill(*, player_id: int) -> dict[str, Any] | None:
    rows = prepared_rows(
        "player_skill", lambda player: PlayerRating.objects.filter(player_id=player).values_list("rating", "deviation", "votes", "floor")[:1], player=player_id
    )
    if not rows:
        return None
    row = dict(zip(("rating", "deviation", "votes", "floor"), rows[0]))
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
    rows = prepared_rows("player_tutorial", lambda player: TutorialProgress.objects.filter(player_id=player).values_list("state")[:1], player=player_id)
    state = rows[0][0] if rows else None
    return state if stored else state or TUTORIAL_NEW
