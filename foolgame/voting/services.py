"""The voting round's services: deal, start, reveal, vote, like, report, expire.

Every service that changes a round follows one locking rule: it takes the round's row lock
(``select_for_update``) in ``_get_round`` and re-reads the clock from the database under
it, so two requests for one round (REST and WebSocket alike) run one after the other.
A round whose deadline has passed is closed as timed out by whichever request, task or
socket touches it first; closing a closed round does nothing.

Side effects wait for the commit: the expiry task and the socket update are sent through
``core.events``. Dealing a pair is ``voting.dealing``; what the player sees of a round is
``voting.payloads``.
"""

from __future__ import annotations

import math
import random
from datetime import datetime, timedelta
from typing import Any, cast

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.db import IntegrityError, models, transaction
from django.db.models import Exists, OuterRef, QuerySet

from foolgame.core.errors import ServiceError
from foolgame.core.queries import compiled_create, compiled_instance, compiled_update, prepared_rows
from foolgame.claims.models import Claim
from foolgame.pages.models import Category, Page
from foolgame.players.models import Guest, LedgerEntry
from foolgame.players.roles import is_guest
from foolgame.core import clock, events, hooks
from foolgame.voting import notifications
from foolgame.voting.events import round_changed_on_commit, round_socket
from foolgame.voting.counters import claim_refs_lock, round_claims_key_share
from foolgame.voting.dealing import deal_level, deal_pair
from foolgame.voting.models import ClueReveal, Like, Report, Round, SeenClaim, Vote
from foolgame.voting.payloads import (
    ClueResult,
    PastRound,
    Result,
    RoundState,
    answer_out,
    clue_payload,
    clue_seconds,
    deadline_after,
    game_settings,
    past_round,
    points_hidden,
    result_payload,
    round_points,
    round_fields_for,
    round_remaining,
    round_seconds,
    round_state,
    vote_ack,
)
from foolgame.voting.selectors import deal_pool_for_player, player_past_rounds
from scoring.rounds import Outcome, round_awards

MAX_OPEN_ROUNDS = 3
NOTE_MAX_CHARS = 1000


def _solo_open_rounds(player: AbstractBaseUser | int) -> models.QuerySet[Round]:
    """The player's open rounds (dealt or playing) of their own, not a room's: a room's round
    is played only in its room, so it never counts against the solo limit, nor is it
    resumed, listed or expired by the solo page's calls (the room finishes it)."""
    return Round.objects.filter(hooks.round_groups.get().solo(), player=player, state__in=Round.OPEN_STATES)  # a player or their id


def _solo_open_round_ids(player: AbstractBaseUser, *, limit: int | None = None) -> list[int]:
    """The ids of ``_solo_open_rounds`` (at most ``limit``), read with the SQL compiled once:
    every deal reads them twice."""

    def build(player: int) -> QuerySet[Any]:
        rounds = _solo_open_rounds(player).order_by("id").values_list("id")
        return rounds if limit is None else rounds[:limit]

    return [row[0] for row in prepared_rows(f"solo_open_rounds:{id(hooks.round_groups.get())}:{limit}", build, player=player.pk)]


def _check_deal_rate(player: AbstractBaseUser, now: datetime) -> None:
    """At most DEALS_PER_HOUR solo deals in any hour (NEW_ACCOUNT_DEALS_PER_HOUR in an
    account's first NEW_ACCOUNT_HOURS), counted from the stored rounds; the caller holds the
    player's row lock. A room's deals are the room's and do not count."""
    game = game_settings()
    joined = getattr(player, "date_joined", None)
    new = joined is not None and now - joined < timedelta(hours=game["NEW_ACCOUNT_HOURS"])
    limit = game["NEW_ACCOUNT_DEALS_PER_HOUR"] if new else game["DEALS_PER_HOUR"]
    hour = 3600
    groups = hooks.round_groups.get()
    recent = [
        row[0]
        for row in prepared_rows(
            f"deal_rate:{id(groups)}:{limit}",
            lambda player, since: Round.objects.filter(groups.solo(), player_id=player, created__gt=since)
            .order_by("-created")
            .values_list("created")[:limit],
            player=player.pk,
            since=now - timedelta(seconds=hour),
        )
    ]
    if len(recent) >= limit:
        again = recent[-1] + timedelta(seconds=hour)
        wait = max(1, math.ceil((again - now).total_seconds()))
        raise ServiceError(
            "deal_rate_limited",
            f"You were dealt {limit} rounds in the last hour; you can get a new one in {_span(wait)} (at {again.isoformat(timespec='seconds')}).",
            status_code=429,
            details={"retry_after": wait, "retry_at": again.isoformat()},
            retry_after=wait,
        )


def _check_forfeit_rate(player: AbstractBaseUser, round_: Round, now: datetime) -> None:
    """At most FORFEITS_PER_HOUR solo rounds given up in any hour, far fewer than deals: a
    give-up shows its pair's answer at its deadline without a vote, so forfeiting dealt
    rounds by the hundred was a way to collect answers for another account to vote on
    (issue 36). Counted from the stored rounds; a room's rounds (a member leaving, the host
    ending the room) neither count nor are refused. Concurrent forfeits can each pass at the
    cap's edge, at most the few open rounds a player may hold."""
    limit = game_settings()["FORFEITS_PER_HOUR"]
    hour = 3600
    solo = hooks.round_groups.get().solo()
    if not Round.objects.filter(solo, pk=round_.pk).exists():
        return
    recent = list(
        Round.objects.filter(solo, player=player, state=Round.State.FORFEITED, ended_at__gt=now - timedelta(seconds=hour))
        .order_by("-ended_at")
        .values_list("ended_at", flat=True)[:limit]
    )
    if len(recent) >= limit:
        again = recent[-1] + timedelta(seconds=hour)
        wait = max(1, math.ceil((again - now).total_seconds()))
        raise ServiceError(
            "forfeit_rate_limited",
            f"You gave up {limit} rounds in the last hour; play this one or let it run out "
            f"(you can give one up again in {_span(wait)}, at {again.isoformat(timespec='seconds')}).",
            status_code=429,
            details={"retry_after": wait, "retry_at": again.isoformat()},
            retry_after=wait,
        )


