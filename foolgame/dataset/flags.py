"""The ``flags`` of exported claims: what moderation and players said about them.

Kept in one small function so that it can follow the moderation app as it grows: today it
reads the claim's status (``removed``, only seen with ``--include-removed``), the players'
reports (``reported:<reason>``) and, when the moderation app is installed and offers
``foolgame.moderation.selectors.claim_flags_for_export(claim_ids)`` (-> ``{claim_id:
[flag, ...]}``, e.g. ``too_hard``, ``too_easy``), its open flags.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from django.apps import apps

from foolgame.voting.models import Report


def _moderation_flags() -> Callable[[Sequence[int]], dict[int, list[str]]] | None:
    if not apps.is_installed("foolgame.moderation"):
        return None
    try:
        from foolgame.moderation.selectors import claim_flags_for_export  # type: ignore[import-not-found]
    except ImportError:
        return None
    return claim_flags_for_export


def claim_flags(claims: Iterable[tuple[int, str]]) -> dict[int, list[str]]:
    """``(claim id, status)`` pairs -> each claim's sorted flags (every id is a key)."""
    flags: dict[int, set[str]] = {}
    for claim_id, status in claims:
        flags[claim_id] = {"removed"} if status == "removed" else set()
    ids = list(flags)
    for claim_id, reason in Report.objects.filter(claim_id__in=ids).values_list("claim_id", "reason").distinct():
        flags[claim_id].add(f"reported:{reason}")
    moderation = _moderation_flags()
    if moderation is not None:
        for claim_id, more in moderation(ids).items():
            if claim_id in flags:
                flags[claim_id].update(more)
    return {claim_id: sorted(values) for claim_id, values in flags.items()}
