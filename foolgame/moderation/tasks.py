"""Background jobs of moderation: refresh a round's claims after a vote, refresh them all;
test the recent voters for improbable play."""

from __future__ import annotations

from celery import shared_task
from django.conf import settings
from django.db import OperationalError

from foolgame.moderation.integrity import integrity_check_claim_voters, integrity_refresh_recent
from foolgame.moderation.quality import quality_refresh, quality_refresh_all


@shared_task(acks_late=True, autoretry_for=(OperationalError,), retry_backoff=True, max_retries=5)
def refresh_claims_quality(claim_ids: list[int]) -> int:
    """Sent on commit after a vote (both claims) or a report; recomputing is idempotent.
    Then the claims' recent voters are tested for improbable play (idempotent too): the
    per-vote hook of FM2_INTEGRITY, batched with the quality refresh."""
    refreshed = quality_refresh(claim_ids=claim_ids)
    if settings.FM2_INTEGRITY["CHECK_AFTER_VOTES"]:
        integrity_check_claim_voters(claim_ids=claim_ids)
    return refreshed


@shared_task(acks_late=True, autoretry_for=(OperationalError,), retry_backoff=True, max_retries=3)
def refresh_all_quality(fit_prior: bool = True) -> int:
    """Periodic: refit the prior, then recompute every claim's flags."""
    return quality_refresh_all(fit=fit_prior).claims


@shared_task(acks_late=True, autoretry_for=(OperationalError,), retry_backoff=True, max_retries=3)
def refresh_integrity() -> int:
    """Periodic: refit the population's accuracy and test the recent voters."""
    return integrity_refresh_recent()
