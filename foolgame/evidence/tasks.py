"""Celery tasks for evidence retrieval."""

from __future__ import annotations

from celery import shared_task
from django.db import OperationalError

from foolgame.evidence.services import page_index_build


@shared_task(acks_late=True, autoretry_for=(OperationalError,), retry_backoff=True, max_retries=5)
def build_page_index(page_id: int) -> dict[str, int]:
    """Encode the page's sentences that have no stored vector; a second delivery encodes nothing."""
    result = page_index_build(page_id=page_id)
    return {"encoded": result.encoded, "reused": result.reused}
