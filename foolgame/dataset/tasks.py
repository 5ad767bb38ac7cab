"""Background dataset exports."""

from __future__ import annotations

from celery import shared_task
from django.db import OperationalError

from foolgame.dataset.services import export_job_run


@shared_task(acks_late=True, autoretry_for=(OperationalError,), retry_backoff=True, max_retries=3)
def run_export(export_id: int) -> bool:
    """Run one queued export; a second delivery finds it no longer pending and stops."""
    return export_job_run(export_id=export_id)
