"""The bonus file: Prolific's and Mechanical Turk's formats, paid only on verified work,
capped, its total equal to a count made here from the rows the world planted; the study's
owner only."""

from __future__ import annotations

import csv
import io
from decimal import Decimal

import pytest
from django.urls import reverse

from foolgame.studies.models import Participant
from foolgame.studies.research import bonus_amount, Work
from tests.dataset.conftest import client_for
from tests.studies.test_research_world import BONUS, PLATFORM_IDS, study_world  # noqa: F401 - the fixture

pytestmark = pytest.mark.django_db


def _get(world, user, file_format: str | None = None):
    url = reverse("study-bonuses", args=[world.study.slug])
    return client_for(user).get(url, {"format": file_format} if file_format else {})


def test_prolific_file_pays_verified_work_capped_and_matches_a_count_made_here(study_world) -> None:
    response = _get(study_world, study_world.owner, "prolific")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/csv")
    rows = list(csv.reader(io.StringIO(response.content.decode())))
    # No header: every line is "participant id,amount" with two decimals.
    assert all(len(row) == 2 and row[1].count(".") == 1 and len(row[1].split(".")[1]) == 2 for row in rows)
    got = {pid: Decimal(amount) for pid, amount in rows}
    prolific = [p.platform_id for p in study_world.participants.values() if p.platform == Participant.Platform.PROLIFIC]
    expected = {pid: study_world.planted.owed(pid, BONUS) for pid in prolific}
    expected = {pid: amount for pid, amount in expected.items() if amount > 0}
    assert got == expected
    assert got[PLATFORM_IDS[0]] == Decimal("1.50")  # 2.19 earned, capped
    assert PLATFORM_IDS[2] not in got  # wrong votes and a failed attention check earn nothing
    assert sum(got.values()) == sum(expected.values()) == Decimal("1.70")


def test_mturk_file_has_its_header_the_assignment_and_a_reason(study_world) -> None:
    response = _get(study_world, study_world.owner, "mturk")
    assert response.status_code == 200
    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    assert response.content.decode().splitlines()[0] == "workerId,assignmentId,amount,reason"
    assert [(r["workerId"], r["assignmentId"], r["amount"]) for r in rows] == [(PLATFORM_IDS[3], "ASSIGN3", "1.00")]
    assert "1 verified claim(s) that fooled the model" in rows[0]["reason"]


def test_default_format_is_prolific_and_an_unknown_one_is_refused(study_world) -> None:
    assert _get(study_world, study_world.owner).content == _get(study_world, study_world.owner, "prolific").content
    bad = _get(study_world, study_world.owner, "paypal")
    assert bad.status_code == 400 and bad.json()["error"]["code"] == "invalid"


@pytest.mark.parametrize("who", ["other_researcher", "staff", "player", "participant"])
def test_nobody_but_the_owner_reads_the_bonus_file_or_the_platform_ids(study_world, who: str) -> None:
    user = study_world.participants[PLATFORM_IDS[0]].user if who == "participant" else getattr(study_world, who)
    for url in (reverse("study-bonuses", args=["clue-cost"]), reverse("study-participants", args=["clue-cost"])):
        response = client_for(user).get(url)
        assert response.status_code == 403, (who, url)
        assert response.json()["error"]["code"] == "not_study_owner"
        assert not any(pid.encode() in response.content for pid in PLATFORM_IDS)


def test_anonymous_gets_403_without_the_file(study_world) -> None:
    response = _get(study_world, None, "prolific")
    assert response.status_code == 403 and PLATFORM_IDS[0].encode() not in response.content


def test_the_owner_sees_the_participants_with_their_ids_work_and_bonus(study_world) -> None:
    response = client_for(study_world.owner).get(reverse("study-participants", args=["clue-cost"]))
    assert response.status_code == 200
    rows = response.json()["participants"]
    assert [r["platform_id"] for r in rows] == list(PLATFORM_IDS)
    assert rows[0]["work"] == {"write": 4, "vote": 4, "check": 3} and rows[0]["bonus"] == "1.50"


@pytest.mark.parametrize(
    "rules, work, amount, capped",
    [
        ({}, Work(verified_fooling_claims=3, right_votes=9), Decimal("0.00"), False),
        ({"per_right_vote": "0.05"}, Work(right_votes=3), Decimal("0.15"), False),
        ({"per_right_vote": "0.333"}, Work(right_votes=1), Decimal("0.33"), False),
        ({"per_verified_fooling_claim": "1.00", "cap": "0.50"}, Work(verified_fooling_claims=2), Decimal("0.50"), True),
        ({"per_right_check": "0.02", "cap": ""}, Work(right_checks=5), Decimal("0.10"), False),
        ({"per_right_vote": "-1", "per_right_check": "junk"}, Work(right_votes=4, right_checks=4), Decimal("0.00"), False),
    ],
)
def test_bonus_amount(rules, work, amount, capped) -> None:
    assert bonus_amount(rules, work) == (amount, capped)


def test_work_after_a_participants_deadline_counts_for_neither_bonus_nor_figures(study_world) -> None:
    from datetime import timedelta

    from django.utils import timezone

    from foolgame.claims.models import Claim
    from foolgame.studies.models import Study
    from foolgame.voting.models import Round
    from tests.studies.test_research_world import BONUS

    # A 60-minute limit: participant 0 consented two hours ago, so only what they did in their
    # first hour counts: one verified fooling claim and one right vote, moved there; the rest
    # of their work (done now) is past their deadline. Everyone else consented 30 minutes ago.
    Study.objects.filter(pk=study_world.study.pk).update(time_limit_minutes=60)
    first = study_world.participants[PLATFORM_IDS[0]]
    consented = timezone.now() - timedelta(hours=2)
    Participant.objects.filter(pk=first.pk).update(consented=consented)
    Claim.objects.filter(text="P0 first fooling claim.").update(created=consented + timedelta(minutes=10))
    right = Round.objects.filter(player=first.user, state=Round.State.VOTED, vote__correct=True).order_by("pk").first()
    Round.objects.filter(pk=right.pk).update(ended_at=consented + timedelta(minutes=20))

    owner = client_for(study_world.owner)
    rows = {r["platform_id"]: r for r in owner.get(reverse("study-participants", args=["clue-cost"])).json()["participants"]}
    owed = bonus_amount(BONUS, Work(verified_fooling_claims=1, right_votes=1))[0]
    assert rows[PLATFORM_IDS[0]]["work"] == {"write": 1, "vote": 1, "check": 0}
    assert rows[PLATFORM_IDS[0]]["bonus"] == f"{owed:.2f}"
    assert rows[PLATFORM_IDS[1]]["work"] == {"write": 2, "vote": 4, "check": 1}  # within their hour: all of it
    got = dict(csv.reader(io.StringIO(_get(study_world, study_world.owner, "prolific").content.decode())))
    assert Decimal(got[PLATFORM_IDS[0]]) == owed
    figures = owner.get(reverse("study-figures", args=["clue-cost"])).json()
    clue10 = next(arm for arm in figures["by_arm"] if arm["arm"] == "clue10")
    assert clue10["collected"]["claims"] == 1 and clue10["collected"]["verified_fooling_claims"] == 1
    assert clue10["collected"]["checks"] == 1  # participant 2's, within their hour
    assert clue10["vote_accuracy"] == round(1 / 3, 4)  # participant 0's right vote, participant 2's two wrong ones
