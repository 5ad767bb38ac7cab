"""Celery tasks for rooms: finish a question at its deadline, choose a room's next pair ahead
of its deal, and sweep what a timer missed."""

from __future__ import annotations

from celery import shared_task
from django.db import OperationalError

from foolgame.rooms.services import room_prepare_pair, room_question_finish, rooms_sweep


@shared_task(acks_late=True, autoretry_for=(OperationalError,), retry_backoff=True, max_retries=5)
def finish_question(question_id: int) -> bool:
    return room_question_finish(question_id=question_id)


@shared_task(acks_late=True, autoretry_for=(OperationalError,), retry_backoff=True, max_retries=3)
def sweep_rooms() -> int:
    return rooms_sweep()


@shared_task(acks_late=True, ignore_result=True)
def prepare_pair(room_id: int) -> bool:
    """Not retried: a deal without a prepared pair chooses its own."""
    return room_prepare_pair(room_id=room_id)