def _check_deal_filters(*, category: str | None, page_id: int | None) -> None:
    """A deal asked from a category or a page that does not exist is refused as such (404
    ``unknown_category``, ``unknown_page``), not as a pool with no pair left."""
    if category and not Category.objects.filter(models.Q(slug=category) | models.Q(name__iexact=category)).exists():
        raise ServiceError(
            "unknown_category",
            f"No category is called “{category}”: GET /api/categories lists them.",
            status_code=404,
            details={"category": category},
        )
    if page_id is not None and not Page.objects.filter(pk=page_id).exists():
        raise ServiceError("unknown_page", f"No page has the id {page_id}.", status_code=404, details={"page": page_id})


def round_create(*, player: AbstractBaseUser, category: str | None = None, page_id: int | None = None) -> Round:
    """Deal a fair pair: one true and one false claim, same page when possible, else same
    category; from the category (slug or name) or the page (id) when one is given.

    Deals are throttled per hour (``_check_deal_rate``, 429 ``deal_rate_limited``).

    Locking: the player's row is locked for the whole deal, so two deals for one player run
    one after the other (and the throttle counts under it); the unique (player, claim) rows back it up in the database. Then the
    pair's claim rows are key-share locked in id order (``claim_refs_lock``) before any row
    refers to them.
    """
    _check_deal_filters(category=category, page_id=page_id)
    rounds_expire_for_player(player=player)
    with transaction.atomic():
        if not prepared_rows("deal_player_lock", lambda player: get_user_model().objects.select_for_update().filter(pk=player).values_list("pk"), player=player.pk):
            raise get_user_model().DoesNotExist("the player's account is gone")
        if len(_solo_open_round_ids(player, limit=MAX_OPEN_ROUNDS)) >= MAX_OPEN_ROUNDS:
            raise ServiceError(
                "too_many_open_rounds", f"Finish one of your {MAX_OPEN_ROUNDS} open rounds before starting another.", status_code=409
            )
        _check_deal_rate(player, clock.now())
        pair = deal_pair(deal_pool_for_player(player=player, category=category, page_id=page_id), level=deal_level(player))
        if pair is None:
            where = " on this page." if page_id is not None else " in this category." if category else "."
            raise ServiceError("no_pair_available", "No fair pair of claims is left for you" + where, status_code=404)
        # The round and dealt rows reference both claims (a key-share lock each, in screen
        # order); a moderator locks a claim for update before the rounds it voids. Take the
        # key-share locks in id order first, as a vote does, so no two wait in opposite orders.
        claim_refs_lock(claim_ids=(pair[0].id, pair[1].id))
        left, right = pair if random.random() < 0.5 else pair[::-1]
        round_ = compiled_create(
            Round(
                player=player,
                left_claim_id=left.id,
                right_claim_id=right.id,
                false_claim_index=0 if left.label == Claim.Label.REFUTES else 1,
                **round_fields_for(player_id=player.pk),
            )
        )
        try:
            with transaction.atomic():
                SeenClaim.objects.bulk_create(
                    [SeenClaim(player=player, claim_id=left.id, round=round_), SeenClaim(player=player, claim_id=right.id, round=round_)]
                )
        except IntegrityError:
            raise ServiceError("no_pair_available", "Those claims were just dealt to you; try again.", status_code=409) from None
    return _get_round(round_id=round_.pk, player=None)


# --- the clock ----------------------------------------------------------------------------


# Large claim fields a round never reads (the release's retrieval lists): not loaded.
_UNUSED_CLAIM_FIELDS = ("left_claim__release_retrieved", "right_claim__release_retrieved")


def _get_round(*, round_id: int, player: AbstractBaseUser | None, lock: bool = False) -> Round:
    """The round, if it is ``player``'s (anyone's when None); another player's round is
    "not found", so its existence does not leak. ``lock`` takes its row lock."""
    # The room question the round may belong to comes in the same query (an outer join):
    # its answer is withheld while that question plays (``round_answer_withheld``).
    related = hooks.round_groups.get().related

    def rounds() -> QuerySet[Round]:
        rounds = Round.objects.select_related("left_claim__page", "right_claim__page", *related).defer(*_UNUSED_CLAIM_FIELDS)
        return rounds.select_for_update(of=("self",)) if lock else rounds

    round_ = compiled_instance(f"round:{lock}:{related}", rounds, round_id)  # this query runs three times a round
    if round_ is None or (player is not None and round_.player_id != player.pk):
        raise ServiceError("round_not_found", "No such round.", status_code=404)
    return round_


def _close_if_due(round_: Round, now: datetime) -> bool:
    """Time the round out if its deadline has passed. Returns True when it did. Idempotent."""
    if round_.state == Round.State.PLAYING and round_.deadline is not None and now >= round_.deadline:
        round_.state, round_.ended_at = Round.State.TIMED_OUT, round_.deadline
        round_.save(update_fields=["state", "ended_at"])
        round_changed_on_commit(round_)
        return True
    return False


