"""Celery tasks for rounds: close one at its deadline, and sweep any a timer missed; rate
votes and forfeits, and sweep any a lost task left unrated."""

from __future__ import annotations

from celery import shared_task
from django.db import OperationalError

from foolgame.voting.ratings import ratings_rate_forfeits, ratings_rate_pending, ratings_rate_vote, ratings_rate_votes
from foolgame.voting.services import round_expire, rounds_sweep


@shared_task(acks_late=True, autoretry_for=(OperationalError,), retry_backoff=True, max_retries=5)
def expire_round(round_id: int, reschedule: bool = True) -> bool:
    """Scheduled once per round for its deadline; closing a closed round does nothing, and a
    round not yet due (a late-moved deadline) gets this task sent once more for it."""
    return round_expire(round_id=round_id, reschedule=reschedule)


@shared_task(acks_late=True, autoretry_for=(OperationalError,), retry_backoff=True, max_retries=3)
def sweep_rounds() -> int:
    return rounds_sweep()


@shared_task(acks_late=True, autoretry_for=(OperationalError,), retry_backoff=True, max_retries=5)
def rate_vote(vote_id: int) -> bool:
    """One vote's ratings update, once (a redelivery finds the vote rated and does nothing):
    what the previous release sent after each vote, kept so the messages it left queued still
    run. Votes now send ``rate_votes``."""
    return ratings_rate_vote(vote_id=vote_id)


@shared_task(acks_late=True, autoretry_for=(OperationalError,), retry_backoff=True, max_retries=5)
def rate_votes(vote_ids: list[int]) -> int:
    """Sent after votes commit, one run for the votes of half a second (a batch: see
    ``events.task_batched_on_commit``): rate each once, in vote order."""
    return ratings_rate_votes(vote_ids=vote_ids)


@shared_task(acks_late=True, autoretry_for=(OperationalError,), retry_backoff=True, max_retries=5)
def rate_forfeits(round_ids: list[int]) -> int:
    """Sent after forfeits of started rounds commit, batched as ``rate_votes``: rate each
    as a wrong vote on its pair, once."""
    return ratings_rate_forfeits(round_ids=round_ids)


@shared_task(acks_late=True, autoretry_for=(OperationalError,), retry_backoff=True, max_retries=3)
def rate_pending_votes() -> int:
    """The sweep: votes and forfeits whose rating task was lost."""
    return ratings_rate_pending()
