"""Authoring under concurrency on the real database (PostgreSQL in CI's second pass): row
locks, not a read-then-write check, keep one claim per near-duplicate and the task cap."""

from __future__ import annotations

from collections import Counter
from datetime import timedelta
from queue import SimpleQueue

import pytest
from django.utils import timezone

from foolgame.authoring import services
from foolgame.authoring.models import WriteTask
from foolgame.claims.models import Claim
from foolgame.evidence import services as evidence
from foolgame.pages.models import Page
from foolgame.players.models import LedgerEntry
from tests.authoring.conftest import GOOD_CLAIM, sentence_ids
from tests.concurrency import race
from tests.factories import UserFactory

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("postgresql_only")]


def test_near_identical_claims_from_several_authors_at_once_save_one(eiffel: Page) -> None:
    evidence.page_index_build(page_id=eiffel.pk)  # encoding stays out of the race
    gold = [sentence_ids(eiffel)[3]]
    now = timezone.now()
    jobs: SimpleQueue = SimpleQueue()
    texts = [GOOD_CLAIM, GOOD_CLAIM.lower(), GOOD_CLAIM.upper(), GOOD_CLAIM.replace(".", "!")]
    for text in texts:
        player = UserFactory()
        expires = now + timedelta(minutes=10)
        task = WriteTask.objects.create(player=player, page=eiffel, veracity="TRUE", write_by=expires, expires_at=expires)
        jobs.put((task, text))

    def submit():
        task, text = jobs.get_nowait()
        return services.claim_create(author=task.player, task_id=task.pk, text=text, gold_sentence_ids=gold)

    outcomes = race(4, submit)
    assert outcomes == Counter({"ok": 1, "near_duplicate": 3})
    assert Claim.objects.filter(page=eiffel).count() == 1
    assert LedgerEntry.objects.filter(kind="write").count() == 1


def test_concurrent_task_requests_of_one_player_respect_the_cap(eiffel: Page, settings) -> None:
    settings.FM2 = {**settings.FM2, "MAX_OPEN_WRITE_TASKS": 3}
    player = UserFactory()
    outcomes = race(8, lambda: services.write_task_create(player=player))
    assert outcomes == Counter({"ok": 3, "too_many_open_tasks": 5})
    assert WriteTask.objects.filter(player=player).count() == 3