def _schedule_expiry(round_: Round, *, final: bool = False) -> None:
    """After the commit, ask a worker to close the round at its deadline. Asked once per
    round, by the start (a reveal only moves the deadline earlier; the socket's tick, lazy
    expiry and the sweep close the round at its real deadline, and a task that runs early
    re-sends itself once: ``final`` is that second send). The rounds of this process due in
    the same second share one task (``tasks.expire_rounds``), run at the end of that second:
    a Celery send per round was 8% of a web process's CPU under the REST bench. A round
    closed by it up to a second late ends at its deadline all the same, and a vote after the
    deadline is refused by the vote's own check. With eager tasks (no broker) the task would
    run at once and find nothing due, so it is not sent.

    A start made through a round socket sends none: while the socket is open its tick closes
    the round at the deadline, and a socket that goes with its round still playing sends the
    task then (``round_left_playing``). Most rounds end in a vote first, and the task (a
    send by the web process, a run by the worker) was work for nothing. A web process that
    dies with its sockets leaves their rounds to the sweep (a minute at most) and to lazy
    expiry on any read."""
    from foolgame.voting import tasks

    if events.task_runs_eagerly(tasks.expire_round) or (round_socket.get() is not None and not final):
        return
    if final:
        events.task_on_commit(tasks.expire_round, round_.pk, False, eta=round_.deadline)
    else:  # the rounds due in the same second share one send and one run
        events.task_batched_on_commit(tasks.expire_rounds, [round_.pk], eta=round_.deadline)


def round_left_playing(*, round_id: int, deadline: datetime) -> None:
    """A round socket closed while its round still plays: have a worker close the round at
    its deadline (``_schedule_expiry`` left that to the socket). No database work: callable
    from the socket's event loop. Another socket or a vote may end the round first; the task
    then finds nothing to do."""
    from foolgame.voting import tasks

    if not events.task_runs_eagerly(tasks.expire_round):
        events.task_send(tasks.expire_round, round_id, eta=deadline)


def round_expire(*, round_id: int, reschedule: bool = False) -> bool:
    """Close a round whose time is up (the Celery task and the sweep call this). Idempotent.

    ``reschedule`` (the expiry task's first run): a playing round found before its deadline
    gets its one expiry task sent again for the current deadline, so one pending task per
    round is enough whatever the reveals did to the deadline."""
    with transaction.atomic():
        try:
            round_ = Round.objects.select_for_update().get(pk=round_id)
        except Round.DoesNotExist:
            return False
        if round_.state == Round.State.READY:
            return _abandon_if_stale(round_, clock.now())
        closed = _close_if_due(round_, clock.now())
        if not closed and reschedule and round_.state == Round.State.PLAYING:
            _schedule_expiry(round_, final=True)
        return closed


def round_time_out(*, round_id: int) -> bool:
    """End a playing round now as timed out, before its deadline: the clock of the group it
    is played in ran out early (a room's host ended the question). No points and no rating, as
    any timeout; the round's sockets are told. A round already over keeps how it ended.
    Returns True when this call ended it.

    Locking: the round's row lock, as every service that changes a round."""
    with transaction.atomic():
        round_ = Round.objects.select_for_update().filter(pk=round_id).first()
        if round_ is None or round_.state != Round.State.PLAYING:
            return False
        now = clock.now()
        round_.state, round_.ended_at = Round.State.TIMED_OUT, min(now, round_.deadline) if round_.deadline else now
        round_.save(update_fields=["state", "ended_at"])
        round_changed_on_commit(round_)
        return True


def _abandon_if_stale(round_: Round, now: datetime) -> bool:
    """A dealt round never started within the window is withdrawn: its claims were never
    shown, so they go back to the pool for this player."""
    if round_.state == Round.State.READY and now - round_.created > timedelta(seconds=game_settings()["ROUND_START_WITHIN_SECONDS"]):
        round_.delete()
        return True
    return False


def rounds_expire_for_player(*, player: AbstractBaseUser) -> None:
    for round_id in _solo_open_round_ids(player):
        round_expire(round_id=round_id)


def rounds_sweep() -> int:
    """Close every round over its deadline and withdraw stale unstarted ones (periodic task)."""
    now = clock.now()
    due = Round.objects.filter(state=Round.State.PLAYING, deadline__lte=now)
    stale = Round.objects.filter(state=Round.State.READY, created__lt=now - timedelta(seconds=game_settings()["ROUND_START_WITHIN_SECONDS"]))
    closed = sum(round_expire(round_id=pk) for pk in list(due.values_list("id", flat=True)) + list(stale.values_list("id", flat=True)))
    votes_settle()
    return closed


def _check_playing(round_: Round, now: datetime) -> float | None:
    """The round must be started and not over; returns the remaining seconds, or None when
    the round turned out to be over its deadline and was timed out just now. The caller
    then leaves its transaction normally, so the timeout commits, and refuses the request."""
    if round_.state == Round.State.READY:
        raise ServiceError("round_not_started", "Start the round first.", status_code=409)
    if _close_if_due(round_, now):
        return None
    if round_.state != Round.State.PLAYING:
        raise ServiceError("round_over", "This round is over.", status_code=409)
    # The deadline is started_at + 180 - 10 x reveals, rewritten under the lock by every
    # reveal: the same stored clock as counting the reveals, without the query. A round at
    # or past it was timed out by _close_if_due above, so what is left here is above zero.
    return (round_.deadline - now).total_seconds()


def _expired_error() -> ServiceError:
    return ServiceError("round_expired", "Time is up: the round has timed out.", status_code=409)


