"""Skill ratings of players and difficulty ratings of claims, kept in the database.

The rules are :mod:`scoring.ratings`; this module reads and writes them. A vote updates its
voter's and its two claims' Glicko-2 ratings once, by the ``rate_votes`` task sent after the
vote's commit, batched with the other votes of half a second (a room's question sends its
votes in one): ``ratings_rate_votes`` rates a batch in one transaction, in vote order, reading
each rating row once and writing it once, so a batch costs the queries of one vote and ends
exactly where rating its votes one by one would. The vote's ``rated`` flag is set with the
update, so a redelivery, the ``rate_pending_votes`` sweep and a refit never count it twice;
``ratings_refit`` rebuilds every rating from the vote table in one batch (the ``refit_ratings`` command), either by a Rasch fit the per-vote updates then
go on from, or by replaying Glicko-2 over the votes in the order they were cast. Both are
deterministic: a refit run twice writes the same numbers.

A started round given up (forfeited) is rated as a wrong vote on its pair
(``scoring.ratings.forfeit_update``), by the same kind of batched task (``rate_forfeits``,
``ratings_rate_forfeits``: the round's ``forfeit_rated`` flag plays the vote's ``rated``) and
the same sweep; a refit replays votes and such forfeits in the order they happened. Votes
that pay nothing (``Vote.unpaid``: the voter had seen a claim as a moderator) rate nobody.
Timed-out, reported and voided rounds, and rounds given up before their start, are not
votes and rate nobody; the release's votes
have no voters to rate against, so a claim from the release is unrated (``rating`` NULL)
until the game's first vote on it, while its smoothed rate already counts them.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Avg, BooleanField, ExpressionWrapper, Model, Q, QuerySet, Value

from foolgame.claims.models import Claim
from foolgame.core import clock, hooks
from foolgame.players.models import PlayerRating
from foolgame.voting.models import Round, Vote
from scoring import ratings as r

Progress = Callable[[str, int, int], None]


def _settings() -> dict[str, Any]:
    return settings.FM2_RATINGS


def _update_options() -> dict[str, Any]:
    """Glicko-2's system constant and the most one vote moves a player (``PLAYER_MAX_STEP``):
    the per-vote updates and the ``glicko2`` refit use the same, so a refit writes what the
    votes wrote."""
    return {"tau": _settings()["TAU"], "max_step": _settings().get("PLAYER_MAX_STEP") or None}


def _held(prefix: str) -> Q:
    """The players (``prefix``: the path to them) held out of the ratings by a higher app
    (``hooks.play_rules``: moderation's improbable players); a ``Q`` that matches none without one."""
    held = hooks.play_rules.get().players_held(prefix=prefix)
    return held if held is not None else Q(pk__in=[])


def _off_boards(prefix: str) -> Q:
    """The players (``prefix``: the path to them) a higher app keeps off the public boards
    (``hooks.player_settings``: a study's participants); a ``Q`` that matches none without."""
    off = hooks.player_settings.get().players_off_boards(prefix=prefix)
    return off if off is not None else Q(pk__in=[])


def _held_flag(prefix: str) -> Any:
    """Whether the player (``prefix``: the path to them) is held, as an annotation."""
    held = hooks.play_rules.get().players_held(prefix=prefix)
    return ExpressionWrapper(held, output_field=BooleanField()) if held is not None else Value(False)


@dataclass(frozen=True, slots=True)
class _Waiting:
    """One ratings update waiting for its run: a vote's, or a forfeit's (a wrong vote)."""

    round_id: int
    player_id: int
    true_claim: int
    false_claim: int
    correct: bool
    held: bool

    @classmethod
    def of(cls, round_id: int, player_id: int, left: int, right: int, false_index: int | None, correct: bool, held: Any) -> _Waiting:
        true_claim, false_claim = (right, left) if false_index == 0 else (left, right)
        return cls(round_id, player_id, true_claim, false_claim, correct, bool(held))


def _claims_locked(left: QuerySet[Any], right: QuerySet[Any]) -> dict[int, r.Rating]:
    """Lock the claims that ``left`` and ``right`` (one-column querysets of claim ids) name,
    in id order and without key update, as ``claim_votes_lock`` does, and read their ratings,
    in one statement; an unrated claim (``rating`` NULL) reads as a newcomer's rating with its
    stored deviation and volatility."""
    rows = (
        Claim.objects.select_for_update(of=("self",), no_key=True)
        .filter(Q(pk__in=left) | Q(pk__in=right))
        .order_by("pk")
        .values_list("pk", "rating", "rating_deviation", "rating_volatility")
    )
    return {pk: r.Rating(rating if rating is not None else r.DEFAULT_RATING, deviation, volatility) for pk, rating, deviation, volatility in rows}


def _players_locked(player_ids: Iterable[int]) -> tuple[dict[int, r.Rating], dict[int, int]]:
    """These voters' ratings and rated votes, their rows locked in player order, a newcomer's
    row made first (should another run make it meanwhile, its row is the one kept and locked)."""
    wanted = sorted(set(player_ids))

    def locked(ids: list[int]) -> Any:
        return (
            PlayerRating.objects.select_for_update()
            .filter(player_id__in=ids)
            .order_by("player_id")
            .values_list("player_id", "rating", "deviation", "volatility", "votes")
        )

    rows = {pk: (r.Rating(rating, deviation, volatility), votes) for pk, rating, deviation, volatility, votes in locked(wanted)}
    missing = [pk for pk in wanted if pk not in rows]
    if missing:
        PlayerRating.objects.bulk_create([PlayerRating(player_id=pk) for pk in missing], ignore_conflicts=True)
        rows.update((pk, (r.Rating(rating, deviation, volatility), votes)) for pk, rating, deviation, volatility, votes in locked(missing))
    return {pk: rating for pk, (rating, _) in rows.items()}, {pk: votes for pk, (_, votes) in rows.items()}


def _rate(waiting: list[_Waiting], claims: dict[int, r.Rating], *, forfeit: bool) -> dict[int, tuple[float, float]]:
    """Apply these updates in the order given, each from the ratings the one before left: the
    players' and claims' ratings are read once (the claims' by the caller, under their locks),
    carried from one update to the next in memory, and written once, so the rows end exactly as
    one transaction per update would have left them. Held voters and updates whose claims the
    caller did not lock are skipped. Returns each rated round's voter rating before and after.
    Call in the caller's transaction, after the claims' and the waiting rows' locks."""
    rated = [w for w in waiting if not w.held and w.true_claim in claims and w.false_claim in claims]
    if not rated:
        return {}
    skills, rated_before = _players_locked(w.player_id for w in rated)
    counts: dict[int, int] = {}
    moved: set[int] = set()
    history: dict[int, tuple[float, float]] = {}
    options = _update_options()
    for w in rated:
        before = skills[w.player_id]
        if forfeit:
            voter, true_claim, false_claim = r.forfeit_update(before, claims[w.true_claim], claims[w.false_claim], **options)
        else:
            voter, true_claim, false_claim = r.round_update(before, claims[w.true_claim], claims[w.false_claim], w.correct, **options)
        skills[w.player_id], claims[w.true_claim], claims[w.false_claim] = voter, true_claim, false_claim
        counts[w.player_id] = counts.get(w.player_id, 0) + 1
        moved.update((w.true_claim, w.false_claim))
        history[w.round_id] = (before.rating, voter.rating)
    _update_rows(
        PlayerRating,
        ("rating", "deviation", "volatility", "votes"),
        [(pk, skills[pk].rating, skills[pk].deviation, skills[pk].volatility, votes + counts[pk]) for pk, votes in sorted(rated_before.items())],
        constants={"updated": clock.now()},
    )
    _update_claims([(pk, claims[pk].rating, claims[pk].deviation, claims[pk].volatility) for pk in sorted(moved)])
    return history


def _waiting_locked(unrated: QuerySet[Any], *, to_round: str, correct: str | None) -> tuple[dict[int, r.Rating], list[tuple[int, _Waiting]]]:
    """The updates ``unrated``'s rows wait for, each with its row's key, in key order: the
    claims their rounds name locked and read first (``_claims_locked``), then the rows
    themselves locked, their voters' hold read with them. ``to_round``: the path from a row
    to its round (``"round__"`` from a vote, ``""`` from a round); ``correct``: the row's field
    saying whether the vote was right, None for a forfeit (a wrong vote). Nothing is read or
    locked beyond the claims when none is left. Call in the caller's transaction."""
    claims = _claims_locked(unrated.values(f"{to_round}left_claim_id"), unrated.values(f"{to_round}right_claim_id"))
    if not claims:
        return {}, []
    path = ("id", "player_id", "left_claim_id", "right_claim_id", "false_claim_index")
    rows = (
        unrated.select_for_update(of=("self",))
        .annotate(voter_held=_held_flag(f"{to_round}player__"))
        .order_by("pk")
        .values_list("pk", *(to_round + name for name in path), *([correct] if correct else []), "voter_held")
    )
    return claims, [(row[0], _Waiting.of(*row[1:6], row[6] if correct else False, row[-1])) for row in rows]


def ratings_rate_votes(*, vote_ids: list[int]) -> int:
    """Rate these votes, each once, in vote order (their ids: the order they were cast), in one
    transaction: under their claims' locks (id order, no key update: ``claim_votes_lock``'s), then
    their rows' (a vote already rated, by a task delivered twice, the sweep or a refit, is left
    out: ``rated`` is set with the update), then their voters' rating rows. A statement or two
    for each table however many votes: a room's question rates its 20 votes in the queries one
    vote took. Returns how many this call rated."""
    ids = sorted(set(vote_ids))
    if not ids:
        return 0
    unrated = Vote.objects.filter(pk__in=ids, rated=False, unpaid="", settled=True)
    with transaction.atomic():
        claims, votes = _waiting_locked(unrated, to_round="round__", correct="correct")
        # A voter held as improbable (``hooks.play_rules``: moderation's) is out of the ratings until
        # a moderator clears them: their votes are marked done without moving anyone's rating.
        history = _rate([w for _, w in votes], claims, forfeit=False)
        done = [pk for pk, w in votes if w.held or w.round_id in history]
        if done:
            Vote.objects.filter(pk__in=done).update(rated=True)
        if history:
            _update_rows(Round, ("rating_before", "rating_after"), [(pk, *change) for pk, change in sorted(history.items())])
    return len(history)


def ratings_rate_vote(*, vote_id: int) -> bool:
    """``ratings_rate_votes`` for one vote: True when this call rated it."""
    return ratings_rate_votes(vote_ids=[vote_id]) == 1


def ratings_rate_forfeits(*, round_ids: list[int]) -> int:
    """Rate these forfeits (each a wrong vote on its pair), each once, in round order, as
    ``ratings_rate_votes`` does votes: the round's ``forfeit_rated`` flag plays the vote's
    ``rated``. Returns how many this call rated."""
    ids = sorted(set(round_ids))
    if not ids:
        return 0
    unrated = Round.objects.filter(pk__in=ids, state=Round.State.FORFEITED, forfeit_rated=False)
    with transaction.atomic():
        claims, rows = _waiting_locked(unrated, to_round="", correct=None)
        waiting = [w for _, w in rows]
        history = _rate(waiting, claims, forfeit=True)
        held = [w.round_id for w in waiting if w.held]  # out of the ratings while held, as their votes are
        if held:
            Round.objects.filter(pk__in=held).update(forfeit_rated=True)
        if history:
            _update_rows(
                Round, ("rating_before", "rating_after"), [(pk, *change) for pk, change in sorted(history.items())], constants={"forfeit_rated": True}
            )
    return len(history)


def ratings_rate_forfeit(*, round_id: int) -> bool:
    """``ratings_rate_forfeits`` for one round: True when this call rated it."""
    return ratings_rate_forfeits(round_ids=[round_id]) == 1


PENDING_AFTER_SECONDS = 30
PENDING_CHUNK = 1000


def ratings_rate_pending(*, limit: int = PENDING_CHUNK) -> int:
    """Rate the oldest votes and forfeits left unrated for ``PENDING_AFTER_SECONDS`` (their
    task was lost), in their order, at most ``limit`` of each; returns how many this call rated."""
    cutoff = clock.now() - timedelta(seconds=PENDING_AFTER_SECONDS)
    ids = list(Vote.objects.filter(rated=False, settled=True, created__lte=cutoff).order_by("id").values_list("id", flat=True)[:limit])
    forfeits = list(Round.objects.filter(forfeit_rated=False, ended_at__lte=cutoff).order_by("id").values_list("id", flat=True)[:limit])
    return ratings_rate_votes(vote_ids=ids) + ratings_rate_forfeits(round_ids=forfeits)


# --- reading ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Difficulty:
    """A claim's difficulty as moderators and researchers see it (1500 scale)."""

    rating: float
    deviation: float
    too_hard: bool
    reason: str

    def payload(self) -> dict[str, Any]:
        return {"rating": round(self.rating), "deviation": round(self.deviation), "too_hard": self.too_hard, "reason": self.reason}


def ratings_break_even() -> float | None:
    """The claim difficulty (logits) at which the average rated player, next to an average
    rated partner, is right half the time; None before the first vote. Two averages over
    the rating tables: read it once for a page of claims."""
    players = PlayerRating.objects.aggregate(mean=Avg("rating"))["mean"]
    claims = Claim.objects.filter(rating__isnull=False).aggregate(mean=Avg("rating"))["mean"]
    if players is None or claims is None:
        return None
    return (players - claims) / r.GLICKO_SCALE


def claim_difficulty(claim: Claim, *, break_even: float | None) -> Difficulty | None:
    """``claim``'s difficulty with its deviation, and whether the ratings call it too hard:
    the lower end of its 90% interval above break-even (``scoring.ratings.is_too_hard``).
    None for an unrated claim."""
    if claim.rating is None:
        return None
    rating = r.Rating(claim.rating, claim.rating_deviation, claim.rating_volatility)
    verdict = r.is_too_hard(rating.mu, rating.phi, break_even=break_even, z=_settings()["TOO_HARD_Z"]) if break_even is not None else None
    return Difficulty(claim.rating, claim.rating_deviation, bool(verdict and verdict.flagged), verdict.reason if verdict else "")


def skill_table(*, limit: int = 50) -> list[dict[str, Any]]:
    """Players ranked by skill: by the conservative rating ``rating - 2 * deviation``, so a
    lucky newcomer does not top it; only players with ``SKILL_MIN_VOTES`` rated votes, and
    never the system players, guests, held players nor players kept off the boards. Equal floors (to the point) share a rank."""
    rows = (
        PlayerRating.objects.filter(votes__gte=_settings()["SKILL_MIN_VOTES"])
        .exclude(player__username__in=settings.FM2["SYSTEM_PLAYERS"])
        .exclude(_held("player__"))  # held as improbable (``hooks.play_rules``: moderation's)
        .exclude(player__guest__isnull=False)  # guests, until claimed with a password
        .exclude(_off_boards("player__"))  # a study's participants (``hooks.player_settings``)
        .order_by("-floor", "player__username")
        .values_list("player__username", "rating", "deviation", "votes", "floor")[:limit]
    )
    table: list[dict[str, Any]] = []
    for position, (username, rating, deviation, votes, floor) in enumerate(rows, start=1):
        rank = table[-1]["rank"] if table and round(table[-1]["skill"]) == round(floor) else position
        table.append(
            {
                "rank": rank,
                "username": username,
                "skill": round(floor),
                "rating": round(rating),
                "deviation": round(deviation),
                "provisional": r.is_provisional(deviation),
                "votes": votes,
            }
        )
    return table


# --- the batch refit ------------------------------------------------------------------------


METHODS = ("rasch", "glicko2")


@dataclass
class RefitSummary:
    method: str
    votes: int
    players: int
    claims: int
    converged: bool = True


def _votes(progress: Progress, ids: list[int], forfeit_ids: list[int]) -> Iterator[Any]:
    """Every rated vote, and every started round given up (a wrong vote), as a
    ``scoring.ratings.RoundVote``, in the order they happened (time, then id); their ids are
    appended to ``ids`` and ``forfeit_ids``. Players held as improbable are left out."""
    votes = Vote.objects.filter(unpaid="", settled=True).exclude(_held("round__player__")).order_by("created", "id").values_list(
        "created", "id", "round__player_id", "round__left_claim_id", "round__right_claim_id", "round__false_claim_index", "correct"
    )
    forfeits = (
        Round.objects.filter(state=Round.State.FORFEITED, forfeit_rated__isnull=False)
        .exclude(_held("player__"))
        .order_by("ended_at", "id")
    ).values_list(
        "ended_at", "id", "player_id", "left_claim_id", "right_claim_id", "false_claim_index"
    )
    total = votes.count() + forfeits.count()
    progress("reading votes", 0, total)
    tagged_votes = ((row[0], 0, row) for row in votes.iterator(chunk_size=5000))
    tagged_forfeits = ((row[0], 1, (*row, False)) for row in forfeits.iterator(chunk_size=5000))
    merged = heapq.merge(tagged_votes, tagged_forfeits, key=lambda item: (item[0], item[2][1], item[1]))
    for done, (_, is_forfeit, (_, pk, player, left, right, false_index, correct)) in enumerate(merged, start=1):
        true_claim, false_claim = (right, left) if false_index == 0 else (left, right)
        (forfeit_ids if is_forfeit else ids).append(pk)
        yield r.RoundVote(player, true_claim, false_claim, correct)
        if done % 20000 == 0 or done == total:
            progress("reading votes", done, total)


def _chunks(items: list[Any], size: int) -> Iterable[list[Any]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def _update_rows(model: type[Model], columns: tuple[str, ...], rows: list[tuple[Any, ...]], *, constants: dict[str, Any] | None = None) -> None:
    """Set ``columns`` on the rows of ``model`` whose primary key is each row's first value, in
    one UPDATE ... FROM (VALUES ...): one statement for any number of rows, built without the
    ORM's per-row CASE expressions (``bulk_update`` spent more Python than the ratings' whole
    arithmetic). PostgreSQL and SQLite >= 3.33 both name a VALUES list's columns column1,
    column2... ``constants``: columns set to one value on every row, as their field stores it."""
    if not rows:
        return
    quote = connection.ops.quote_name
    table = quote(model._meta.db_table)
    sets = [f"{quote(model._meta.get_field(name).column)} = v.column{n}" for n, name in enumerate(columns, start=2)]
    params: list[Any] = []
    for name, value in (constants or {}).items():
        field = model._meta.get_field(name)
        sets.append(f"{quote(field.column)} = %s")
        params.append(field.get_db_prep_value(value, connection))
    row = "(" + ", ".join(["%s"] * (len(columns) + 1)) + ")"
    values = ", ".join([row] * len(rows))
    key = quote(model._meta.pk.column)
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {table} SET {', '.join(sets)} FROM (VALUES {values}) AS v WHERE {table}.{key} = v.column1",
            params + [x for row_ in rows for x in row_],
        )


def _update_claims(rows: list[tuple[int, float, float, float]]) -> None:
    """Set ``(id, rating, deviation, volatility)`` on these claims in one statement."""
    _update_rows(Claim, ("rating", "rating_deviation", "rating_volatility"), rows)


def ratings_refit(*, method: str = "rasch", progress: Progress | None = None, chunk: int = 1000) -> RefitSummary:
    """Rebuild every player's and claim's rating from the vote table.

    ``rasch``: fit ``scoring.ratings.fit_rasch`` to all votes and store it as the Glicko-2
    ratings the per-vote updates go on from (``RaschFit.as_glicko2``). ``glicko2``: replay
    the per-vote update over all votes, in the order they were cast, from newcomers' ratings:
    exactly what the votes wrote, had they all been rated as they came.

    Writes in chunks of ``chunk`` rows, each in its own short transaction, so votes go on
    meanwhile; a vote cast during the write phase on a row not yet written is overwritten
    (run it when the game is quiet, or accept that). Players and claims without a vote are
    reset to unrated. Running it twice writes the same numbers."""
    if method not in METHODS:
        raise ValueError(f"method must be one of {', '.join(METHODS)}, got {method!r}")
    report = progress or (lambda stage, done, total: None)
    vote_ids: list[int] = []
    forfeit_ids: list[int] = []
    votes = list(_votes(report, vote_ids, forfeit_ids))
    report("fitting", 0, len(votes))
    converged = True
    if method == "rasch" and votes:
        fit = r.fit_rasch(votes)
        converged = fit.converged
        result = fit.as_glicko2()
    else:
        result = r.glicko2_replay(votes, **_update_options())
    report("fitting", len(votes), len(votes))
    counts: dict[int, int] = {}
    for vote in votes:
        counts[vote.voter] = counts.get(vote.voter, 0) + 1

    claims = sorted(result.claims.items())
    total = len(claims) + len(result.players)
    report("writing", 0, total)
    unrated = sorted(set(Claim.objects.filter(rating__isnull=False).values_list("pk", flat=True)) - result.claims.keys())
    for part in _chunks(unrated, chunk):
        Claim.objects.filter(pk__in=part).update(rating=None, rating_deviation=r.DEFAULT_DEVIATION, rating_volatility=r.DEFAULT_VOLATILITY)
    done = 0
    for part in _chunks(claims, chunk):
        _update_claims([(pk, rating.rating, rating.deviation, rating.volatility) for pk, rating in part])
        done += len(part)
        report("writing", done, total)
    gone = sorted(set(PlayerRating.objects.values_list("player_id", flat=True)) - result.players.keys())
    for part in _chunks(gone, chunk):
        PlayerRating.objects.filter(player_id__in=part).delete()
    for part in _chunks(sorted(result.players.items()), chunk):
        PlayerRating.objects.bulk_create(
            [
                PlayerRating(player_id=pk, rating=rating.rating, deviation=rating.deviation, volatility=rating.volatility, votes=counts[pk])
                for pk, rating in part
            ],
            update_conflicts=True,
            unique_fields=["player"],
            update_fields=["rating", "deviation", "volatility", "votes", "updated"],
        )
        done += len(part)
        report("writing", done, total)
    # The votes read are in these ratings now: their rating tasks must not add them again.
    for part in _chunks(sorted(vote_ids), chunk):
        Vote.objects.filter(pk__in=part, rated=False).update(rated=True)
    for part in _chunks(sorted(forfeit_ids), chunk):
        Round.objects.filter(pk__in=part, forfeit_rated=False).update(forfeit_rated=True)
    return RefitSummary(method, len(votes), len(result.players), len(result.claims), converged)
