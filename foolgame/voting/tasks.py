"""Celery tasks for rounds: close one at its deadline, and sweep any a timer missed; rate
votes and forfeits, and sweep any a lost task left unrated; recount the claims' dealer
counters after votes, and all of them hourly."""

from __future__ import annotations

from celery import shared_task
from django.db import OperationalError

from foolgame.voting.counters import claim_votes_refresh, claim_votes_refresh_all
from foolgame.voting.ratings import ratings_rate_forfeits, ratings_rate_pending, ratings_rate_vote, ratings_rate_votes
from foolgame.voting.services import round_expire, rounds_sweep


@shared_task(acks_late=True, autoretry_for=(OperationalError,), retry_backoff=True, max_retries=5)
def expire_round(round_id: int, reschedule: bool = True) -> bool:
    """Scheduled once per round for its deadline; closing a closed round does nothing, and a
    round not yet due (a late-moved deadline) gets this task sent once more for it."""
    return round_expire(round_id=round_id, reschedule=reschedule)


@shared_task(acks_late=True, autoretry_for=(OperationalError,), retry_backoff=True, max_retries=5)
def expire_rounds(round_ids: list[int]) -> int:
    """The expiry of the rounds started over REST within half a second and due within the
    same second (``events.task_batched_on_commit`` with an eta): one send and one run for them all,
    not one each. Each is closed as ``expire_round`` closes it, and one not yet due (a
    late-moved deadline) gets a task of its own. Returns how many it closed."""
    return sum(round_expire(round_id=round_id, reschedule=True) for round_id in round_ids)


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
    ``events.task_batched_on_commit``), or for a room's question's votes once it is over:
    rate each once, in vote order, in one pass (``ratings_rate_votes``)."""
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


@shared_task(acks_late=True, autoretry_for=(OperationalError,), retry_backoff=True, max_retries=5)
def recount_claim_votes(claim_ids: list[int]) -> int:
    """Sent after votes commit, batched as ``rate_votes``: recount their claims' dealer
    counters (``voting.counters``); recounting is idempotent."""
    return claim_votes_refresh(claim_ids=claim_ids)


@shared_task(acks_late=True, autoretry_for=(OperationalError,), retry_backoff=True, max_retries=3)
def recount_all_claim_votes() -> int:
    """Periodic: recount every claim's dealer counter (any a lost task left behind)."""
    return claim_votes_refresh_all()
