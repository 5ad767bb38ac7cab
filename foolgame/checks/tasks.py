"""Background jobs of validation: keep gold labels in step with the checkers' records."""

from __future__ import annotations

from celery import shared_task
from django.db import OperationalError

from foolgame.checks.services import validation_refresh_all


@shared_task(acks_late=True, autoretry_for=(OperationalError,), retry_backoff=True, max_retries=3)
def refresh_validation() -> int:
    """Periodic: a checker's weight moves with every settled claim they answer, after their
    labels on other claims were counted; recompute every checked claim's gold label (and its
    dispute) with the weights as they stand. Idempotent."""
    return validation_refresh_all()
