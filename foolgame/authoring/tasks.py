"""Background jobs of authoring."""

from __future__ import annotations

from celery import shared_task

from foolgame.authoring.services import giveaway_train_now


@shared_task(acks_late=True, autoretry_for=(ConnectionError,), retry_backoff=True, max_retries=3)
def giveaway_train(force: bool = False) -> int | None:
    """Retrain the giveaway detector if due (a second delivery finds it not due and stops)."""
    model = giveaway_train_now(force=force)
    return model.pk if model else None