def round_get_state(*, round_id: int, player: AbstractBaseUser) -> RoundState:
    """The round as its player may see it now. A plain read; only a round found over its
    deadline takes the lock, to be timed out first (lazy expiry)."""
    round_ = _get_round(round_id=round_id, player=player)
    if round_.state == Round.State.PLAYING and round_.deadline is not None and clock.now() >= round_.deadline:
        round_expire(round_id=round_id)
        round_ = _get_round(round_id=round_id, player=player)
    return round_state(round_)


def round_read(*, round_id: int, player: AbstractBaseUser) -> RoundState:
    """``round_get_state`` as the player's own read of their round (``GET /api/rounds/<id>``,
    the round socket's ``state`` frame): a round played in a group whose answer is still held
    back first sends ``round_settled``, so a group whose clock ran out with nobody there to end
    it (a room's question past its deadline) ends now and the read shows its answer. A solo
    round, or one whose answer is out, is read as ``round_get_state`` reads it."""
    round_ = _get_round(round_id=round_id, player=player)
    groups = hooks.round_groups.get()
    if groups.in_group(round_) and groups.answer_withheld(round_):
        hooks.round_settled.send(round_id=round_id)
    return round_get_state(round_id=round_id, player=player)


# --- actions ------------------------------------------------------------------------------


def round_start(*, round_id: int, player: AbstractBaseUser) -> RoundState:
    """Start the clock (the claims are sent only now). Starting a started round just
    returns its state: that is how a reconnecting client resynchronises."""
    with transaction.atomic():
        round_ = _get_round(round_id=round_id, player=player, lock=True)
        now = clock.now()
        if round_.state == Round.State.READY:
            round_.started_at, round_.state = now, Round.State.PLAYING
            round_.deadline = deadline_after(round_, 0)
            compiled_update(round_, ("started_at", "state", "deadline"))  # every start: written once
            _schedule_expiry(round_)
            round_changed_on_commit(round_)
            return round_state(round_, now=now, reveals=[])
        _close_if_due(round_, now)
        return round_state(round_, now=now)


def round_reveal_clue(*, round_id: int, player: AbstractBaseUser, claim_index: int) -> ClueResult:
    """Buy the next clue of one claim: it costs 10 s of the round's clock."""
    _check_index(claim_index)
    with transaction.atomic():
        round_ = _get_round(round_id=round_id, player=player, lock=True)
        now = clock.now()
        remaining = _check_playing(round_, now)
        if remaining is not None:
            if not round_.hints:
                raise ServiceError("clues_off", "This round is played without clues: spot the false claim from the claims alone.", status_code=403)
            claim = round_.claims[claim_index]
            position = round_.reveals.filter(claim_index=claim_index).count()
            if position >= len(claim.clues):
                raise ServiceError("no_more_clues", "Every clue of this claim is already revealed.", status_code=409)
            cost = clue_seconds(round_)
            if remaining - cost <= 0:
                raise ServiceError("not_enough_time", f"A clue costs {cost} s and would leave no time to vote.", status_code=409)
            ClueReveal.objects.create(round=round_, claim_index=claim_index, position=position, revealed_at=now)
            reveals = round_.reveals.count()
            round_.deadline = deadline_after(round_, reveals)
            round_.save(update_fields=["deadline"])
            round_changed_on_commit(round_)
            remaining = round_remaining(round_, now=now, reveals=reveals)
            clue: ClueResult = {
                "claim": claim_index,
                "clue": clue_payload(claim, position),
                "clues_left": max(len(c.clues) for c in round_.claims) - position - 1,
                "remaining": round(remaining, 2),
                "points": round_points(remaining),
                "deadline": round_.deadline.isoformat(),
            }
            return cast(ClueResult, points_hidden(clue, round_))
    raise _expired_error()


def _rate_on_commit(vote: Vote) -> None:
    """The vote's ratings update, by a task after the commit (``rate_votes``, batched with the
    other votes of the next half second; the sweep ``rate_pending_votes`` catches any a lost
    task missed): off the vote's transaction and its socket's process, which measured twice
    the vote ack's latency with it inline."""
    from foolgame.voting import tasks

    events.task_batched_on_commit(tasks.rate_votes, [vote.pk])


def _vote_round(*, round_id: int, player: AbstractBaseUser, arrived: datetime) -> Round:
    """The round a vote is cast on, if it is ``player``'s (as ``_get_round``), and all the
    vote checks before it writes, in one statement: the round's row locked for update and its
    two claims' rows key share, the claims first (``counters.round_claims_key_share``: the
    order deals and moderation lock them in), the claims with their pages and the round's
    group (``_get_round``'s joins), and two annotations for ``_vote_unpaid``: ``answer_seen``,
    whether the player had seen either claim with its answer by ``arrived`` (``hooks.play_rules``:
    a moderator's sighting; absent without such a rule), and ``player_guest``, whether the
    player is a guest. Built and compiled once (``compiled_instance``)."""
    related = hooks.round_groups.get().related
    seen = hooks.play_rules.get().claims_answer_seen(player_id=player.pk, at=arrived)

    def rounds() -> QuerySet[Round]:
        checks: dict[str, Any] = {"player_guest": Exists(Guest.objects.filter(user_id=OuterRef("player_id")))}
        if seen is not None:
            pair = models.Q(pk=OuterRef("left_claim_id")) | models.Q(pk=OuterRef("right_claim_id"))
            checks["answer_seen"] = Exists(Claim.objects.filter(seen).filter(pair))
        return (
            Round.objects.select_related("left_claim__page", "right_claim__page", *related)
            .defer(*_UNUSED_CLAIM_FIELDS)
            .annotate(**checks)
            .select_for_update(of=("left_claim", "right_claim", "self"))
        )

    # The values of the SQL in its order: each Exists' selected 1, the rule's lookups, the key.
    params = [1, round_id] if seen is None else [1, 1, arrived, player.pk, round_id]
    round_ = compiled_instance(f"vote_round:{related}:{seen is None}", rounds, round_id, params=params, rewrite=round_claims_key_share)
    if round_ is None or round_.player_id != player.pk:
        raise ServiceError("round_not_found", "No such round.", status_code=404)
    return cast(Round, round_)


