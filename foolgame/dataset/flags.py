"""The ``flags`` of exported claims: what moderation and players said about them.

Kept in one small function so that it can follow the moderation app as it grows. It reads
the claim's status (``removed``, seen only with ``--include-removed``), the players'
reports (``reported:<reason>``) and moderation's quality row: ``too_hard`` and ``too_easy``
(the filters of docs/rules.md), ``kept`` (a moderator reviewed the claim and kept it) and
``hidden_until_review`` (reported by enough players). Dataset stands above moderation
(``tests/test_layers.py``), so it reads moderation's models as it reads voting's.
"""

from __future__ import annotations

from collections.abc import Iterable

from foolgame.moderation.models import ClaimQuality
from foolgame.voting.models import Report


def id_lookup(column: str, ids: list[int], id_range: tuple[int, int] | None) -> dict[str, object]:
    """Filter keywords for a chunk of rows: an id range when the chunk is in id order (far
    cheaper to build and run than a long ``IN`` list), else ``IN``."""
    if id_range:
        return {f"{column}__gte": id_range[0], f"{column}__lte": id_range[1]}
    return {f"{column}__in": ids}


QUALITY_FLAGS = ("too_hard", "too_easy", "kept", "hidden_until_review")


def claim_flags(claims: Iterable[tuple[int, str]], *, id_range: tuple[int, int] | None = None) -> dict[int, list[str]]:
    """``(claim id, status)`` pairs -> each claim's sorted flags (every id is a key).

    ``id_range`` (lowest, highest id), when the ids are a chunk in id order, filters by
    range rather than by a long ``IN`` list (much cheaper to build and to run).
    """
    flags: dict[int, set[str]] = {}
    for claim_id, status in claims:
        flags[claim_id] = {"removed"} if status == "removed" else set()
    lookup = id_lookup("claim_id", list(flags), id_range)
    for claim_id, reason in Report.objects.filter(**lookup).order_by().values_list("claim_id", "reason").distinct():
        if claim_id in flags:
            flags[claim_id].add(f"reported:{reason}")
    for row in ClaimQuality.objects.filter(**lookup).order_by().values("claim_id", *QUALITY_FLAGS):
        if row["claim_id"] in flags:
            flags[row["claim_id"]].update(name for name in QUALITY_FLAGS if row[name])
    return {claim_id: sorted(values) for claim_id, values in flags.items()}
