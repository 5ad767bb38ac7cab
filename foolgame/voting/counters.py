"""Per-claim vote counters kept on the claim row, so that dealing never aggregates history.

``Claim.game_votes`` is the number of voted rounds that dealt the claim: the count that
``claims_for_player`` used to aggregate over the dealt rows at every deal. The vote adds to
it in its own transaction (``claim_votes_count``); the migration that made the column
filled it from the history (``claim_counters_backfill``), and the same function rebuilds it
whenever it is in doubt. Nothing else changes a voted round, so nothing else touches it.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from django.db.models import Count, F, Model

VOTED = "voted"  # Round.State.VOTED, spelled out so the migration can use this with its historical models


def claim_votes_lock(*, claim_ids: Iterable[int]) -> None:
    """Lock the claim rows a vote will count on (``select_for_update``, in id order), before
    the round's lock: a moderator's action locks its claim before the rounds it voids, so
    every writer takes claims first and no two wait on each other in opposite orders."""
    from foolgame.claims.models import Claim

    list(Claim.objects.select_for_update(of=("self",)).filter(pk__in=set(claim_ids)).order_by("pk").values_list("pk", flat=True))


def claim_refs_lock(*, claim_ids: Iterable[int]) -> None:
    """Before writing rows that refer to these claims (a deal's round and dealt rows): take
    the key-share locks the rows' foreign-key checks would take anyway, in id order. The
    checks take them in the order the rows name the claims (screen order), against votes
    that lock the same claims for update in id order: a deal and a vote deadlocked. Key
    share does not block other deals, only a writer that locks the claim for update (a vote,
    a moderator). SQLite serialises writers and has no row locks: nothing to do there."""
    from django.db import connection

    from foolgame.claims.models import Claim

    if connection.vendor != "postgresql":
        return
    table = connection.ops.quote_name(Claim._meta.db_table)
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT id FROM {table} WHERE id = ANY(%s) ORDER BY id FOR KEY SHARE", [sorted(set(claim_ids))])


def claim_votes_count(*, claim_ids: Iterable[int]) -> None:
    """One more vote for each claim, in one UPDATE. Call inside the vote's transaction,
    after ``claim_votes_lock``, which already holds the rows (so no lock order is at stake)."""
    from foolgame.claims.models import Claim

    Claim.objects.filter(pk__in=set(claim_ids)).update(game_votes=F("game_votes") + 1)


def claim_counters_backfill(*, claim_model: type[Model] | None = None, seen_model: type[Model] | None = None, chunk: int = 1000) -> int:
    """Set every claim's ``game_votes`` to the count of voted rounds that dealt it. One
    grouped read of the voted dealt rows, then one UPDATE per (count, chunk of ids): no
    correlated subquery per claim, so it runs in seconds on 100,000 claims. The migration
    passes its historical models; returns the claims with at least one vote."""
    if claim_model is None or seen_model is None:
        from foolgame.claims.models import Claim
        from foolgame.voting.models import SeenClaim

        claim_model, seen_model = claim_model or Claim, seen_model or SeenClaim
    counts = (
        seen_model._default_manager.filter(round__state=VOTED)
        .order_by()
        .values("claim_id")
        .annotate(n=Count("round_id", distinct=True))
        .values_list("claim_id", "n")
    )
    by_count: dict[int, list[int]] = defaultdict(list)
    for claim_id, n in counts.iterator(chunk_size=10000):
        by_count[n].append(claim_id)
    claims = claim_model._default_manager
    claims.exclude(game_votes=0).update(game_votes=0)
    for n, ids in by_count.items():
        for start in range(0, len(ids), chunk):
            claims.filter(pk__in=ids[start : start + chunk]).update(game_votes=n)
    return sum(len(ids) for ids in by_count.values())
