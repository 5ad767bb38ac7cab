"""Reads for moderation: the queue, one claim as a moderator sees it, the audit log."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.conf import settings
from django.db.models import Count, Prefetch, Q, QuerySet

from foolgame.claims.models import Claim, ClaimGold
from foolgame.moderation.models import AuditRecord, ClaimQuality, PlayerAuditRecord, PlayerHold
from foolgame.voting.models import Report
from foolgame.voting.ratings import claim_difficulty, ratings_break_even

REASONS = ("reports", "too_hard", "too_easy", "disputed")

_OPEN_REPORTS = Q(quality__open_reports__gt=0)
_TOO_HARD = Q(quality__too_hard=True, quality__kept=False)
_TOO_EASY = Q(quality__too_easy=True, quality__kept=False)
_DISPUTED = Q(quality__disputed=True)
_BY_REASON = {"reports": _OPEN_REPORTS, "too_hard": _TOO_HARD, "too_easy": _TOO_EASY, "disputed": _DISPUTED}


def _with_review_data(claims: QuerySet[Claim]) -> QuerySet[Claim]:
    return claims.select_related("page__category", "author", "quality").prefetch_related(
        Prefetch("gold_links", queryset=ClaimGold.objects.select_related("sentence").order_by("position")),
        Prefetch("reports", queryset=Report.objects.select_related("reporter").order_by("id")),
    )


def moderation_queue(*, reason: str | None = None, category: str | None = None) -> QuerySet[Claim]:
    """Active claims that need a moderator: reported since their last review, or flagged by
    a filter and not kept. Reported claims first (most reporters first), then by distance
    below the too-hard threshold (lowest score first), so too-easy claims come last."""
    claims = Claim.objects.filter(status=Claim.Status.ACTIVE).filter(_BY_REASON[reason] if reason else _OPEN_REPORTS | _TOO_HARD | _TOO_EASY | _DISPUTED)
    if category:
        claims = claims.filter(Q(page__category__slug=category) | Q(page__category__name__iexact=category))
    return _with_review_data(claims).order_by("-quality__open_reports", "quality__score", "id")


def claim_for_review(*, claim_id: int) -> Claim:
    return _with_review_data(Claim.objects.all()).get(pk=claim_id)


def audit_records(*, claim_id: int | None = None) -> QuerySet[AuditRecord]:
    records = AuditRecord.objects.select_related("moderator", "claim")
    return records.filter(claim_id=claim_id) if claim_id is not None else records


def _why(quality: ClaimQuality | None) -> list[str]:
    if quality is None:
        return []
    why = []
    if quality.open_reports:
        why.append("reports")
    if quality.too_hard and not quality.kept:
        why.append("too_hard")
    if quality.too_easy and not quality.kept:
        why.append("too_easy")
    if quality.disputed:
        why.append("disputed")
    return why


def claim_review(claim: Claim, *, break_even: float | None = None) -> dict[str, Any]:
    """A claim as the queue shows it: why it is there, its votes, its smoothed rate and
    interval, its difficulty rating and deviation (foolgame.voting.ratings; with the
    ratings' ``break_even``, from ``claim_reviews``, whether they call it too hard), its
    reports (those since the last review are ``open``), gold and clues."""
    quality: ClaimQuality | None = getattr(claim, "quality", None)
    reviewed_until = quality.reviewed_report_id if quality else 0
    reports = [
        {
            "id": r.pk,
            "reporter": r.reporter.username,
            "reason": r.reason,
            "note": r.note,
            "created": r.created.isoformat(),
            "open": r.pk > reviewed_until,
            "counts_for_hiding": r.counts_for_hiding,
        }
        for r in claim.reports.all()
    ]
    why = _why(quality)
    reasons = []
    if quality and quality.open_reports:
        reasons.append(f"reported by {quality.open_reports} player{'s' if quality.open_reports != 1 else ''} since the last review")
    if quality and not quality.kept:
        reasons += list(quality.reasons)
    if quality and quality.disputed:
        gold = quality.validation.get("gold_label")
        reasons.append(f"disputed: its checkers' gold label is {gold}, its author's {claim.label}")
    category = claim.page.category
    return {
        "id": claim.pk,
        "text": claim.text,
        "label": claim.label,
        "status": claim.status,
        "removed_reason": claim.removed_reason,
        "page": {"id": claim.page_id, "title": claim.page.title, "category": category.name if category else None},
        "author": claim.author.username,
        "why": why,
        "reasons": reasons,
        "votes": {
            "total": quality.total_votes if quality else claim.release_total_votes,
            "correct": quality.correct_votes if quality else claim.release_correct_votes,
            "release_total": claim.release_total_votes,
            "release_correct": claim.release_correct_votes,
            "game": quality.game_votes if quality else 0,
        },
        "score": round(quality.score, 4) if quality else None,
        "interval": [round(quality.interval_low, 4), round(quality.interval_high, 4)] if quality else None,
        "threshold": settings.FM2_MODERATION["TOO_HARD_THRESHOLD"],
        "difficulty": difficulty.payload() if (difficulty := claim_difficulty(claim, break_even=break_even)) else None,
        "prior": {"a": round(quality.prior_a, 4), "b": round(quality.prior_b, 4)} if quality else None,
        "flags": {
            "too_hard": bool(quality and quality.too_hard),
            "too_easy": bool(quality and quality.too_easy),
            "kept": bool(quality and quality.kept),
            "hidden_until_review": bool(quality and quality.hidden_until_review),
            "out_of_play": claim.status == Claim.Status.REMOVED or bool(quality and quality.out_of_play),
            "disputed": bool(quality and quality.disputed),
        },
        "validation": (quality.validation or None) if quality else None,
        "report_count": quality.report_count if quality else len(reports),
        "open_reports": quality.open_reports if quality else len(reports),
        "reports": reports,
        "gold": [
            {"sentence_id": g.sentence_id, "text": g.sentence.text, "section_header": g.sentence.section_header}
            for g in claim.gold_links.all()
        ],
        "clues": [
            {"sentence_id": c.get("sentence_id"), "text": c.get("text", ""), "section_header": c.get("section_header", "")}
            for c in claim.clues
        ],
    }


def claim_reviews(claims: Iterable[Claim]) -> list[dict[str, Any]]:
    """``claim_review`` for a page of claims, reading the ratings' break-even once."""
    break_even = ratings_break_even()
    return [claim_review(claim, break_even=break_even) for claim in claims]


def audit_record_payload(record: AuditRecord) -> dict[str, Any]:
    return {
        "id": record.pk,
        "claim": record.claim_id,
        "moderator": record.moderator.username,
        "action": record.action,
        "reason": record.reason,
        "before": record.before,
        "after": record.after,
        "created": record.created.isoformat(),
    }


# --- held players ---------------------------------------------------------------------------


def player_holds(*, status: str | None = None) -> QuerySet[PlayerHold]:
    """Holds (of one status), the most improbable first."""
    holds = PlayerHold.objects.select_related("player", "acted_by").annotate(votes=Count("player__rounds__vote"))
    return (holds.filter(status=status) if status else holds).order_by("p_value", "id")


def player_hold_payloads(holds: Iterable[PlayerHold]) -> list[dict[str, Any]]:
    return [
        {
            "id": hold.player_id,
            "username": hold.player.username,
            "status": hold.status,
            "held": hold.held,
            "reasons": list(hold.reasons),
            "reasons_text": [PlayerHold.Reason(r).label if r in PlayerHold.Reason.values else r for r in hold.reasons],
            "p_value": hold.p_value,
            "evidence": hold.evidence,
            "held_at": hold.held_at.isoformat(),
            "acted_by": hold.acted_by.username if hold.acted_by else None,
            "acted_at": hold.acted_at.isoformat() if hold.acted_at else None,
            "votes": getattr(hold, "votes", 0),
        }
        for hold in holds
    ]


def player_audit_records(*, player_id: int | None = None) -> QuerySet[PlayerAuditRecord]:
    records = PlayerAuditRecord.objects.select_related("moderator", "player")
    return records.filter(player_id=player_id) if player_id is not None else records


def player_audit_record_payload(record: PlayerAuditRecord) -> dict[str, Any]:
    return {
        "id": record.pk,
        "player": record.player.username,
        "moderator": record.moderator.username,
        "action": record.action,
        "reason": record.reason,
        "before": record.before,
        "after": record.after,
        "created": record.created.isoformat(),
    }
