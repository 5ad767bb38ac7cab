"""Reads of the model in the loop: its versions, their rounds, the claims' verdicts."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.db.models import Avg, Count, F, Q, QuerySet

from foolgame.claims.models import Claim

from foolgame.verifier.models import ClaimVerdict, MachineAnswer, VerifierVersion, WrittenAgainst
from scoring.ratings import is_provisional


def versions() -> QuerySet[VerifierVersion]:
    return VerifierVersion.objects.defer("blob").order_by("number")


def skill_board_rows() -> list[dict[str, Any]]:
    """The rated versions for the skill board's models row, best first."""
    rows = VerifierVersion.objects.filter(rating__isnull=False).defer("blob").order_by("-rating")
    return [
        {
            "name": f"v{v.number} ({v.name})",
            "skill": round(v.rating - 2 * (v.rating_deviation or 0)),
            "rating": round(v.rating),
            "deviation": round(v.rating_deviation or 0),
            "provisional": is_provisional(v.rating_deviation or 0),
            "votes": v.answers,
            "active": v.status == VerifierVersion.Status.ACTIVE,
        }
        for v in rows
    ]


def collection_rounds(*, claim_ids: Iterable[int] | None = None) -> list[dict[str, Any]]:
    """ANLI's round table: per version, the claims written against it, its error rate on them
    at the save (the verdict against the author's label), its verified error rate (wrong, and
    people confirmed the label), and the tries a claim took. ``claim_ids`` limits it to these
    claims (an export's)."""
    from foolgame.verifier.services import confirmed_by_people  # the rule lives with the payments

    written = WrittenAgainst.objects.exclude(label="")
    if claim_ids is not None:
        written = written.filter(claim_id__in=list(claim_ids))
    confirmed = Q(claim__in=Claim.objects.filter(confirmed_by_people()).values("pk"))
    wrong = ~Q(label=F("claim__label"))
    counts = {
        row["version"]: row
        for row in written.values("version").annotate(
            claims=Count("pk"),
            wrong=Count("pk", filter=wrong),
            verified=Count("pk", filter=confirmed),
            wrong_verified=Count("pk", filter=wrong & confirmed),
            tries=Avg("tries"),
        )
    }
    table = []
    for version in versions():
        row = counts.get(version.pk)
        total = row["claims"] if row else 0
        if not total and version.status != VerifierVersion.Status.ACTIVE:
            continue
        table.append(
            {
                "version": version.number,
                "name": version.name,
                "status": version.status,
                "claims": total,
                "model_error_rate": row["wrong"] / total if total else None,
                "verified_claims": row["verified"] if row else 0,
                "verified_model_error_rate": row["wrong_verified"] / total if total else None,
                "tries_per_claim": round(row["tries"], 3) if row and row["tries"] is not None else None,
                "slice": version.figures.get("slice"),
            }
        )
    return table


def verdicts_by_claim(*, claim_ids: Iterable[int]) -> dict[int, dict[str, dict[str, Any]]]:
    """Each claim's verdict of each version that judged it: ``{claim: {"v3": {label, supports}}}``."""
    out: dict[int, dict[str, dict[str, Any]]] = {}
    rows = ClaimVerdict.objects.filter(claim_id__in=list(claim_ids)).values_list("claim_id", "version__number", "label", "supports")
    for claim_id, number, label, supports in rows.order_by("claim_id", "version__number"):
        out.setdefault(claim_id, {})[f"v{number}"] = {"label": label, "supports": round(supports, 4)}
    return out


def written_by_claim(*, claim_ids: Iterable[int]) -> dict[int, dict[str, Any]]:
    """Each claim's version written against, its save-time label and tries."""
    rows = WrittenAgainst.objects.filter(claim_id__in=list(claim_ids)).values_list("claim_id", "version__number", "label", "tries", "claim__label")
    return {pk: {"version": number, "label": label or None, "tries": tries, "fooled": (label != claim_label) if label else None} for pk, number, label, tries, claim_label in rows}


def answers_count() -> int:
    return MachineAnswer.objects.aggregate(n=Count("pk"))["n"]
