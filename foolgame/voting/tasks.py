"""Celery tasks for rounds: close one at its deadline, and sweep any a timer missed."""

from __future__ import annotations

from celery import shared_task
from django.db import OperationalError

from foolgame.voting.services import round_expire, rounds_sweep


@shared_task(acks_late=True, autoretry_for=(OperationalError,), retry_backoff=True, max_retries=5)
def expire_round(round_id: int, reschedule: bool = True) -> bool:
    """Scheduled once per round for its deadline; closing a closed round does nothing, and a
    round not yet due (a late-moved deadline) gets this task sent once more for it."""
    return round_expire(round_id=round_id, reschedule=reschedule)


@shared_task(acks_late=True, autoretry_for=(OperationalError,), retry_backoff=True, max_retries=3)
def sweep_rounds() -> int:
    return rounds_sweep()