def _vote_unpaid(player: AbstractBaseUser, round_: Round) -> str:
    """Why this vote pays nobody (``Vote.unpaid``), or "": ``moderator_saw_claim`` when the
    voter had seen either claim with its answer outside a round before the vote came
    (``hooks.play_rules``: a moderator's sighting), ``guest`` for a guest account
    (``is_guest``). Both were read with the round (``_vote_round``); the guest flag is
    remembered on the user object where ``players.roles.is_guest`` keeps it, and one it
    already holds (a socket's earlier vote) is the one that counts, as ``is_guest`` answers."""
    if getattr(player, "is_authenticated", False) and getattr(player, "_fm2_is_guest", None) is None:
        player._fm2_is_guest = bool(round_.player_guest)  # type: ignore[attr-defined]
    if getattr(round_, "answer_seen", False):
        return "moderator_saw_claim"
    return "guest" if is_guest(player) else ""


def _recount_on_commit(round_: Round) -> None:
    """The vote's claims' dealer counters (``voting.counters``), recounted by a task after the
    commit, batched with the other votes of the next half second (``recount_claim_votes``;
    the hourly ``recount_all_claim_votes`` sets any a lost task missed)."""
    from foolgame.voting import tasks

    events.task_batched_on_commit(tasks.recount_claim_votes, [round_.left_claim_id, round_.right_claim_id])


def _settle_on_commit(round_: Round) -> None:
    """A round service ended this round: when it is played in a group (a room's question), send
    ``round_settled`` once the change has committed, so the group ends when nothing is left to
    wait for, whatever transport (REST, the round socket, the room socket) asked. A solo round
    sends nothing and costs no query (``in_group`` is read from the round's related rows)."""
    if hooks.round_groups.get().in_group(round_):
        events.hook_on_commit(hooks.round_settled, round_id=round_.pk)


def _vote_awards(round_: Round, *, correct: bool, remaining: float) -> list[Any]:
    """The round's awards for a vote (``scoring.rounds.round_awards``: zero-sum, 120 a round)."""
    true_claim, false_claim = round_.claims[1 - round_.false_index], round_.claims[round_.false_index]
    return round_awards(
        outcome=Outcome.CORRECT if correct else Outcome.WRONG,
        remaining=remaining,
        voter=round_.player_id,
        true_claim_author=true_claim.author_id,
        false_claim_author=false_claim.author_id,
        pot=game_settings()["ROUND_POT"],
    )


def _vote_pay(round_: Round, vote: Vote, awards: list[Any]) -> None:
    """Write what a vote pays (its ledger rows), tell its authors, and rate it after the
    commit; an unpaid vote (``Vote.unpaid``) does none of it. In the caller's transaction."""
    if vote.unpaid:
        return
    true_claim, false_claim = round_.claims[1 - round_.false_index], round_.claims[round_.false_index]
    claim_of_role = {"voter": false_claim, "true_claim_author": true_claim, "false_claim_author": false_claim}
    ledger = LedgerEntry.objects.bulk_create(
        LedgerEntry(player_id=a.player, amount=a.amount, kind=str(a.kind), claim=claim_of_role[str(a.role)], cause=f"round:{round_.pk}")
        for a in awards
    )
    notifications.notifications_for_vote(round_=round_, vote=vote, ledger=ledger)
    _rate_on_commit(vote)


def votes_settle(*, round_ids: list[int] | None = None) -> int:
    """Pay, notify and rate the votes cast on room rounds while their question played, once
    their question's answer is out for everyone: when the question is over, or, when a member
    gave up on it (a forfeit, a leave), not before the question's deadline, since the
    public leaderboards would tell the one who gave up who was right sooner than waiting
    would have. The rooms service calls it when it ends a question; the round sweep
    (``round_ids`` None: every vote left unsettled) pays the rest. Each vote once: its row is
    locked and ``settled`` set in the same transaction. Returns how many it settled."""
    votes = Vote.objects.filter(settled=False)
    if round_ids is not None:
        votes = votes.filter(round_id__in=round_ids)
    due = hooks.round_groups.get().votes_due(votes, clock.now())
    if not due:
        return 0
    with transaction.atomic():
        locked = Vote.objects.filter(pk__in=due, settled=False).select_for_update(of=("self",))
        votes = list(locked.select_related("round__left_claim", "round__right_claim").only(*_SETTLE_FIELDS).order_by("pk"))
        if not votes:
            return 0
        _votes_pay(votes)
        Vote.objects.filter(pk__in=[vote.pk for vote in votes]).update(settled=True)
    return len(votes)


_SETTLE_FIELDS = ("round__player", "round__false_claim_index", "correct", "remaining", "unpaid") + tuple(
    f"round__{side}_claim__{field}" for side in ("left", "right") for field in ("author", "label")
)
"""What paying a vote reads: not the claims' texts and evidence."""


