"""Reads of players' standing: every figure is a sum over the ledger."""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Sum

from foolgame.players.models import LedgerEntry

KINDS = [kind.value for kind in LedgerEntry.Kind]


def player_points(*, player: AbstractBaseUser) -> dict[str, int]:
    """Points by kind and in total, summed from the ledger rows."""
    sums = dict(LedgerEntry.objects.filter(player=player).values_list("kind").annotate(total=Sum("amount")))
    points = {kind: int(sums.get(kind) or 0) for kind in KINDS}
    points["total"] = sum(points.values())
    return points
