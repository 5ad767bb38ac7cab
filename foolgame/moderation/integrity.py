"""Improbable players: hold accounts whose votes no person would cast, until a moderator acts.

The tests are ``scoring.integrity``'s; this module feeds them the game's votes and writes
their verdicts as :class:`PlayerHold` rows. A vote's facts are its correctness, the clues
bought in its round and the seconds from the round's start to the vote. The population's
accuracy per bucket is read from the most recent ``POPULATION_VOTES`` votes of players not
held, and cached for the per-vote checks (``POPULATION_CACHE_SECONDS``); the periodic
refresh fits it afresh. A round *given up* is one that timed out, or was forfeited when the
round model has such a state: from its end its player can see both answers.

Refreshing is idempotent: it only ever holds a player (or updates a hold's evidence); only a
moderator clears or confirms. A cleared hold is tested again on the votes cast after the
votes its evidence covered, so the same evidence never holds a player twice.

Locking: a hold's row is written under its lock (``select_for_update``) in a short
transaction per player; a moderator's action takes the same lock, and a refresh that finds
the hold cleared since it read it leaves it alone (the next refresh tests the new votes).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, cast

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.core.cache import cache
from django.db import connection, transaction
from django.db.models import Count, Max, Q, QuerySet
from django.utils import timezone

from foolgame.core.errors import ServiceError
from foolgame.core.queries import compiled_rows
from foolgame.moderation.models import PlayerAuditRecord, PlayerHold
from foolgame.players.roles import is_moderator
from foolgame.voting.models import Round, Vote
from scoring import integrity as rules

POPULATION_CACHE_KEY = "fm2:integrity:population"
POPULATION_CACHE_SECONDS = 15 * 60
PAIRS_SHOWN = 50
REASON_MAX_CHARS = 1000


def _config() -> dict[str, Any]:
    return settings.FM2_INTEGRITY


def given_up_states() -> list[str]:
    """Round states whose player saw the answers without a vote: timeouts, and forfeits
    when the round model keeps them apart (``Round.State.FORFEITED``)."""
    states = [Round.State.TIMED_OUT.value]
    forfeited = getattr(Round.State, "FORFEITED", None)
    if forfeited is not None:
        states.append(forfeited.value)
    return states


@dataclass(frozen=True)
class _VoteRow:
    id: int
    player: int
    claims: tuple[int, int]
    cast: datetime
    fact: rules.VoteFact


def _vote_values(votes: QuerySet[Vote]) -> QuerySet[Any]:
    """The columns of a ``_VoteRow``, with the clues bought in the vote's round."""
    return votes.annotate(clues=Count("round__reveals")).values_list(
        "id", "round__player_id", "round__left_claim_id", "round__right_claim_id", "round__started_at", "created", "correct", "clues"
    )


def _values(name: str, build: Callable[[], QuerySet[Any]], params: list[Any]) -> list[tuple[Any, ...]]:
    """The rows of the ``values_list`` queryset ``build()`` makes. On PostgreSQL its SQL is
    compiled once per ``name`` (``core.queries.compiled_rows``, which checks ``params``
    against Django's own): the test of a voter after votes ran five such queries, and building
    and compiling them was most of the worker's CPU on the rooms benchmark (issue 42). Other
    databases run Django's, which turns SQLite's text datetimes into datetimes."""
    if connection.vendor == "postgresql":
        return compiled_rows(name, build, params)
    return [tuple(row) for row in build()]


def _vote_rows(votes: Any) -> list[_VoteRow]:
    return _as_vote_rows(_vote_values(votes))


def _as_vote_rows(rows: Iterable[tuple[Any, ...]]) -> list[_VoteRow]:
    found = []
    for pk, player, left, right, started, created, correct, clues in rows:
        seconds = (created - started).total_seconds() if started is not None else 0.0
        found.append(_VoteRow(pk, player, (left, right), created, rules.VoteFact(bool(correct), int(clues), max(seconds, 0.0))))
    return found


