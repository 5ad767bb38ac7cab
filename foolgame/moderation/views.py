"""Browser pages for moderators: the queue (actions go through the REST API) and the audit log."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.csrf import ensure_csrf_cookie

from foolgame.claims.models import Claim
from foolgame.moderation import selectors
from foolgame.moderation.actions import sightings_record
from foolgame.moderation.models import AuditRecord
from foolgame.pages.models import Sentence
from foolgame.claims.selectors import category_list
from foolgame.players.roles import is_moderator, role_page
from foolgame.voting.models import Report

QUEUE_PAGE_SIZE = 50
REASON_NAMES = [("", "Any reason"), ("reports", "Reported"), ("too_hard", "Too hard"), ("too_easy", "Too easy")]


# 403 for everyone outside the moderators group, logged in or not.
moderators_only = role_page(is_moderator, "moderation/forbidden.html")


@moderators_only
@ensure_csrf_cookie
def queue(request: HttpRequest) -> HttpResponse:
    reason = request.GET.get("reason") or None
    if reason not in selectors.REASONS:
        reason = None
    category = request.GET.get("category") or None
    claims = selectors.moderation_queue(reason=reason, category=category)
    items = selectors.claim_reviews(claims[:QUEUE_PAGE_SIZE])
    sightings_record(moderator=request.user, claim_ids=[item["id"] for item in items])
    for item in items:
        for report in item["reports"]:
            report["reason_label"] = reason_label(report["reason"])
    context = {
        "items": items,
        "count": claims.count(),
        "page_size": QUEUE_PAGE_SIZE,
        "reason": reason or "",
        "category": category or "",
        "reasons": REASON_NAMES,
        "categories": category_list(),
        "threshold": settings.FM2_MODERATION["TOO_HARD_THRESHOLD"],
    }
    return render(request, "moderation/queue.html", context)


PLAYER_STATUSES = [("held", "Held"), ("confirmed", "Confirmed"), ("cleared", "Cleared")]


@moderators_only
@ensure_csrf_cookie
def players(request: HttpRequest) -> HttpResponse:
    """Players held as improbable, with their evidence (actions go through the REST API),
    and the last actions on players."""
    status = request.GET.get("status") or "held"
    if status not in dict(PLAYER_STATUSES):
        status = "held"
    holds = selectors.player_holds(status=status)
    context = {
        "items": selectors.player_hold_payloads(holds[:QUEUE_PAGE_SIZE]),
        "count": holds.count(),
        "page_size": QUEUE_PAGE_SIZE,
        "status": status,
        "statuses": PLAYER_STATUSES,
        "alpha": settings.FM2_INTEGRITY["ALPHA"],
        "records": list(selectors.player_audit_records()[:50]),
    }
    return render(request, "moderation/players.html", context)


@moderators_only
def audit_log(request: HttpRequest) -> HttpResponse:
    claim = request.GET.get("claim")
    records = list(selectors.audit_records(claim_id=int(claim) if claim and claim.isdigit() else None)[:200])
    sightings_record(moderator=request.user, claim_ids=[record.claim_id for record in records])
    return render(request, "moderation/audit.html", {"rows": audit_rows(records), "claim": claim or ""})


# --- the audit log in words ------------------------------------------------------------------


def reason_label(reason: str) -> str:
    """A report's reason as moderators read it ("Wrong label"), not its code."""
    return Report.Reason(reason).label if reason in Report.Reason.values else reason


def label_words(label: str | None) -> str:
    return Claim.Label(label).label if label in Claim.Label.values else (label or "none")


def _sentence_texts(ids: Iterable[int]) -> dict[int, str]:
    return dict(Sentence.objects.filter(pk__in=set(ids)).values_list("pk", "text"))


def _gold_texts(snapshot: dict[str, Any], texts: dict[int, str]) -> list[str]:
    """The gold sentences' texts as the snapshot saved them; a record written before the
    snapshots held texts has only ids, looked up now (a sentence deleted since shows its id)."""
    if snapshot.get("gold"):
        return list(snapshot["gold"])
    return [texts.get(pk, f"sentence {pk}") for pk in snapshot.get("gold_sentence_ids") or []]


def _changes(record: AuditRecord, texts: dict[int, str]) -> list[dict[str, Any]]:
    before, after = record.before or {}, record.after or {}
    changes: list[dict[str, Any]] = []
    if before.get("status") != after.get("status"):
        changes.append({"what": "status", "before": before.get("status"), "after": after.get("status")})
    if before.get("label") != after.get("label"):
        changes.append({"what": "label", "before": label_words(before.get("label")), "after": label_words(after.get("label"))})
    if before.get("gold_sentence_ids") != after.get("gold_sentence_ids"):
        changes.append({"what": "gold", "gold": True, "before": _gold_texts(before, texts), "after": _gold_texts(after, texts)})
    flags_before, flags_after = before.get("flags") or {}, after.get("flags") or {}
    if flags_before.get("out_of_play") != flags_after.get("out_of_play"):
        changes.append(
            {"what": "in play", "before": "no" if flags_before.get("out_of_play") else "yes", "after": "no" if flags_after.get("out_of_play") else "yes"}
        )
    if flags_before.get("kept") != flags_after.get("kept"):
        changes.append({"what": "kept", "before": "yes" if flags_before.get("kept") else "no", "after": "yes" if flags_after.get("kept") else "no"})
    return changes


def audit_rows(records: list[AuditRecord]) -> list[dict[str, Any]]:
    """Each record with its changes in words (gold as sentence texts, labels as words) and the
    reports filed against its claim up to the action, counted by reason in words."""
    ids = [
        pk
        for record in records
        for snapshot in (record.before or {}, record.after or {})
        if not snapshot.get("gold")
        for pk in snapshot.get("gold_sentence_ids") or []
    ]
    texts = _sentence_texts(ids)
    reports = list(Report.objects.filter(claim_id__in={r.claim_id for r in records}).values_list("claim_id", "reason", "created"))
    rows = []
    for record in records:
        counts = Counter(reason for claim_id, reason, created in reports if claim_id == record.claim_id and created <= record.created)
        rows.append(
            {
                "record": record,
                "changes": _changes(record, texts),
                "reports": [{"reason": reason_label(reason), "count": count} for reason, count in sorted(counts.items())],
            }
        )
    return rows
