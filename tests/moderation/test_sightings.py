"""What a moderator saw with its answer is recorded, and never dealt to them afterwards (issue 17)."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from foolgame.core.errors import ServiceError
from foolgame.moderation.actions import claim_moderate
from foolgame.moderation.models import Sighting
from foolgame.voting import services as voting
from tests.factories import UserFactory
from tests.moderation.conftest import claim_pair, login
from tests.moderation.test_apis import queue_claims  # noqa: F401  (fixture)

pytestmark = pytest.mark.django_db


def seen(moderator) -> dict[int, object]:
    return dict(Sighting.objects.filter(moderator=moderator).values_list("claim_id", "first_seen"))


def test_a_queue_page_records_its_claims_in_one_insert_and_keeps_the_first_moment(moderator, queue_claims) -> None:
    client = login("mona")
    with CaptureQueriesContext(connection) as queries:
        assert client.get("/api/moderation/queue").status_code == 200
    inserts = [q["sql"] for q in queries.captured_queries if "moderation_sighting" in q["sql"] and q["sql"].lstrip().upper().startswith("INSERT")]
    assert len(inserts) == 1
    first = seen(moderator)
    assert set(first) == {queue_claims["reported"].pk, queue_claims["hard"].pk, queue_claims["barely"].pk}
    client.get("/moderation/")  # the page, and a second look: nothing new, nothing moved
    assert seen(moderator) == first


def test_the_queue_page_the_audit_log_and_an_action_record_sightings(moderator, queue_claims) -> None:
    login("mona").get("/moderation/?reason=too_hard")
    assert set(seen(moderator)) == {queue_claims["hard"].pk, queue_claims["barely"].pk}
    claim_moderate(moderator=moderator, claim_id=queue_claims["healthy"].pk, action="keep", reason="looked fine")
    assert queue_claims["healthy"].pk in seen(moderator)
    other = UserFactory(username="otto")
    from foolgame.moderation.actions import moderator_set

    moderator_set(username=other.username)
    login("otto").get("/api/moderation/audit")
    assert set(seen(other)) == {queue_claims["healthy"].pk}


def test_a_claim_a_moderator_saw_in_the_queue_is_never_dealt_to_them(moderator, queue_claims) -> None:
    # Rome's pair (one reported, still in play, and a healthy one) is the only playable pair.
    login("mona").get("/api/moderation/queue?reason=reports")
    with pytest.raises(ServiceError) as refused:
        voting.round_create(player=moderator)
    assert refused.value.code == "no_pair_available"
    player = UserFactory(username="pia")
    round_ = voting.round_create(player=player)
    assert {round_.left_claim_id, round_.right_claim_id} == {queue_claims["reported"].pk, queue_claims["healthy"].pk}


def test_a_moderator_who_saw_nothing_is_dealt_as_anyone(moderator) -> None:
    true_claim, false_claim = claim_pair(title="Neptune")
    round_ = voting.round_create(player=moderator)
    assert {round_.left_claim_id, round_.right_claim_id} == {true_claim.pk, false_claim.pk}
