"""Background jobs of the model in the loop: each loads ids, calls a service, and does
nothing on a second delivery (the services check state first)."""

from __future__ import annotations

from celery import shared_task

from foolgame.core import events
from foolgame.verifier import services
from foolgame.checks.models import Check


@shared_task(acks_late=True, autoretry_for=(ConnectionError,), retry_backoff=True, max_retries=3)
def verifier_sweep() -> dict[str, int]:
    return services.verifier_sweep()


@shared_task(acks_late=True, autoretry_for=(ConnectionError,), retry_backoff=True, max_retries=3)
def verifier_train(force: bool = False) -> int | None:
    version = services.verifier_train_now(force=force)
    return version.number if version else None


@shared_task(acks_late=True, autoretry_for=(ConnectionError,), retry_backoff=True, max_retries=3)
def verifier_after_checks(check_ids: list[int]) -> int:
    """The model answers these checks; their claims' authors are paid if now due."""
    answered = services.machine_answers_write(check_ids=check_ids)
    claim_ids = list(Check.objects.filter(pk__in=check_ids).values_list("claim_id", flat=True))
    services.model_points_award(claim_ids=claim_ids)
    if services.retrain_due():  # the training itself goes to the models queue (the trainer)
        events.task_in_background_on_commit(verifier_train)
    return answered


@shared_task(acks_late=True, autoretry_for=(ConnectionError,), retry_backoff=True, max_retries=3)
def verifier_after_votes(claim_ids: list[int]) -> int:
    if services.active_version() is None:  # no model in the loop: one query a batch of votes
        return 0
    return services.machine_answers_write(round_ids=services.settled_round_ids(claim_ids=claim_ids))


@shared_task(acks_late=True, autoretry_for=(ConnectionError,), retry_backoff=True, max_retries=3)
def verifier_fill_written(claim_ids: list[int]) -> int:
    return services.written_verdicts_fill(claim_ids=claim_ids)
