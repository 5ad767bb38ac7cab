"""A study's arm changes a checker's game on the server (``hooks.player_settings``): points
hidden from the answers (a tally pays them all the same) and checks dealt only from the
study's pages."""

from __future__ import annotations

import pytest

from foolgame.checks import services
from foolgame.core.errors import ServiceError
from foolgame.players.models import LedgerEntry
from tests.arm_settings import ArmProvider, arm  # noqa: F401  (fixture)
from tests.checks.conftest import open_claim, settled_claim
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def test_points_hidden_from_the_checker_are_paid_by_the_tally(fake_clock, settings, arm: ArmProvider) -> None:
    settings.FM2_CHECKS = {**settings.FM2_CHECKS, "TALLY_SIZE": 11, "PAY_MIN_GOLD": 10}
    labels = {settled_claim(f"Settled {n}", label="REFUTES" if n % 2 else "SUPPORTS").text: "REFUTES" if n % 2 else "SUPPORTS" for n in range(11)}
    checker = UserFactory()
    arm.give(checker, points_shown=False)
    results = []
    for _ in range(11):
        dealt = services.check_deal(player=checker)
        results.append(services.check_answer(check_id=dealt["id"], player=checker, label=labels[dealt["claim"]["text"]]))
    assert all("points" not in r for r in results)
    last = results[-1]["tally"]["last"]
    assert last is not None and last["right"] == 11 and last["paid"] is True and "points" not in last
    assert "points" not in services.tally_progress(player=checker)["last"]
    assert list(LedgerEntry.objects.filter(player=checker, kind="check").values_list("amount", flat=True)) == [110]


def test_checks_come_only_from_the_players_pages(fake_clock, arm: ArmProvider) -> None:
    inside, outside = open_claim("Inside"), open_claim("Outside")
    checker, anyone = UserFactory(), UserFactory()
    arm.pages[checker.pk] = [inside.page_id]
    dealt = services.check_deal(player=checker)
    assert dealt["claim"]["id"] == inside.pk
    services.check_answer(check_id=dealt["id"], player=checker, label="SUPPORTS")
    with pytest.raises(ServiceError) as error:
        services.check_deal(player=checker)
    assert (error.value.code, error.value.status_code) == ("nothing_to_check", 409)
    assert {services.check_deal(player=anyone)["claim"]["id"]} <= {inside.pk, outside.pk}
