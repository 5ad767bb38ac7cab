"""Per-claim vote counters kept on the claim row, so that dealing never aggregates history.

``Claim.game_votes`` is the number of voted rounds that dealt the claim: the count that
``claims_for_player`` used to aggregate over the dealt rows at every deal. Voting keeps it
itself: it is *recounted* for the claims of each vote by the task every vote sends after its
commit (batched: ``tasks.recount_claim_votes``, ``claim_votes_refresh``, under the claims'
locks), and for every claim by the hourly beat job ``recount-claim-votes``
(``claim_votes_refresh_all``); the migration that made the column filled it from the history
(``claim_counters_backfill``). A recount is exact whatever order the recounts run in, so the
counter may lag a vote by the batch's half second but never drifts.

The vote itself no longer writes the claim rows: it takes them *key share*, as a deal does
(``claim_refs_lock``; a vote in the statement that reads and locks its round:
``round_claims_key_share``), so the room's twenty votes on one pair do not queue
on the pair's rows (they did, up to 100 ms each, when the vote counted in its own
transaction). A moderator's lock (``FOR UPDATE``) still waits for the votes in flight and
holds off new ones, and the ratings and quality refreshes, which write the claim rows, take
``FOR NO KEY UPDATE`` (``claim_votes_lock``), which waits for neither.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from typing import Any

from django.db.models import Count, Model

VOTED = "voted"  # Round.State.VOTED, spelled out so the migration can use this with its historical models
COUNT_CHUNK = 1000  # claim ids per UPDATE when counters are written


def claim_votes_lock(*, claim_ids: Iterable[int]) -> list[int]:
    """Lock claim rows to write their vote-derived columns (ratings, counters), in id order:
    ``FOR NO KEY UPDATE``, which waits for another writer and for a moderator but not for
    the key-share locks of votes and deals in flight. Returns the ids that exist."""
    from foolgame.claims.models import Claim

    claims = Claim.objects.select_for_update(of=("self",), no_key=True).filter(pk__in=set(claim_ids)).order_by("pk")
    return list(claims.values_list("pk", flat=True))


def claim_refs_lock(*, claim_ids: Iterable[int]) -> None:
    """Before writing rows that refer to these claims (a deal's round and dealt rows, a
    vote's ledger rows): take the key-share locks the rows' foreign-key checks would take
    anyway, in id order and before any round's lock. The checks take them in the order the
    rows name the claims (screen order), against a moderator who locks a claim for update
    before the rounds it voids: taking them first, in id order, keeps one order. Key share
    blocks no other deal or vote, only a moderator's ``FOR UPDATE``. SQLite serialises
    writers and has no row locks: nothing to do there."""
    _claims_key_share("id = ANY(%s)", [sorted(set(claim_ids))])


def round_claims_key_share(sql: str) -> str:
    """A round's read locked as a vote locks it, in one statement: the SQL of a round query
    made with ``select_for_update(of=("left_claim", "right_claim", "self"))`` (Django says one
    lock strength per query: ``FOR UPDATE OF <left claim>, <right claim>, <round>``), rewritten
    to take the pair's rows key share and the round's for update: ``FOR KEY SHARE OF <left
    claim>, <right claim> FOR UPDATE OF <round>``. PostgreSQL takes a statement's row locks in
    the order its locking clauses name the tables, so the claims come before the round, as a
    deal and a moderator take them; the pair in screen order, which cannot deadlock: key-share
    locks do not conflict with one another, and the only claim lock that conflicts with them,
    a moderator's ``FOR UPDATE``, is taken on one claim per transaction. SQL without row locks
    (SQLite's) is returned as it is."""
    from django.db import connection

    from foolgame.voting.models import Round

    head, found, tail = sql.rpartition(" FOR UPDATE OF ")
    if not found:
        return sql
    *claims, own = tail.split(", ")
    if len(claims) != 2 or own != connection.ops.quote_name(Round._meta.db_table):
        raise ValueError(f"not a round read locked with its two claims: FOR UPDATE OF {tail}")
    return f"{head} FOR KEY SHARE OF {', '.join(claims)} FOR UPDATE OF {own}"


def _claims_key_share(where: str, params: list[Any]) -> None:
    """Key-share lock the claim rows ``where`` names, in id order (PostgreSQL only)."""
    from django.db import connection

    from foolgame.claims.models import Claim

    if connection.vendor != "postgresql":
        return
    table = connection.ops.quote_name(Claim._meta.db_table)
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT id FROM {table} WHERE {where} ORDER BY id FOR KEY SHARE", params)


def _voted_rounds_per_claim(seen_model: type[Model], claim_ids: list[int] | None = None) -> Any:
    """(claim id, voted rounds that dealt it) for every claim with one, or for these claims."""
    seen = seen_model._default_manager.filter(round__state=VOTED)
    if claim_ids is not None:
        seen = seen.filter(claim_id__in=claim_ids)
    return seen.order_by().values("claim_id").annotate(n=Count("round_id", distinct=True)).values_list("claim_id", "n")


def _write_counts(claims: Any, by_count: dict[int, list[int]], chunk: int) -> None:
    """One UPDATE per (count, chunk of claim ids)."""
    for n, ids in by_count.items():
        for start in range(0, len(ids), chunk):
            claims.filter(pk__in=ids[start : start + chunk]).update(game_votes=n)


def claim_votes_recount(*, claim_ids: Iterable[int]) -> int:
    """Set these claims' ``game_votes`` to their count of voted rounds (the backfill's
    aggregate, for these claims only), writing only the ones that differ; returns how many
    changed. Call with the claims' rows locked (``claim_votes_lock``: ``claim_votes_refresh``),
    so two recounts of one claim run one after the other and the later one reads every vote
    committed before it."""
    from foolgame.claims.models import Claim
    from foolgame.voting.models import SeenClaim

    ids = sorted(set(claim_ids))
    counts = dict(_voted_rounds_per_claim(SeenClaim, ids))
    by_count: dict[int, list[int]] = defaultdict(list)
    for pk, stored in Claim.objects.filter(pk__in=ids).values_list("pk", "game_votes"):
        if counts.get(pk, 0) != stored:
            by_count[counts.get(pk, 0)].append(pk)
    _write_counts(Claim.objects, by_count, COUNT_CHUNK)
    return sum(len(pks) for pks in by_count.values())


def claim_votes_refresh(*, claim_ids: Iterable[int]) -> int:
    """Recount these claims' ``game_votes`` under their locks (``claim_votes_lock``, in id
    order, in a transaction of its own): the per-vote task. Idempotent; returns how many
    counters changed."""
    from django.db import transaction

    with transaction.atomic():
        ids = claim_votes_lock(claim_ids=claim_ids)
        return claim_votes_recount(claim_ids=ids) if ids else 0


def claim_votes_refresh_all(*, chunk: int = COUNT_CHUNK) -> int:
    """``claim_votes_refresh`` over every claim, one chunk of ids per transaction, so votes
    are never held up for long (the hourly beat job: it sets any counter a lost task left
    behind). Returns how many counters changed."""
    from foolgame.claims.models import Claim

    ids = list(Claim.objects.order_by("pk").values_list("pk", flat=True))
    return sum(claim_votes_refresh(claim_ids=ids[start : start + chunk]) for start in range(0, len(ids), chunk))


def claim_counters_backfill(*, claim_model: type[Model] | None = None, seen_model: type[Model] | None = None, chunk: int = COUNT_CHUNK) -> int:
    """Set every claim's ``game_votes`` to the count of voted rounds that dealt it. One
    grouped read of the voted dealt rows, then one UPDATE per (count, chunk of ids): no
    correlated subquery per claim, so it runs in seconds on 100,000 claims. The migration
    passes its historical models; returns the claims with at least one vote."""
    if claim_model is None or seen_model is None:
        from foolgame.claims.models import Claim
        from foolgame.voting.models import SeenClaim

        claim_model, seen_model = claim_model or Claim, seen_model or SeenClaim
    by_count: dict[int, list[int]] = defaultdict(list)
    for claim_id, n in _voted_rounds_per_claim(seen_model).iterator(chunk_size=10000):
        by_count[n].append(claim_id)
    claims = claim_model._default_manager
    claims.exclude(game_votes=0).update(game_votes=0)
    _write_counts(claims, by_count, chunk)
    return sum(len(ids) for ids in by_count.values())