def _votes_pay(votes: list[Vote]) -> None:
    """``_vote_pay`` for many votes at once (their rounds selected with their claims): one
    insert of all their ledger rows, one of all their notifications, one rating task after
    the commit; the unpaid ones (``Vote.unpaid``) do none of it. In the caller's transaction."""
    paid = [vote for vote in votes if not vote.unpaid]
    if not paid:
        return
    rows: list[tuple[Vote, list[LedgerEntry]]] = []
    for vote in paid:
        round_ = vote.round
        true_claim, false_claim = round_.claims[1 - round_.false_index], round_.claims[round_.false_index]
        claim_of_role = {"voter": false_claim, "true_claim_author": true_claim, "false_claim_author": false_claim}
        awards = _vote_awards(round_, correct=vote.correct, remaining=vote.remaining)
        rows.append((vote, [
            LedgerEntry(player_id=a.player, amount=a.amount, kind=str(a.kind), claim=claim_of_role[str(a.role)], cause=f"round:{round_.pk}")
            for a in awards
        ]))
    LedgerEntry.objects.bulk_create([entry for _, ledger in rows for entry in ledger])
    notifications.notifications_for_votes(paid=[(vote.round, vote, ledger) for vote, ledger in rows])
    from foolgame.voting import tasks

    events.task_batched_on_commit(tasks.rate_votes, [vote.pk for vote in paid])


def votes_unpay(*, round_ids: list[int], reason: str) -> int:
    """The votes on these rounds that are not settled yet (a room's votes wait for their
    question's answer) pay nothing and are not rated (``Vote.unpaid`` = ``reason``, points 0):
    a room's host skipped the question. A settled vote keeps what it paid: the ledger is
    append-only. Returns how many it changed."""
    return Vote.objects.filter(round_id__in=round_ids, settled=False, unpaid="").update(unpaid=reason, points=0, rated=True)


def vote_cast(*, round_id: int, player: AbstractBaseUser, false_claim: int) -> Result:
    """Mark the claim the player thinks is false. One vote per round (a database rule);
    the vote and its ledger rows are written in one transaction; the claims' vote counters
    (``voting.counters``), quality flags and ratings follow from it after the commit (batched
    tasks). On a room's round while its question plays the answer is only the
    time left: whether the vote was right is the whole room's news when the question is over.
    A vote by a player who had seen either claim as a moderator before it pays nobody and is
    not rated (``Vote.unpaid``; its result says why).

    Locking: the round's two claim rows key share, then the round's row, in the one statement
    that reads the round (``_vote_round``). Moderation locks a claim for update before the
    rounds it voids, so taking the claims first keeps one order; key share lets the votes of a
    room, all on one pair, run side by side.

    The answer's own reads (the claims' gold sentences, the player's streak) come after the
    commit, out of the round's lock: the transaction holds the round's read, the vote, its
    ledger rows and the round's update.

    A round played in a group sends ``round_settled`` once the vote has committed (a room's
    question may be over now), whichever transport carried the vote (``_settle_on_commit``). A
    solo round has nothing to settle and costs no query: whether it is a group's came with it."""
    _check_index(false_claim, field="false_claim")
    arrived = clock.now()
    try:
        with transaction.atomic():
            round_ = _vote_round(round_id=round_id, player=player, arrived=arrived)
            now = clock.now()
            remaining = _check_playing(round_, now)
            if remaining is not None:
                correct = false_claim == round_.false_index
                unpaid = _vote_unpaid(player, round_)
                # A guest's vote keeps its points for the room's own scoreboard but writes no
                # ledger row (for the guest or the authors) and is not rated: accounts made with
                # a nickname alone, 60 an hour from one address, must not pump authors' points
                # or move claims' difficulty. The round stays zero-sum: nobody is paid.
                awards = [] if unpaid and unpaid != "guest" else _vote_awards(round_, correct=correct, remaining=remaining)
                withheld = hooks.round_groups.get().answer_withheld(round_)
                # A second vote breaks the one-vote-per-round constraint here and the whole
                # transaction (ledger rows included) rolls back.
                vote = compiled_create(Vote(
                    round=round_,
                    false_claim_index=false_claim,
                    correct=correct,
                    points=sum(a.amount for a in awards if a.role == "voter"),
                    remaining=remaining,
                    created=now,
                    unpaid=unpaid,
                    rated=bool(unpaid),  # an unpaid vote is not rated: nothing to apply
                    settled=not withheld,
                ))
                if not withheld:
                    _vote_pay(round_, vote, awards)
                round_.state, round_.ended_at = Round.State.VOTED, now
                compiled_update(round_, ("state", "ended_at"))  # every vote: written once
                round_changed_on_commit(round_)
                hooks.claims_voted.send(claim_ids=[round_.left_claim_id, round_.right_claim_id])
                _recount_on_commit(round_)
                _settle_on_commit(round_)
    except IntegrityError:
        raise ServiceError("round_over", "This round already has its vote.", status_code=409) from None
    if remaining is None:
        raise _expired_error()
    return vote_ack(vote) if withheld else result_payload(round_, vote)


def _refuse_guest(player: AbstractBaseUser, what: str) -> None:
    """A guest account (a nickname, for live rooms) neither likes (a like pays an author) nor
    reports (reports feed moderation): throttled free accounts would otherwise farm points or
    flood the queue. The HTTP paths are closed to guests already (``GuestLimitsMiddleware``);
    this holds for the round socket too."""
    if is_guest(player):
        raise ServiceError("guest_not_allowed", f"Guest accounts do not {what}; set a password to keep your account first.", status_code=403)


