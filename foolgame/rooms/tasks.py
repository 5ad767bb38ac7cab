"""Celery tasks for rooms: finish a question at its deadline, and sweep what a timer missed."""

from __future__ import annotations

from celery import shared_task
from django.db import OperationalError

from foolgame.rooms.services import room_question_finish, rooms_sweep


@shared_task(acks_late=True, autoretry_for=(OperationalError,), retry_backoff=True, max_retries=5)
def finish_question(question_id: int) -> bool:
    return room_question_finish(question_id=question_id)


@shared_task(acks_late=True, autoretry_for=(OperationalError,), retry_backoff=True, max_retries=3)
def sweep_rooms() -> int:
    return rooms_sweep()