def integrity_population() -> rules.Population:
    """The population's accuracy and spread per bucket from the recent votes of players
    who are not held (a cheater's votes would make the bar easier for every cheater),
    starting from the release's prior (``scoring.integrity.fm2_prior``). Each suspect is
    then tested without their own votes (``population_without``)."""
    config = _config()
    votes = Vote.objects.exclude(round__player__integrity_hold__held=True)
    # From the N-th newest vote on (an id bound, not a list of N ids: SQLite caps parameters).
    oldest = votes.order_by("-id").values_list("id", flat=True)[config["POPULATION_VOTES"] - 1 : config["POPULATION_VOTES"]].first()
    by_player: dict[int, list[rules.VoteFact]] = defaultdict(list)
    first = last = None
    for row in _vote_rows(votes.filter(pk__gte=oldest or 0).order_by("id")):
        by_player[row.player].append(row.fact)
        first, last = row.id if first is None else first, row.id
    return rules.population_fit(
        by_player,
        vote_ids=(first, last) if first is not None else None,
        prior_votes=config["PRIOR_VOTES"],
        spread_default=config["SPREAD_DEFAULT"],
        spread_min=config["SPREAD_MIN"],
        spread_prior_pairs=config["SPREAD_PRIOR_PAIRS"],
    )


def integrity_population_cached() -> rules.Population:
    """:func:`integrity_population`, kept in the cache between per-vote checks."""
    population = cache.get(POPULATION_CACHE_KEY)
    if population is None:
        population = integrity_population()
        cache.set(POPULATION_CACHE_KEY, population, POPULATION_CACHE_SECONDS)
    return population


@dataclass(frozen=True)
class Verdict:
    """What the tests found for one player over the votes after ``since_vote``."""

    player_id: int
    since_vote: int
    through_vote: int
    tested_votes: int
    run: rules.RunEvidence | None
    follow: rules.FollowEvidence | None
    alpha: float
    rows: tuple[_VoteRow, ...] = ()

    @property
    def reasons(self) -> list[str]:
        found = []
        if self.run is not None and self.run.flagged(self.alpha):
            found.append(PlayerHold.Reason.IMPROBABLE.value)
        if self.follow is not None and self.follow.flagged(self.alpha):
            found.append(PlayerHold.Reason.FOLLOWS.value)
        return found

    @property
    def p_value(self) -> float:
        return min([e.p_value for e in (self.run, self.follow) if e is not None], default=1.0)


