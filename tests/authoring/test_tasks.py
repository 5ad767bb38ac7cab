"""giveaway_train delivered twice at once trains once; a crashed trainer does not block it for good."""

from __future__ import annotations


import pytest
from django.core.cache import cache

from foolgame.authoring import giveaway, services
from foolgame.authoring.models import GiveawayModel
from foolgame.authoring.tasks import giveaway_train
from tests.authoring.test_services import artifact_pool
from tests.concurrency import race_results


@pytest.fixture(autouse=True)
def no_lock_left():
    cache.delete(services.GIVEAWAY_TRAIN_LOCK)
    yield
    cache.delete(services.GIVEAWAY_TRAIN_LOCK)


@pytest.mark.django_db
def test_a_delivery_while_another_trains_does_nothing() -> None:
    artifact_pool()
    assert services.giveaway_retrain_due()
    cache.add(services.GIVEAWAY_TRAIN_LOCK, "another worker", timeout=60)
    assert giveaway_train.delay().get() is None
    assert giveaway_train.delay(force=True).get() is None
    assert GiveawayModel.objects.count() == 0
    cache.delete(services.GIVEAWAY_TRAIN_LOCK)  # the other trainer is done (or its lock expired)
    assert giveaway_train.delay().get() is not None
    assert GiveawayModel.objects.count() == 1


@pytest.mark.django_db
def test_a_trainer_that_fails_releases_its_lock(monkeypatch) -> None:
    artifact_pool()

    def broken(*args, **kwargs):
        raise MemoryError("the trainer died")

    monkeypatch.setattr(giveaway, "train", broken)
    with pytest.raises(MemoryError):
        services.giveaway_train_now()
    monkeypatch.undo()
    assert services.giveaway_train_now() is not None


@pytest.mark.django_db
def test_the_lock_of_a_killed_trainer_expires(settings, monkeypatch) -> None:
    """A SIGKILLed trainer never runs its ``finally``: its lock must carry a timeout."""
    settings.FM2_JOBS = {**settings.FM2_JOBS, "GIVEAWAY_TRAIN_LOCK_SECONDS": 123}
    seen: list[object] = []
    real_add = cache.add

    def spy(key, value, timeout=None, **kwargs):
        seen.append(timeout)
        return real_add(key, value, timeout=timeout, **kwargs)

    monkeypatch.setattr(cache, "add", spy)
    artifact_pool()
    services.giveaway_train_now()
    assert seen == [123]


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("postgresql_only")
def test_two_deliveries_at_once_train_once() -> None:
    artifact_pool()
    results = race_results(2, lambda: giveaway_train.delay().result)  # eager: the result object holds it
    assert GiveawayModel.objects.count() == 1
    assert sorted(results, key=lambda r: r is None) == [GiveawayModel.objects.get().pk, None]
