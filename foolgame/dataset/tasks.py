"""Background dataset exports."""

from __future__ import annotations

from celery import shared_task
from django.db import OperationalError

from foolgame.dataset.jobs import export_job_run, export_jobs_reap


@shared_task(acks_late=True, autoretry_for=(OperationalError,), retry_backoff=True, max_retries=3)
def run_export(export_id: int) -> bool:
    """Run one queued export, or take over one whose worker died; a second delivery of a live
    export finds it running with a fresh heartbeat and stops."""
    return export_job_run(export_id=export_id)


@shared_task(acks_late=True)
def reap_stale_exports() -> dict[str, int]:
    """Periodic (beat): re-queue exports whose worker died, fail those out of attempts."""
    return export_jobs_reap(requeue=run_export.delay)