def round_like(*, round_id: int, player: AbstractBaseUser, claim: int | None) -> dict[str, Any]:
    """After the vote, say which claim was more interesting; a like pays its author 10 points.
    Not a guest's (``_refuse_guest``)."""
    _refuse_guest(player, "like claims")
    if claim is not None:
        _check_index(claim, field="claim")
    with transaction.atomic():
        round_ = _get_round(round_id=round_id, player=player, lock=True)
        if round_.state != Round.State.VOTED:
            raise ServiceError("vote_first", "Likes come after the vote.", status_code=409)
        liked = round_.claims[claim] if claim is not None else None
        try:
            with transaction.atomic():
                Like.objects.create(round=round_, claim=liked, created=clock.now())
        except IntegrityError:
            raise ServiceError("already_liked", "You already said which claim you liked in this round.", status_code=409) from None
        if liked is not None and liked.author_id != player.pk:
            LedgerEntry.objects.create(
                player_id=liked.author_id, amount=game_settings()["LIKE_POINTS"], kind=LedgerEntry.Kind.LIKE, claim=liked, cause=f"round:{round_.pk}"
            )
            notifications.notification_for_like(claim=liked, voter=player, points=game_settings()["LIKE_POINTS"])
        return {"ok": True}


def _check_report_rate(player: AbstractBaseUser, now: datetime) -> None:
    """At most REPORTS_PER_WINDOW reports per REPORT_WINDOW_SECONDS and REPORTS_PER_DAY per
    day, counted from the stored reports; the caller holds the player's row lock."""
    game = game_settings()
    for limit, seconds in ((game["REPORTS_PER_WINDOW"], game["REPORT_WINDOW_SECONDS"]), (game["REPORTS_PER_DAY"], 24 * 3600)):
        since = now - timedelta(seconds=seconds)
        recent = list(Report.objects.filter(reporter=player, created__gt=since).order_by("-created").values_list("created", flat=True)[:limit])
        if len(recent) >= limit:
            again = recent[-1] + timedelta(seconds=seconds)
            wait = max(1, math.ceil((again - now).total_seconds()))
            raise ServiceError(
                "report_rate_limited",
                f"You sent {limit} reports in the last {_span(seconds)}; you can report again in {_span(wait)} (at {again.isoformat(timespec='seconds')}).",
                status_code=429,
                details={"retry_after": wait, "retry_at": again.isoformat()},
            )


def _span(seconds: int) -> str:
    if seconds >= 3600:
        return f"{math.ceil(seconds / 3600)} h"
    if seconds >= 60:
        return f"{math.ceil(seconds / 60)} min"
    return f"{seconds} s"


def _reporter_trusted(player: AbstractBaseUser, now: datetime) -> bool:
    """Whether a report by this player counts towards hiding a claim: enough voted rounds and
    an account old enough (decided at report time and stored on the report)."""
    game = game_settings()
    hours = game["REPORT_TRUST_MIN_ACCOUNT_HOURS"]
    joined = getattr(player, "date_joined", None)
    if hours > 0 and joined is not None and now - joined < timedelta(hours=hours):
        return False
    return Round.objects.filter(player=player, state=Round.State.VOTED).count() >= game["REPORT_TRUST_MIN_VOTES"]


def round_report(*, round_id: int, player: AbstractBaseUser, claim: int, reason: str, note: str = "") -> dict[str, Any]:
    """Report a claim of the round. During play this ends the round without points; after
    it, within REPORT_AFTER_ROUND_SECONDS, the report is only stored. Reports feed the
    moderation queue; only those of trusted reporters count towards hiding a claim.

    Locking: the player's row (the rate limit is counted under it), then the round's."""
    _refuse_guest(player, "report claims")
    _check_index(claim, field="claim")
    if reason not in Report.Reason.values:
        raise ServiceError("invalid_reason", f"reason must be one of: {', '.join(Report.Reason.values)}.")
    note = (note or "").strip()
    if len(note) > NOTE_MAX_CHARS:
        raise ServiceError("note_too_long", f"A note holds at most {NOTE_MAX_CHARS} characters.")
    with transaction.atomic():
        get_user_model().objects.select_for_update().get(pk=player.pk)  # the rate limit is counted under it
        round_ = _get_round(round_id=round_id, player=player, lock=True)
        if round_.state == Round.State.READY or (round_.state == Round.State.FORFEITED and round_.started_at is None):
            raise ServiceError("round_not_started", "Start the round to see its claims first.", status_code=409)
        if round_.state == Round.State.VOIDED:
            raise ServiceError("round_voided", "A moderator already changed a claim of this round.", status_code=409)
        now = clock.now()
        if round_.state == Round.State.PLAYING and round_.deadline is not None and now >= round_.deadline:
            ended_at = round_.deadline  # timed out just now: the window runs from its deadline
        else:
            ended_at = round_.ended_at
        if round_.state != Round.State.PLAYING or ended_at is not None:
            window = game_settings()["REPORT_AFTER_ROUND_SECONDS"]
            if ended_at is None or now - ended_at > timedelta(seconds=window):
                raise ServiceError(
                    "report_window_closed", f"Reports are taken during a round and up to {_span(window)} after it ends.", status_code=409
                )
        _check_report_rate(player, now)
        _close_if_due(round_, now)
        try:
            with transaction.atomic():
                Report.objects.create(
                    claim=round_.claims[claim],
                    reporter=player,
                    round=round_,
                    reason=reason,
                    note=note,
                    created=now,
                    counts_for_hiding=_reporter_trusted(player, now),
                )
        except IntegrityError:
            raise ServiceError("already_reported", "You already reported this claim.", status_code=409) from None
        hooks.claim_reported.send(claim_id=round_.claims[claim].pk)
        if round_.state == Round.State.PLAYING:
            round_.state, round_.ended_at = Round.State.REPORTED, now
            round_.save(update_fields=["state", "ended_at"])
            round_changed_on_commit(round_)
        _settle_on_commit(round_)  # a report ends a group's round: its question may be over
        return {"ok": True}


def _check_index(value: Any, *, field: str = "claim") -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value not in (0, 1):
        raise ServiceError("invalid_claim", f"{field} must be 0 (left) or 1 (right).")


