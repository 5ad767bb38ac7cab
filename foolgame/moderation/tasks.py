"""Background jobs of moderation: refresh a round's claims after a vote, refresh them all."""

from __future__ import annotations

from celery import shared_task
from django.db import OperationalError

from foolgame.moderation.services import quality_refresh, quality_refresh_all


@shared_task(acks_late=True, autoretry_for=(OperationalError,), retry_backoff=True, max_retries=5)
def refresh_claims_quality(claim_ids: list[int]) -> int:
    """Sent on commit after a vote (both claims) or a report; recomputing is idempotent."""
    return quality_refresh(claim_ids=claim_ids)


@shared_task(acks_late=True, autoretry_for=(OperationalError,), retry_backoff=True, max_retries=3)
def refresh_all_quality(fit_prior: bool = True) -> int:
    """Periodic: refit the prior, then recompute every claim's flags."""
    return quality_refresh_all(fit=fit_prior).claims
