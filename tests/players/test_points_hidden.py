"""A player whose game hides points (a study's arm: ``points_shown`` false) is told of none:
not by ``GET /api/me``, not by the profile page and its ledger entries, not by the checks page.
The ledger keeps them all the same; every other player sees theirs."""

from __future__ import annotations

import re

import pytest
from django.test import Client

from foolgame.players.models import LedgerEntry
from tests.arm_settings import ArmProvider, arm  # noqa: F401  (fixture)
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def signed_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def paid(user) -> None:
    """Points of every kind a participant earns: a claim that fooled the model (model
    points), a tally of checks, a round voted."""
    LedgerEntry.objects.create(player=user, amount=137, kind=LedgerEntry.Kind.MODEL, cause="model:1")
    LedgerEntry.objects.create(player=user, amount=70, kind=LedgerEntry.Kind.CHECK, cause="check-tally:1")
    LedgerEntry.objects.create(player=user, amount=43, kind=LedgerEntry.Kind.VERIFY, cause="round:1")


def check_points(page: str) -> str:
    found = re.search(r'id="check-points">([^<]*)<', page)
    assert found is not None
    return found.group(1)


def test_a_player_whose_game_hides_points_is_told_of_none(arm: ArmProvider) -> None:
    hidden = UserFactory(username="hidden")
    arm.give(hidden, points_shown=False)
    paid(hidden)
    client = signed_in(hidden)

    me = client.get("/api/me")
    assert me.status_code == 200 and "points" not in me.json()

    profile = client.get("/accounts/me/")
    assert profile.status_code == 302 and profile["Location"] == "/"  # no points page for them

    page = client.get("/checks/")
    assert page.status_code == 200
    assert check_points(page.content.decode()) == ""
    assert "70" not in check_points(page.content.decode())

    # Paid all the same.
    assert sorted(LedgerEntry.objects.filter(player=hidden).values_list("amount", flat=True)) == [43, 70, 137]


def test_every_other_player_sees_their_points(arm: ArmProvider) -> None:
    shown = UserFactory(username="shown")
    paid(shown)
    client = signed_in(shown)
    assert client.get("/api/me").json()["points"]["total"] == 250
    profile = client.get("/accounts/me/")
    assert profile.status_code == 200
    text = profile.content.decode()
    assert "+137" in text and "+70" in text and 'data-kind="total">250<' in text
    assert check_points(client.get("/checks/").content.decode()) == "70"


def test_notifications_tell_a_hidden_points_player_the_news_without_the_points(arm: ArmProvider) -> None:
    """The news (a claim that was hard to check, liked, or fooled the model) reaches them; the
    points it paid do not: not in the API's items or groups, not on the notifications page."""
    from foolgame.claims.models import Claim
    from foolgame.players.models import Notification
    from tests.factories import ClaimFactory

    hidden, shown = UserFactory(username="hidden"), UserFactory(username="shown")
    arm.give(hidden, points_shown=False)
    for user in (hidden, shown):
        claim = ClaimFactory(author=user, label=Claim.Label.SUPPORTS)
        Notification.objects.create(player=user, kind=Notification.Kind.FOOL_POINTS, claim=claim, points=17)
        Notification.objects.create(player=user, kind=Notification.Kind.LIKED, claim=claim, points=29)
        Notification.objects.create(player=user, kind=Notification.Kind.MODEL_FOOLED, claim=claim, points=137)

    news = signed_in(hidden).get("/api/me/notifications").json()
    assert {item["kind"] for item in news["items"]} == {"fool_points", "liked", "model_fooled"}
    assert all(item["points"] is None for item in news["items"])
    said = " ".join([item["message"] for item in news["items"]] + [group["message"] for group in news["notifications"]])
    assert "point" not in said and not re.search(r"\b(17|29|137)\b", said), said
    assert "fooled the model" in said and "liked" in said and "took their time" in said
    page = signed_in(hidden).get("/accounts/notifications/").content.decode()
    assert "fooled the model" in page and not re.search(r"\b(17|29|137) points?\b", page)

    # Another player's news keeps its points.
    theirs = signed_in(shown).get("/api/me/notifications").json()
    assert sorted(item["points"] for item in theirs["items"]) == [17, 29, 137]
    assert "137 points for you" in " ".join(item["message"] for item in theirs["items"])
    assert any(group["kind"] == "fool_points" and group["count"] == 17 for group in theirs["notifications"])