def _run_payload(run: rules.RunEvidence, rows: Sequence[_VoteRow]) -> dict[str, Any]:
    window = rows[run.start : run.end]
    seconds = sorted(row.fact.seconds for row in window)
    return {
        **run.as_dict(),
        "first_vote": window[0].id,
        "last_vote": window[-1].id,
        "from": window[0].cast.isoformat(),
        "to": window[-1].cast.isoformat(),
        "median_seconds": round(seconds[len(seconds) // 2], 1),
        "clues": sum(row.fact.clues for row in window),
    }


def _follow_payload(follow: rules.FollowEvidence, usernames: dict[int, str]) -> dict[str, Any]:
    return {
        "source_id": follow.source,
        "source": usernames.get(cast(int, follow.source), str(follow.source)),
        "votes": follow.votes,
        "right": follow.right,
        "expected": round(follow.expected, 2),
        "run_p_value": float(f"{follow.run_p_value:.3g}"),
        "sources": follow.sources,
        "p_value": float(f"{follow.p_value:.3g}"),
        "vote_ids": list(follow.vote_ids)[:PAIRS_SHOWN],
        "claims": list(follow.claims)[: 2 * PAIRS_SHOWN],
    }


def _give_ups(rows: Sequence[_VoteRow]) -> list[rules.GiveUp]:
    """Other accounts' give-ups of these votes' claims that ended within the follow window
    before the latest of them. The claims' list is padded to a power of two with ids no claim
    has (0, -1, ...: Django's ``in`` drops repeated values), so that few SQL texts are kept
    for it (``_values``)."""
    if not rows:
        return []
    claims = sorted({claim for row in rows for claim in row.claims})
    claims += [-n for n in range((1 << (len(claims) - 1).bit_length()) - len(claims))]
    window = timedelta(seconds=_config()["FOLLOW_WINDOW_SECONDS"])
    first, last = min(row.cast for row in rows) - window, max(row.cast for row in rows)
    states, player = given_up_states(), rows[0].player

    def found() -> QuerySet[Any]:
        return (
            Round.objects.filter(state__in=states)
            .filter(ended_at__gte=first)
            .filter(ended_at__lte=last)
            .filter(Q(left_claim_id__in=claims) | Q(right_claim_id__in=claims))
            .exclude(player_id=player)
            .values_list("player_id", "left_claim_id", "right_claim_id", "ended_at")
        )

    given_up = _values(f"integrity:give_ups:{len(states)}:{len(claims)}", found, [*states, first, last, *claims, *claims, player])
    return [rules.GiveUp(player, (left, right), ended.timestamp()) for player, left, right, ended in given_up]


def population_without(population: rules.Population, *, player_id: int, held: bool | None = None) -> rules.Population:
    """The population without this player's votes (those it was fitted on: within its vote
    ids, unless the player was held, whose votes it leaves out): a suspect is never
    measured against a bar their own votes set. ``held``: whether the player is held, when
    the caller read it (else one query). Reads only."""
    if population.vote_ids is None or population.options is None:
        return population
    if held is None:
        held = PlayerHold.objects.filter(player_id=player_id, held=True).exists()
    if held:
        return population
    first, last = population.vote_ids

    def own() -> QuerySet[Any]:
        return _vote_values(Vote.objects.filter(round__player_id=player_id).filter(pk__gte=first).filter(pk__lte=last))

    return population.excluding(row.fact for row in _as_vote_rows(_values("integrity:own_votes", own, [player_id, first, last])))


def integrity_test(*, player_id: int, since_vote: int, population: rules.Population, held: bool | None = None) -> Verdict:
    """Both tests over the player's votes after ``since_vote`` (the most recent
    ``SCAN_VOTES`` of them), against the population without the player's own votes.
    ``held``: as ``population_without``'s. Reads only."""
    config = _config()
    population = population_without(population, player_id=player_id, held=held)
    alpha = config["ALPHA"]
    scan = int(config["SCAN_VOTES"])

    def latest() -> QuerySet[Any]:
        return _vote_values(Vote.objects.filter(round__player_id=player_id).filter(pk__gt=since_vote)).order_by("-id")[:scan]

    rows = _as_vote_rows(_values(f"integrity:latest:{scan}", latest, [player_id, since_vote]))[::-1]
    run = rules.improbable_run([row.fact for row in rows], population, alpha=alpha)
    casts = [rules.CastVote(row.id, row.player, row.claims, row.cast.timestamp(), row.fact) for row in rows]
    followed = rules.follows(casts, _give_ups(rows), window_seconds=config["FOLLOW_WINDOW_SECONDS"])
    follow = rules.following_evidence(followed, population, alpha=alpha).get(player_id)
    return Verdict(player_id, since_vote, rows[-1].id if rows else since_vote, len(rows), run, follow, alpha, tuple(rows))


def _evidence(verdict: Verdict, population: rules.Population, rows_of: dict[str, Any]) -> dict[str, Any]:
    return {
        "alpha": verdict.alpha,
        "tested_votes": verdict.tested_votes,
        "since_vote": verdict.since_vote,
        "through_vote": verdict.through_vote,
        "population_votes": population.votes,
        "population_accuracy": round(population.overall, 4),
        **rows_of,
    }


def integrity_check(*, player_ids: Iterable[int], population: rules.Population | None = None) -> list[int]:
    """Test these players and hold those flagged (or refresh a hold's evidence). A confirmed
    hold is left as it is. Returns the ids of the players held by this call."""
    population = population or integrity_population()
    ids = sorted(set(player_ids))
    holds = {h.player_id: h for h in PlayerHold.objects.filter(player_id__in=ids)}
    newly_held = []
    for player_id in ids:
        hold = holds.get(player_id)
        if hold is not None and hold.status == PlayerHold.Status.CONFIRMED:
            continue
        since = hold.cleared_through_vote if hold is not None else 0
        verdict = integrity_test(player_id=player_id, since_vote=since, population=population, held=hold is not None and hold.held)
        if not verdict.reasons:
            continue
        if _hold_write(verdict, population):
            newly_held.append(player_id)
    return newly_held


def _hold_write(verdict: Verdict, population: rules.Population) -> bool:
    """Write a flagged verdict under the hold's lock; True when it newly holds the player."""
    users = get_user_model().objects
    rows_of: dict[str, Any] = {}
    if verdict.run is not None and verdict.run.flagged(verdict.alpha):
        rows_of["improbable"] = _run_payload(verdict.run, verdict.rows)
    if verdict.follow is not None and verdict.follow.flagged(verdict.alpha):
        source = cast(int, verdict.follow.source)
        names = dict(users.filter(pk=source).values_list("pk", "username"))
        rows_of["follows"] = _follow_payload(verdict.follow, names)
        rows_of["linked_accounts"] = [names.get(source, str(source))]
    evidence = _evidence(verdict, population, rows_of)
    now = timezone.now()
    with transaction.atomic():
        PlayerHold.objects.bulk_create(
            [
                PlayerHold(
                    player_id=verdict.player_id, status=PlayerHold.Status.HELD, held=True, reasons=verdict.reasons, evidence=evidence,
                    p_value=verdict.p_value, evidence_through_vote=verdict.through_vote, held_at=now,
                )
            ],
            ignore_conflicts=True,
        )
        hold = PlayerHold.objects.select_for_update().get(player_id=verdict.player_id)
        if hold.held_at == now:
            return True  # this call created it
        if hold.status == PlayerHold.Status.CONFIRMED or hold.cleared_through_vote != verdict.since_vote:
            return False  # a moderator acted since the test read the hold
        was_held = hold.held
        hold.status, hold.held, hold.reasons, hold.evidence = PlayerHold.Status.HELD, True, verdict.reasons, evidence
        hold.p_value, hold.evidence_through_vote = verdict.p_value, verdict.through_vote
        if not was_held:
            hold.held_at = now
        hold.save()
        return not was_held


def integrity_refresh_recent() -> int:
    """The periodic refresh: fit the population, cache it, and test every player who voted
    within ``RECENT_SECONDS``. Returns how many players it newly held."""
    population = integrity_population()
    cache.set(POPULATION_CACHE_KEY, population, POPULATION_CACHE_SECONDS)
    since = timezone.now() - timedelta(seconds=_config()["RECENT_SECONDS"])
    players = set(Vote.objects.filter(created__gte=since).values_list("round__player_id", flat=True).distinct())
    return len(integrity_check(player_ids=players, population=population))


def integrity_refresh_all() -> int:
    """Test every player who ever voted (the ``refresh_integrity`` command). Returns how many
    players it newly held."""
    population = integrity_population()
    cache.set(POPULATION_CACHE_KEY, population, POPULATION_CACHE_SECONDS)
    players = set(Vote.objects.values_list("round__player_id", flat=True).distinct())
    return len(integrity_check(player_ids=players, population=population))


VOTES_AFTER_REFRESH_SECONDS = 120
TESTED_CACHE_KEY = "fm2:integrity:tested:{player}:{joined}"
"""Through which vote a player's votes were last tested after votes: by the player's id and
the moment the account was made (ids start again with a new database, the cache may not)."""


def integrity_check_claim_voters(*, claim_ids: Sequence[int]) -> int:
    """After votes: test the players who voted on these claims in the last two minutes (the
    quality refresh that every vote sends carries the claim ids, batched), with the cached
    population; a player already tested through their latest of those votes is not tested
    again (``TESTED_CACHE_KEY``): a room's 20 votes on one pair came in a dozen batches, and
    each batch tested every member who had voted on it so far, 20 tests a vote, most of the
    worker's time on the rooms benchmark. The periodic refresh tests every recent voter
    whatever this says. Returns how many players it newly held."""
    since = timezone.now() - timedelta(seconds=VOTES_AFTER_REFRESH_SECONDS)
    latest = (
        Vote.objects.filter(created__gte=since)
        .filter(Q(round__left_claim_id__in=claim_ids) | Q(round__right_claim_id__in=claim_ids))
        .values("round__player_id", "round__player__date_joined")
        .annotate(latest=Max("id"))
        .values_list("round__player_id", "round__player__date_joined", "latest")
    )
    through = {TESTED_CACHE_KEY.format(player=player, joined=joined.timestamp()): (player, vote) for player, joined, vote in latest}
    if not through:
        return 0
    try:
        tested = cache.get_many(list(through))
    except Exception:  # noqa: BLE001 - without the cache, test them all (as the refresh would)
        tested = {}
    due = {key: vote for key, (player, vote) in through.items() if tested.get(key, 0) < vote}
    if not due:
        return 0
    held = integrity_check(player_ids=[through[key][0] for key in due], population=integrity_population_cached())
    try:
        cache.set_many(due, timeout=VOTES_AFTER_REFRESH_SECONDS)
    except Exception:  # noqa: BLE001 - they are tested again next time: no harm
        pass
    return len(held)


# --- moderators' actions ------------------------------------------------------------------------


ACTIONS = [a.value for a in PlayerAuditRecord.Action]


def _hold_snapshot(hold: PlayerHold) -> dict[str, Any]:
    return {
        "status": hold.status,
        "held": hold.held,
        "reasons": list(hold.reasons),
        "p_value": hold.p_value,
        "evidence_through_vote": hold.evidence_through_vote,
        "cleared_through_vote": hold.cleared_through_vote,
    }


def player_hold_moderate(*, moderator: AbstractBaseUser, player_id: int, action: Any, reason: Any) -> PlayerAuditRecord:
    """Clear or confirm a held player, audited, in one transaction.

    ``clear``: the player returns to the leaderboards and the ratings (votes cast while held
    stay unrated until a ratings refit), and the votes the evidence covers are never held
    against them again. ``confirm``: the hold stays for good (a moderator may still clear
    it later). Locking: the hold's row, as the refresh takes it."""
    if not is_moderator(moderator):
        raise ServiceError("not_a_moderator", "Only moderators can do this.", status_code=403)
    if action not in ACTIONS:
        raise ServiceError("invalid_action", f"action must be one of: {', '.join(ACTIONS)}.")
    if not isinstance(reason, str) or not reason.strip():
        raise ServiceError("reason_required", "Say why: the reason is recorded in the audit log.")
    if len(reason) > REASON_MAX_CHARS:
        raise ServiceError("reason_too_long", f"The reason is at most {REASON_MAX_CHARS} characters.")
    with transaction.atomic():
        hold = PlayerHold.objects.select_for_update().filter(player_id=player_id).first()
        if hold is None:
            raise ServiceError("hold_not_found", "This player is not held and never was.", status_code=404)
        before = _hold_snapshot(hold)
        if action == "clear":
            if hold.status == PlayerHold.Status.CLEARED:
                raise ServiceError("already_cleared", "This player was already cleared.", status_code=409)
            hold.status, hold.held = PlayerHold.Status.CLEARED, False
            hold.cleared_through_vote = max(hold.cleared_through_vote, hold.evidence_through_vote)
        else:
            if hold.status != PlayerHold.Status.HELD:
                raise ServiceError(
                    "hold_not_open", f"Only a held player can be confirmed; this one is {hold.status}.", status_code=409
                )
            hold.status = PlayerHold.Status.CONFIRMED
        hold.acted_by, hold.acted_at = moderator, timezone.now()
        hold.save()
        return PlayerAuditRecord.objects.create(
            moderator=moderator, player_id=player_id, action=action, reason=reason.strip(), before=before, after=_hold_snapshot(hold)
        )