def rounds_void_for_claim(*, claim_id: int, action: str = "") -> list[int]:
    """End every playing round holding this claim without points, as voided: a moderator
    changed the claim (label, evidence, removal) while it was in play. A dealt round not
    started yet showed nothing, so it is withdrawn as a stale one is (its other claim goes
    back to the player's pool). Runs in the moderation action's transaction (rows locked,
    in id order); the sockets hear of it on commit. The played claims stay seen
    (SeenClaim): the player just gets a new round. ``action`` (the moderation action) is
    kept on each voided round for the export. Returns the voided rounds' ids."""
    ids = list(
        Round.objects.filter(state__in=Round.OPEN_STATES)
        .filter(models.Q(left_claim_id=claim_id) | models.Q(right_claim_id=claim_id))
        .order_by("pk")
        .values_list("pk", flat=True)
    )
    voided = []
    now = clock.now()
    for round_ in Round.objects.select_for_update().filter(pk__in=ids).order_by("pk"):
        if round_.state == Round.State.READY:
            round_.delete()
            continue
        if round_.state != Round.State.PLAYING:
            continue
        round_.state, round_.ended_at, round_.void_action = Round.State.VOIDED, now, action
        round_.save(update_fields=["state", "ended_at", "void_action"])
        round_changed_on_commit(round_)
        voided.append(round_.pk)
    return voided


# --- the player's history ------------------------------------------------------------------

HISTORY_MAX_LIMIT = 50


def rounds_history(*, player: AbstractBaseUser, offset: int = 0, limit: int = 20) -> tuple[list[PastRound], int | None]:
    """The player's past rounds whose answer is out for them, newest first (``past_round``),
    ``limit`` of them from ``offset`` in the list of their finished rounds, and the offset of
    the next ones (None at the end). A round whose answer waits (a room's question still
    playing, a solo report before its deadline) is left out, so a page may hold fewer."""
    limit = max(1, min(limit, HISTORY_MAX_LIMIT))
    rows = list(player_past_rounds(player=player)[offset : offset + limit + 1])
    now = clock.now()
    shown = [past_round(round_) for round_ in rows[:limit] if answer_out(round_, now)]
    return shown, offset + limit if len(rows) > limit else None


# --- open rounds: resume or forfeit -------------------------------------------------------


def rounds_open_for_player(*, player: AbstractBaseUser) -> list[RoundState]:
    """The player's open rounds (dealt or playing), newest first, each as ``round_state``
    shows it (the true remaining time, the clues bought): the play page resumes the newest
    one after a reload. Rounds over their deadline are timed out first (lazy expiry), and
    stale unstarted ones withdrawn, so what is listed can still be played."""
    rounds_expire_for_player(player=player)
    rounds = (
        _solo_open_rounds(player)
        .select_related("left_claim__page", "right_claim__page")
        .defer(*_UNUSED_CLAIM_FIELDS)
        .order_by("-created", "-id")
    )
    now = clock.now()
    return [round_state(round_, now=now) for round_ in rounds]


def _rate_forfeit_on_commit(round_: Round) -> None:
    """A forfeit's ratings update (a wrong vote on the pair), by the batched task after the
    commit, as a vote's (``rate_forfeits``; the ``rate_pending_votes`` sweep catches a lost one)."""
    from foolgame.voting import tasks

    events.task_batched_on_commit(tasks.rate_forfeits, [round_.pk])


def round_forfeit(*, round_id: int, player: AbstractBaseUser, rated: bool = True) -> RoundState:
    """Give up an open round: it ends at once as forfeited, with no points for anyone. Its
    claims stay dealt to the player (SeenClaim), so giving up never buys a second look at a
    pair, and its answer is shown no sooner than waiting would have shown it (``answer_at``):
    a started round's at its deadline as it stood (clues bought included); a round never
    started at now + ROUND_SECONDS, and not even its claims' text before then. A room's
    round shows it when its question is over, with the room.

    A started round given up counts as a wrong vote on its pair in the ratings (``rated``;
    the rooms service passes False for rounds it ends itself); one never started rates nobody.
    A round found past its deadline is timed out instead, as any request would. A player
    gives up at most FORFEITS_PER_HOUR solo rounds in an hour (429 ``forfeit_rate_limited``,
    ``_check_forfeit_rate``).

    Locking: the round's row lock, as every service that changes a round."""
    with transaction.atomic():
        round_ = _get_round(round_id=round_id, player=player, lock=True)
        now = clock.now()
        due = round_.state == Round.State.PLAYING and round_.deadline is not None and now >= round_.deadline
        if round_.state in Round.OPEN_STATES and not due:
            _check_forfeit_rate(player, round_, now)
        if round_.state == Round.State.READY:
            round_.answer_at = now + timedelta(seconds=round_seconds(round_))
        elif _close_if_due(round_, now):
            _settle_on_commit(round_)  # timed out instead: a group's question may be over too
            return round_state(round_, now=now)
        elif round_.state != Round.State.PLAYING:
            raise ServiceError("round_over", "This round is over.", status_code=409)
        else:
            # A room's round: its answer comes with the question's own clock (which clues
            # bought by this member never moved), as for every member who waited.
            round_.answer_at = hooks.round_groups.get().forfeit_answer_at(round_) or round_.deadline
            round_.forfeit_rated = False if rated else None
        round_.state, round_.ended_at = Round.State.FORFEITED, now
        round_.save(update_fields=["state", "ended_at", "answer_at", "forfeit_rated"])
        round_changed_on_commit(round_)
        if round_.forfeit_rated is False:
            _rate_forfeit_on_commit(round_)
        _settle_on_commit(round_)  # a group's question may be over now
        return round_state(round_, now=now)
