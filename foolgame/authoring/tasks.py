"""Background jobs of authoring."""

from __future__ import annotations

from celery import shared_task

from foolgame.authoring.fluency import fluency_train_if_due
from foolgame.authoring.services import giveaway_train_now


@shared_task(acks_late=True, autoretry_for=(ConnectionError,), retry_backoff=True, max_retries=3)
def giveaway_train(force: bool = False) -> int | None:
    """Retrain the giveaway detector if due (a second delivery finds it not due and stops)."""
    model = giveaway_train_now(force=force)
    return model.pk if model else None


@shared_task(acks_late=True, autoretry_for=(ConnectionError,), retry_backoff=True, max_retries=3)
def fluency_train() -> float | None:
    """Train the learnt fluency check if due (beat asks hourly; the trainer role runs it):
    minutes on 2 cores. Returns the new model's bar, None when nothing was due."""
    report = fluency_train_if_due()
    return report.threshold if report else None
