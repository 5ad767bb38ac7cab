"""A study's attention checks are dealt: the checks deal gives a participant owed one
(``hooks.player_settings``' ``settled_checks_owed``) a settled claim of their pages, as any
other check on the wire; a plain player's deal is the checks mode's as before."""

from __future__ import annotations

import pytest

from foolgame.checks.models import Check, ClaimValidation
from foolgame.claims.models import Claim
from foolgame.core import hooks
from foolgame.studies.models import AttentionCheck, Participant
from foolgame.studies.services import attention_positions
from tests.authoring.conftest import api_client, post
from tests.checks.conftest import open_claim, settled_claim
from tests.studies.conftest import create_study, participant_client

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(settings) -> list[Claim]:
    """Six open claims no one has checked, and two settled claims that already carry labels,
    so the least-checked deal alone never reaches a settled one within four checks."""
    settings.FM2_CHECKS = {**settings.FM2_CHECKS, "REVISIT_SHARE": 0.0}
    for index in range(6):
        open_claim(f"Open {index}")
    settled = [settled_claim(f"Settled {index}", label="REFUTES") for index in range(2)]
    for claim in settled:
        ClaimValidation.objects.create(claim=claim, labels=2)
    return settled


def do_checks(client, count: int) -> list[dict]:
    """``count`` checks through the API, each answered right (a participant who reads)."""
    dealt = []
    for _ in range(count):
        response = post(client, "/api/checks")
        assert response.status_code == 201, response.content
        check = response.json()
        dealt.append(check)
        label = Claim.objects.get(pk=check["claim"]["id"]).label
        assert post(client, f"/api/checks/{check['id']}", {"label": label}).status_code == 200
    return dealt


def test_a_participant_is_dealt_the_studys_attention_checks(researcher, world) -> None:
    slug = create_study(researcher, tasks={"check": 4}, attention_checks=2, attention_max_failures=0)["slug"]
    client = participant_client(slug, "worker-1")
    dealt = do_checks(client, 4)
    participant = Participant.objects.get()
    assert AttentionCheck.objects.filter(participant=participant).count() == 2
    assert AttentionCheck.objects.filter(participant=participant, passed=True).count() == 2
    settled_ids = {claim.pk for claim in world}
    attention = [check for check in dealt if check["claim"]["id"] in settled_ids]
    other = [check for check in dealt if check["claim"]["id"] not in settled_ids]
    assert len(attention) == 2 and other
    # On the wire an attention check is a check like any other: the same fields, the same clock.
    assert {tuple(sorted(check)) for check in dealt} == {tuple(sorted(other[0]))}
    clocks = {(c.expires_at - c.dealt_at).total_seconds() for c in Check.objects.filter(player_id=participant.user_id)}
    assert len(clocks) == 1
    # They came where the study placed them among the participant's checks.
    places = [index + 1 for index, check in enumerate(dealt) if check["claim"]["id"] in settled_ids]
    assert places == attention_positions(participant)
    assert hooks.player_settings.get().settled_checks_owed(player_id=participant.user_id) == 0


def test_a_participant_owes_nothing_once_the_attention_checks_are_answered_or_without_any(researcher, world) -> None:
    slug = create_study(researcher, tasks={"check": 3}, attention_checks=0)["slug"]
    client = participant_client(slug, "worker-1")
    dealt = do_checks(client, 3)
    assert not AttentionCheck.objects.exists()
    assert {check["claim"]["id"] for check in dealt}.isdisjoint({claim.pk for claim in world})


def test_each_participant_meets_the_attention_checks_at_places_of_their_own(researcher) -> None:
    slug = create_study(researcher, tasks={"check": 6}, attention_checks=2, attention_max_failures=1)["slug"]
    participant_client(slug, "worker-1")
    first = Participant.objects.get()
    places = {tuple(attention_positions(Participant(study=first.study, sequence=sequence))) for sequence in range(40)}
    assert all(len(set(p)) == 2 and all(1 <= place <= 6 for place in p) for p in places)
    assert len(places) > 5  # not always the first checks, nor any fixed pair


def test_a_plain_players_deal_is_unchanged(world) -> None:
    client = api_client("paula")
    dealt = do_checks(client, 4)
    assert {check["claim"]["id"] for check in dealt}.isdisjoint({claim.pk for claim in world})
    player_id = int(client.session["_auth_user_id"])
    assert hooks.player_settings.get().settled_checks_owed(player_id=player_id) == 0
