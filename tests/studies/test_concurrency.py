"""Parallel arrivals on PostgreSQL: the study row's lock gives every arrival its own sequence
and the blocked randomisation's balance holds; the same id arriving twice at once makes one
participant."""

from __future__ import annotations

import itertools
from collections import Counter

import pytest

from foolgame.studies import services
from foolgame.studies.models import Participant, Study
from tests.concurrency import race, race_results
from tests.factories import UserFactory

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("postgresql_only")]


def _study() -> Study:
    owner = UserFactory(username="rita", is_staff=True)
    spec = {
        "name": "Race",
        "consent": "Yes.",
        "tasks": {"vote": 1},
        "arms": [{"name": "a"}, {"name": "b"}, {"name": "c"}],
        "participants": 10,
        "block_size": 6,
        "completion_code": "DONE",
        "address_cap": 1000,
    }
    return services.study_create(owner=owner, spec=spec)


def test_parallel_arrivals_take_distinct_sequences_and_keep_the_balance() -> None:
    study = _study()
    numbers = itertools.count()

    def arrive() -> object:
        participant, created = services.participant_enter(
            slug=study.slug, platform="link", participant_id=f"p{next(numbers)}", consent=True, ip="192.0.2.1"
        )
        return participant.pk if created else None

    assert race(12, arrive) == Counter({"ok": 12})
    sequences = sorted(Participant.objects.filter(study=study).values_list("sequence", flat=True))
    assert sequences == list(range(12))
    assert Study.objects.get(pk=study.pk).arrivals == 12
    # Two whole blocks of 6: each arm has exactly 4.
    assert Counter(Participant.objects.filter(study=study).values_list("arm__name", flat=True)) == {"a": 4, "b": 4, "c": 4}


def test_the_same_id_arriving_twice_at_once_makes_one_participant() -> None:
    study = _study()

    def arrive() -> object:
        participant, created = services.participant_enter(slug=study.slug, platform="link", participant_id="twice", consent=True, ip="192.0.2.1")
        return (participant.pk, created)

    results = race_results(4, arrive)
    assert len({pk for pk, _ in results}) == 1
    assert sorted(created for _, created in results) == [False, False, False, True]
    assert Participant.objects.filter(study=study).count() == 1
