"""A study's participants (``hooks.player_settings.players_off_boards``) are left off the
leaderboards and the skill board, as guests and held players are; their points stay theirs."""

from __future__ import annotations

import pytest
from django.test import Client

from foolgame.players.models import LedgerEntry, PlayerRating
from tests.arm_settings import ArmProvider, arm  # noqa: F401  (fixture)
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def test_a_participant_is_off_the_leaderboards_and_the_skill_board(settings, arm: ArmProvider) -> None:
    settings.FM2_RATINGS = {**settings.FM2_RATINGS, "SKILL_MIN_VOTES": 1}
    participant, volunteer = UserFactory(username="participant"), UserFactory(username="volunteer")
    for player, amount in ((participant, 500), (volunteer, 100)):
        LedgerEntry.objects.create(player=player, amount=amount, kind=LedgerEntry.Kind.VERIFY, cause=f"test:{player.pk}")
        PlayerRating.objects.create(player=player, rating=1700, deviation=60, votes=10)

    def names(kind: str) -> list[str]:
        return [row["username"] for row in Client().get("/api/leaderboard", {"kind": kind}).json()]

    assert names("total") == ["participant", "volunteer"] and names("skill") == ["participant", "volunteer"]
    arm.off_boards.add(participant.pk)
    for kind in ("total", "verify", "skill"):
        assert names(kind) == ["volunteer"], kind
    assert "participant" not in Client().get("/leaderboard/", {"kind": "skill"}).content.decode()
    assert LedgerEntry.objects.filter(player=participant).count() == 1
